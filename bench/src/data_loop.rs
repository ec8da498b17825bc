//! (d, g) A data-dependent loop of `steps` steps, where the device decides whether to go on:
//!
//! - (d) host sync: launch one step, copy the "go on" flag back to pinned memory, wait, read
//!   it, launch the next (Rust: `Kernel::launch`, `copy_to_pinned_async`,
//!   `PinnedBuffer::as_slice`; C++: `cudaLaunchKernel`, `cudaMemcpyAsync`,
//!   `cudaStreamSynchronize`);
//! - (d) host sync, mapped flag: the same step writes the flag straight into mapped host
//!   memory; launch it, wait for the stream, read the flag in place, no copy (Rust:
//!   `Kernel::launch`, `Stream::synchronize`, `MappedBuffer::load`; C++: `cudaLaunchKernel`,
//!   `cudaStreamSynchronize`, a volatile read of `cudaHostAlloc(…, cudaHostAllocMapped)`
//!   memory);
//! - (d) WHILE node: one graph launch whose WHILE node runs a one-kernel body that increments
//!   the counter and sets the condition with `cudaGraphSetConditional`;
//! - (g) device self-relaunch: one host launch of a device-launch graph of one kernel that
//!   increments the counter and, while it is below `steps`, tail-relaunches its own graph
//!   (Rust: `device_launch::Launcher` around a kernel using `DL_RELAUNCH_SELF`; C++:
//!   `cudaGraphInstantiateWithFlags(..., cudaGraphInstantiateFlagDeviceLaunch)` and
//!   `cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch)`, its result
//!   checked).
//!
//! All between two events, µs per step; the counter must equal `steps`, and no device-side
//! relaunch may have been refused (error slot, error word).

use cuda_graph::graph::{GraphExec, HostLaunch};
use cuda_graph::{DevicePtr, Graph, LaunchConfig, Stream};
use device_launch::{Launcher, RawErrorSlot};

use crate::device_launch_width::{rust_made_first, Rotation, INSTANCES};
use crate::error::{expect_count, BenchError, Result};
use crate::harness::{interleave, Plan, Row, RustSide};
use crate::kernels::{bench_dl_relaunch_step, bench_host_step, bench_while_step};
use crate::twin::{Twin, TwinLoop};

/// The host-driven row's name.
pub const HOST_SYNC: &str = cuda_graph_bench_report::operations::LOOP_HOST_SYNC;
/// The host-driven row's name when the flag is read from mapped host memory.
pub const HOST_SYNC_MAPPED: &str = cuda_graph_bench_report::operations::LOOP_HOST_SYNC_MAPPED;
/// The WHILE row's name.
pub const WHILE_NODE: &str = cuda_graph_bench_report::operations::LOOP_WHILE_NODE;
/// The device self-relaunch row's name.
pub const SELF_RELAUNCH: &str = cuda_graph_bench_report::operations::LOOP_SELF_RELAUNCH;

/// The Rust WHILE graph: one WHILE node (condition 1 at each launch) whose body is one
/// `bench_while_step(handle, counter, steps)` node.
fn build_while(rust: &RustSide, steps: u32) -> Result<Graph> {
    let graph = Graph::new()?;
    let handle = graph.conditional_handle(Some(1))?;
    let (_node, body) = graph.add_while(&handle, &[])?;
    body.add_kernel(bench_while_step(), LaunchConfig::new(1, 1), (handle, rust.counter.ptr(), steps), &[])?;
    Ok(graph)
}

/// One sample of the Rust host-driven loop, the flag copied back or (`mapped`) read in place
/// from mapped host memory: µs per step.
fn rust_host_loop(rust: &mut RustSide, steps: u32, mapped: bool) -> Result<f64> {
    let (config, name) = (LaunchConfig::new(1, 1), if mapped { HOST_SYNC_MAPPED } else { HOST_SYNC });
    rust.begin_sample()?;
    let mut done = 0u32;
    loop {
        let go_on = if mapped {
            let args = (rust.counter.ptr(), steps, rust.keep_going_mapped.ptr());
            bench_host_step().launch(&rust.stream, config, args)?;
            rust.stream.synchronize()?;
            rust.keep_going_mapped.load(0)
        } else {
            bench_host_step().launch(
                &rust.stream,
                config,
                (rust.counter.ptr(), steps, rust.keep_going.ptr()),
            )?;
            rust.keep_going.copy_to_pinned_async(&mut rust.keep_going_host, &rust.stream)?;
            rust.keep_going_host.as_slice()?[0]
        };
        done += 1;
        if go_on == 0 {
            break;
        }
        if done > steps {
            return Err(BenchError::WrongResult(format!(
                "{name} (Rust): the loop did not stop after {steps} steps"
            )));
        }
    }
    let ms = rust.end_sample()?;
    expect_count(name, "Rust", rust.counter()?, steps)?;
    Ok(ms * 1e3 / f64::from(done))
}

/// Both sides of a loop that one graph launch runs to the end (`launch` on the Rust side,
/// `cpp` on the twin's): µs per step; the counter, and the error slot, checked after each
/// sample (only the self-relaunching kernel records into the slot; it stays clear otherwise).
fn one_launch_loop(
    rust: &mut RustSide, plan: &Plan, name: &'static str, steps: u32, launch: impl Fn(&Stream) -> Result<()>,
    cpp: &TwinLoop<'_>,
) -> Result<Row> {
    let pair = interleave(
        plan,
        || {
            rust.begin_sample()?;
            launch(&rust.stream)?;
            let ms = rust.end_sample()?;
            rust.check_slot()?;
            expect_count(name, "Rust", rust.counter()?, steps)?;
            Ok(ms * 1e3 / f64::from(steps))
        },
        || {
            let (us, counter) = cpp.run()?;
            expect_count(name, "C++", counter, steps)?;
            Ok(us)
        },
    )?;
    Ok(Row::new(name, format!("steps={steps}"), "µs/step", pair))
}

/// Measures (d): both sides, each way.
pub fn measure(rust: &mut RustSide, twin: &Twin, plan: &Plan, steps: u32) -> Result<Vec<Row>> {
    bench_host_step().function()?;
    let mut rows = Vec::new();
    for (name, mapped) in [(HOST_SYNC, false), (HOST_SYNC_MAPPED, true)] {
        let pair = interleave(
            plan,
            || rust_host_loop(rust, steps, mapped),
            || {
                let (us, counter) = twin.loop_host(steps, mapped)?;
                expect_count(name, "C++", counter, steps)?;
                Ok(us)
            },
        )?;
        rows.push(Row::new(name, format!("steps={steps}"), "µs/step", pair));
    }

    let graph = build_while(rust, steps)?;
    let exec: GraphExec<HostLaunch> = graph.instantiate(Default::default())?;
    exec.upload(&rust.stream)?;
    rust.stream.synchronize()?;
    let cpp_graph = twin.while_graph(steps)?;
    let while_node =
        one_launch_loop(rust, plan, WHILE_NODE, steps, |stream| Ok(exec.launch(stream)?), &cpp_graph)?;

    rows.push(while_node);
    Ok(rows)
}

/// (g) Both sides' self-relaunching loop graphs: made before measuring and meant to be kept
/// until every device launch of the run is done (see [`crate::device_launch_width`]).
///
/// Each side has [`INSTANCES`] identical graphs, made in the turns of [`rust_made_first`],
/// and sample `i` of a side runs graph `i % INSTANCES`: where a device-launch exec was made
/// sets its device-side launch cost, not who made it (as in (f)), and with one graph a side
/// this row read 1.015-1.054 over six runs on one H200 while no crate code runs between its
/// steps.
pub struct SelfRelaunch<'t> {
    sets: Vec<RelaunchSet<'t>>,
    steps: u32,
}

/// One Rust launcher and one twin graph of the self-relaunching loop.
struct RelaunchSet<'t> {
    launcher: Launcher<(DevicePtr<u32>, u32, DevicePtr<RawErrorSlot>)>,
    cpp: TwinLoop<'t>,
}

impl<'t> SelfRelaunch<'t> {
    /// Builds [`INSTANCES`] Rust launcher graphs (`bench_dl_relaunch_step(counter, steps,
    /// slot)`, uploaded as the twin's are) and as many of the twin's, in the order
    /// [`rust_made_first`] gives.
    pub fn new(rust: &RustSide, twin: &'t Twin, steps: u32) -> Result<SelfRelaunch<'t>> {
        let rust_one = || -> Result<_> {
            let args = (rust.counter.ptr(), steps, rust.slot.ptr());
            let launcher = Launcher::new(bench_dl_relaunch_step(), LaunchConfig::new(1, 1), args)?;
            launcher.upload(&rust.stream)?; // as the twin's graph is
            Ok(launcher)
        };
        let mut sets = Vec::with_capacity(INSTANCES);
        for index in 0..INSTANCES {
            let set = if rust_made_first(index) {
                let launcher = rust_one()?;
                RelaunchSet { launcher, cpp: twin.self_relaunch_graph(steps)? }
            } else {
                let cpp = twin.self_relaunch_graph(steps)?;
                RelaunchSet { launcher: rust_one()?, cpp }
            };
            sets.push(set);
        }
        rust.stream.synchronize()?;
        Ok(SelfRelaunch { sets, steps })
    }

    /// Measures (g): one host launch per sample, µs per step; every graph runs once untimed
    /// first (an exec's first launches pay one-off costs).
    pub fn measure(&self, rust: &mut RustSide, plan: &Plan) -> Result<Vec<Row>> {
        let steps = self.steps;
        let mut rust_one = |set: &RelaunchSet<'_>| -> Result<f64> {
            rust.begin_sample()?;
            set.launcher.launch(&rust.stream)?;
            let ms = rust.end_sample()?;
            rust.check_slot()?;
            expect_count(SELF_RELAUNCH, "Rust", rust.counter()?, steps)?;
            Ok(ms * 1e3 / f64::from(steps))
        };
        let cpp_one = |set: &RelaunchSet<'_>| -> Result<f64> {
            let (us, counter) = set.cpp.run()?;
            expect_count(SELF_RELAUNCH, "C++", counter, steps)?;
            Ok(us)
        };
        for set in &self.sets {
            rust_one(set)?;
            cpp_one(set)?;
        }
        let (mut rust_next, mut cpp_next) = (Rotation::default(), Rotation::default());
        let pair =
            interleave(plan, || rust_one(rust_next.pick(&self.sets)), || cpp_one(cpp_next.pick(&self.sets)))?;
        Ok(vec![Row::new(SELF_RELAUNCH, format!("steps={steps}"), "µs/step", pair)])
    }
}
