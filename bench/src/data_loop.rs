//! (d) A data-dependent loop of `steps` steps, where the device decides whether to go on:
//!
//! - host sync: launch one step, copy the "go on" flag back to pinned memory, wait, read it,
//!   launch the next (Rust: `Kernel::launch`, `copy_to_pinned_async`, `PinnedBuffer::as_slice`;
//!   C++: `cudaLaunchKernel`, `cudaMemcpyAsync`, `cudaStreamSynchronize`);
//! - WHILE node: one graph launch whose WHILE node runs a one-kernel body that increments the
//!   counter and sets the condition with `cudaGraphSetConditional`.
//!
//! Both between two events, µs per step; the counter must equal `steps`.

use cuda_graph::graph::{GraphExec, HostLaunch};
use cuda_graph::{Graph, LaunchConfig};

use crate::error::{expect_count, BenchError, Result};
use crate::harness::{interleave, Plan, Row, RustSide};
use crate::kernels::{bench_host_step, bench_while_step};
use crate::twin::Twin;

/// The host-driven row's name.
pub const HOST_SYNC: &str = "loop, host sync per step";
/// The WHILE row's name.
pub const WHILE_NODE: &str = "loop, WHILE node";

/// The Rust WHILE graph: one WHILE node (condition 1 at each launch) whose body is one
/// `bench_while_step(handle, counter, steps)` node.
fn build_while(rust: &RustSide, steps: u32) -> Result<Graph> {
    let graph = Graph::new()?;
    let handle = graph.conditional_handle(Some(1))?;
    let (_node, body) = graph.add_while(&handle, &[])?;
    body.add_kernel(bench_while_step(), LaunchConfig::new(1, 1), (handle, rust.counter.ptr(), steps), &[])?;
    Ok(graph)
}

/// One sample of the Rust host-driven loop: µs per step.
fn rust_host_loop(rust: &mut RustSide, steps: u32) -> Result<f64> {
    let config = LaunchConfig::new(1, 1);
    rust.begin_sample()?;
    let mut done = 0u32;
    loop {
        bench_host_step().launch(&rust.stream, config, (rust.counter.ptr(), steps, rust.keep_going.ptr()))?;
        rust.keep_going.copy_to_pinned_async(&mut rust.keep_going_host, &rust.stream)?;
        done += 1;
        if rust.keep_going_host.as_slice()?[0] == 0 {
            break;
        }
        if done > steps {
            return Err(BenchError::WrongResult(format!(
                "{HOST_SYNC} (Rust): the loop did not stop after {steps} steps"
            )));
        }
    }
    let ms = rust.end_sample()?;
    expect_count(HOST_SYNC, "Rust", rust.counter()?, steps)?;
    Ok(ms * 1e3 / f64::from(done))
}

/// Measures both sides, both ways.
pub fn measure(rust: &mut RustSide, twin: &Twin, plan: &Plan, steps: u32) -> Result<Vec<Row>> {
    bench_host_step().function()?;
    let host = interleave(
        plan,
        || rust_host_loop(rust, steps),
        || {
            let (us, counter) = twin.loop_host(steps)?;
            expect_count(HOST_SYNC, "C++", counter, steps)?;
            Ok(us)
        },
    )?;

    let graph = build_while(rust, steps)?;
    let exec: GraphExec<HostLaunch> = graph.instantiate(Default::default())?;
    exec.upload(&rust.stream)?;
    rust.stream.synchronize()?;
    let cpp_graph = twin.while_graph(steps)?;
    let while_node = interleave(
        plan,
        || {
            rust.begin_sample()?;
            exec.launch(&rust.stream)?;
            let ms = rust.end_sample()?;
            expect_count(WHILE_NODE, "Rust", rust.counter()?, steps)?;
            Ok(ms * 1e3 / f64::from(steps))
        },
        || {
            let (us, counter) = cpp_graph.run()?;
            expect_count(WHILE_NODE, "C++", counter, steps)?;
            Ok(us)
        },
    )?;

    Ok(vec![
        Row::new(HOST_SYNC, format!("steps={steps}"), "µs/step", host),
        Row::new(WHILE_NODE, format!("steps={steps}"), "µs/step", while_node),
    ])
}
