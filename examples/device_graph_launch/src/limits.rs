//! The device-launch limits hit on purpose: each refusal must come back as an error from the
//! device (through the `ErrorSlot`), and exactly the accepted graphs must have run.

use chapter_common::ExampleError;
use cuda_graph::graph::Graph;
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DeviceBuffer, DevicePtr, Stream};
use device_launch::limits::{FIRE_AND_FORGET_LIMIT, TAIL_LAUNCH_LIMIT};
use device_launch::{
    instantiate_for_device, DeviceExec, DeviceExecArg, DeviceExecTable, DeviceExecTableArg,
    DeviceLaunchError, ErrorSlot, Launcher, Operation, RawErrorSlot, Uploaded,
};

use crate::sweep::dgl_work;

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu); the declarations are private to this crate, whose launches pass counts
// no larger than the buffers they point into.
cuda_graph::kernels! {
    /// Launches `graphs[0..n)` (mode 1 fire-and-forget, 2 tail) without stopping at a refusal.
    unsafe fn dgl_launch_many(
        graphs: DeviceExecTableArg,
        n: u32,
        mode: u32,
        accepted: DevicePtr<u32>,
        slot: DevicePtr<RawErrorSlot>,
    );
    /// A node that waits for `*release`, then adds 1 to `counters[index]`.
    unsafe fn dgl_wait_for_release(release: DevicePtr<u32>, counters: DevicePtr<u32>, index: u32);
    /// Fire-and-forgets `graph` twice (the second while the first is pending), then releases it.
    unsafe fn dgl_launch_twice(graph: DeviceExecArg, release: DevicePtr<u32>, slot: DevicePtr<RawErrorSlot>);
}

/// One limit probe: the check's name, whether the expected refusal came back (and nothing
/// else went wrong), and what was seen.
pub struct Probe {
    pub name: &'static str,
    pub held: bool,
    pub detail: String,
}

/// Runs every probe on `stream`.
pub fn probe_all(stream: &Stream) -> Result<Vec<Probe>, ExampleError> {
    let n = TAIL_LAUNCH_LIMIT + 1;
    let mut counters = DeviceBuffer::<u32>::zeroed(n as usize)?;
    let done = DeviceBuffer::<u32>::zeroed(1)?;
    // 256 distinct one-node graphs: graph i adds 1 to counters[i]. (One exec may not be pending
    // twice, so the limits can only be reached with distinct graphs.)
    let execs = (0..n)
        .map(|i| {
            let graph = Graph::new()?;
            graph.add_kernel(
                dgl_work(),
                LaunchConfig::new(1, 32),
                (counters.ptr(), i, 1, done.ptr()),
                &[],
            )?;
            instantiate_for_device(&graph)?.upload(stream)
        })
        .collect::<Result<Vec<DeviceExec<Uploaded>>, _>>()?;
    let table = |count: u32| {
        let handles: Vec<_> = execs[..count as usize].iter().map(DeviceExec::handle).collect();
        DeviceExecTable::new(&handles)
    };
    let fire_and_forget = over_limit(
        stream,
        &mut counters,
        &table(FIRE_AND_FORGET_LIMIT + 1)?,
        1,
        FIRE_AND_FORGET_LIMIT,
        Operation::FireAndForget,
    )?;
    let tail = over_limit(stream, &mut counters, &table(n)?, 2, TAIL_LAUNCH_LIMIT, Operation::TailLaunch)?;
    Ok(vec![
        Probe {
            name: "121st fire-and-forget launch refused and reported",
            held: fire_and_forget.is_ok(),
            detail: fire_and_forget.unwrap_or_else(|e| e),
        },
        Probe {
            name: "256th tail launch refused and reported",
            held: tail.is_ok(),
            detail: tail.unwrap_or_else(|e| e),
        },
        pending_twice(stream)?,
    ])
}

/// What a launcher's slot must hold: one failure of `operation` with cudaErrorInvalidValue.
fn expected_refusal(
    slot: &ErrorSlot, operation: Operation,
) -> Result<Result<DeviceLaunchError, String>, ExampleError> {
    Ok(match slot.check()? {
        Err(err) if err.code == 1 && err.operation == operation && err.failures == 1 => Ok(err),
        Err(err) => Err(format!("a different device-side failure came back: {err}")),
        Ok(()) => Err("no device-side failure came back: the launch past the limit was accepted".into()),
    })
}

/// Launches `limit + 1` distinct graphs from one launcher in `mode`: the last must be refused,
/// reported, and not run; the `limit` others must run once each.
fn over_limit(
    stream: &Stream, counters: &mut DeviceBuffer<u32>, table: &DeviceExecTable, mode: u32, limit: u32,
    operation: Operation,
) -> Result<Result<String, String>, ExampleError> {
    let n = limit + 1;
    // The graphs hold pointers into `counters` (and keep it alive); zero it for this probe.
    counters.memset_async(0, stream)?;
    let (slot, accepted) = (ErrorSlot::new()?, DeviceBuffer::<u32>::zeroed(1)?);
    let args = (table.arg(), n, mode, accepted.ptr(), slot.ptr());
    let launcher = Launcher::new(dgl_launch_many(), LaunchConfig::new(1, 1), args)?;
    launcher.launch(stream)?;
    stream.synchronize()?;
    let err = match expected_refusal(&slot, operation)? {
        Ok(err) => err,
        Err(why) => return Ok(Err(why)),
    };
    let accepted = accepted.to_vec()?[0];
    let counts = counters.to_vec()?;
    let ran = counts[..limit as usize].iter().filter(|&&c| c == 1).count() as u32;
    let last = counts[limit as usize];
    if accepted != limit || ran != limit || last != 0 {
        return Ok(Err(format!(
            "{accepted} of {n} launches accepted, {ran} graphs ran once, the last ran {last} times; \
             want {limit}, {limit}, 0"
        )));
    }
    Ok(Ok(format!("{accepted} of {n} accepted and run, the last refused and not run: {err}")))
}

/// Launches one graph twice from one launcher while its first launch is still pending: the
/// second must be refused, reported, and the graph run once.
fn pending_twice(stream: &Stream) -> Result<Probe, ExampleError> {
    let (release, counters) = (DeviceBuffer::<u32>::zeroed(1)?, DeviceBuffer::<u32>::zeroed(1)?);
    let graph = Graph::new()?;
    graph.add_kernel(
        dgl_wait_for_release(),
        LaunchConfig::new(1, 1),
        (release.ptr(), counters.ptr(), 0),
        &[],
    )?;
    let waiting = instantiate_for_device(&graph)?.upload(stream)?;
    let slot = ErrorSlot::new()?;
    let launcher = Launcher::new(
        dgl_launch_twice(),
        LaunchConfig::new(1, 1),
        (waiting.handle().arg(), release.ptr(), slot.ptr()),
    )?;
    launcher.launch(stream)?;
    stream.synchronize()?;
    let outcome = match expected_refusal(&slot, Operation::FireAndForget)? {
        Err(why) => Err(why),
        Ok(err) => match counters.to_vec()?[0] {
            1 => Ok(format!("the graph ran once, its second launch while pending was refused: {err}")),
            runs => Err(format!("the graph ran {runs} times, want 1 ({err})")),
        },
    };
    Ok(Probe {
        name: "second launch of a pending graph refused and reported",
        held: outcome.is_ok(),
        detail: outcome.unwrap_or_else(|e| e),
    })
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! {
            dgl_launch_many, dgl_wait_for_release, dgl_launch_twice
        }
    }
}
