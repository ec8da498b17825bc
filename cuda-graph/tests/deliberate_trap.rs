//! A kernel that traps inside a graph: the error comes back as `Err` from the next
//! synchronizing call, every later call reports the same sticky error clearly, and dropping
//! everything afterwards neither panics nor hangs (the drops record the error instead).
//!
//! Alone in its own test binary: a trap loses the CUDA context of the whole process.

mod graph_support;

use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::{take_unreported_errors, DeviceBuffer};
use gpu_test_support::require_gpu;
use graph_support::{one, per_element, stream};
use test_kernels::{add_scalar, fill_pattern, trap_if};

/// `cudaErrorLaunchFailure`: what a `__trap()` in device code turns into.
const LAUNCH_FAILURE: i32 = 719;

#[test]
fn a_trap_inside_a_graph_is_an_error_and_every_later_call_reports_it() {
    require_gpu!();
    let n = 4096u32;
    let stream = stream().unwrap();
    let data = DeviceBuffer::<u32>::zeroed(n as usize).unwrap();
    let flag = DeviceBuffer::from_slice(&[1u32]).unwrap();
    let graph = Graph::new().unwrap();
    let fill = graph.add_kernel(fill_pattern(), per_element(n), (data.ptr(), n, 3), &[]).unwrap();
    let trap = graph.add_kernel(trap_if(), one(), (flag.ptr(),), &[&fill]).unwrap();
    graph.add_kernel(add_scalar(), per_element(n), (data.ptr(), n, 1), &[&trap]).unwrap();
    let exec = graph.instantiate::<HostLaunch>(Default::default()).unwrap();

    // The launch itself may or may not see the fault; the synchronization must.
    let launched = exec.launch(&stream);
    let err = match launched {
        Ok(()) => stream.synchronize().expect_err("a trapping graph must not synchronize cleanly"),
        Err(err) => err,
    };
    assert_eq!(err.code(), Some(LAUNCH_FAILURE), "{err}");
    assert!(err.to_string().contains("cudaErrorLaunchFailure"), "{err}");

    // Sticky: the context is gone, and every later call says so instead of misbehaving.
    let again = DeviceBuffer::<u32>::zeroed(16).expect_err("allocation after a trap");
    assert_eq!(again.code(), Some(LAUNCH_FAILURE), "{again}");
    let relaunch =
        exec.launch(&stream).and_then(|()| stream.synchronize()).expect_err("relaunch after a trap");
    assert_eq!(relaunch.code(), Some(LAUNCH_FAILURE), "{relaunch}");
    assert_eq!(data.to_vec().expect_err("copy after a trap").code(), Some(LAUNCH_FAILURE));

    // Dropping everything records (does not raise) what the destructors meet.
    drop(exec);
    drop(graph);
    drop(data);
    drop(flag);
    drop(stream);
    let recorded = take_unreported_errors();
    assert!(
        recorded.iter().all(|e| e.code() == Some(LAUNCH_FAILURE)),
        "drops met other errors than the sticky one: {recorded:?}"
    );
}
