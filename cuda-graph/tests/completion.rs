//! Futures of GPU work: a stream's work, an event and an exec launch complete a
//! `Completion` that CUDA's host function wakes; no thread polls. On a real GPU (skipped
//! without one).

use std::future::Future;
use std::pin::pin;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{Completion, Device, DeviceBuffer, Event, Stream};
use test_kernels::{fill_pattern_after_spin, pattern};

/// Sends on a channel each time it is woken.
struct ChannelWaker(Mutex<mpsc::Sender<()>>);

impl Wake for ChannelWaker {
    fn wake(self: Arc<Self>) {
        let _ = self.0.lock().unwrap().send(());
    }
}

/// Polls `completion` once (it must be pending: the GPU is still spinning), then sleeps until
/// its waker is called (10 s at most), and polls it again: ready, with the work's status.
///
/// Under compute-sanitizer the first poll may already be ready: the tool had run the kernel to
/// its end before the event completion's first query (seen under memcheck and racecheck on the
/// H100, 2026-11-26), so only there a ready first poll ends the test with its status.
fn pending_then_woken(completion: Completion) -> cuda_graph::Result<()> {
    let (sender, woken) = mpsc::channel();
    let waker = Waker::from(Arc::new(ChannelWaker(Mutex::new(sender))));
    let mut cx = Context::from_waker(&waker);
    let mut completion = pin!(completion);
    match completion.as_mut().poll(&mut cx) {
        Poll::Pending => {}
        Poll::Ready(result) if gpu_test_support::under_sanitizer() => return result,
        Poll::Ready(_) => panic!("the kernel spins for ~100 ms: not done yet"),
    }
    woken.recv_timeout(Duration::from_secs(10)).expect("the host function wakes the task");
    match completion.as_mut().poll(&mut cx) {
        Poll::Ready(result) => result,
        Poll::Pending => panic!("woken, but not ready"),
    }
}

/// ~100 ms of spinning at any clock up to 3 GHz, then `out[i] = pattern(i, seed)`.
const SPIN: u64 = 300_000_000;

fn setup() -> (Stream, DeviceBuffer<u32>) {
    Device::get(0).unwrap().set_current().unwrap();
    (Stream::new().unwrap(), DeviceBuffer::<u32>::zeroed(4096).unwrap())
}

fn expected(seed: u32) -> Vec<u32> {
    (0..4096).map(|i| pattern(i, seed)).collect()
}

#[test]
fn a_streams_work_completes_a_future_woken_by_cuda() {
    gpu_test_support::require_gpu!();
    let (stream, out) = setup();
    fill_pattern_after_spin()
        .launch(&stream, LaunchConfig::for_elements(4096, 256), (out.ptr(), 4096, 1, SPIN))
        .unwrap();
    pending_then_woken(stream.completion().unwrap()).unwrap();
    // Ready means done: the data is there without synchronizing.
    assert_eq!(out.to_vec().unwrap(), expected(1));
}

#[test]
fn an_event_completes_a_future() {
    gpu_test_support::require_gpu!();
    let (stream, out) = setup();
    let event = Event::new().unwrap();
    fill_pattern_after_spin()
        .launch(&stream, LaunchConfig::for_elements(4096, 256), (out.ptr(), 4096, 2, SPIN))
        .unwrap();
    event.record(&stream).unwrap();
    pending_then_woken(event.completion().unwrap()).unwrap();
    assert!(event.is_complete().unwrap());
    assert_eq!(out.to_vec().unwrap(), expected(2));
    // Never recorded: resolves without waiting for anything.
    let fresh = Event::new().unwrap().completion().unwrap();
    stream.synchronize().unwrap();
    Device::get(0).unwrap().synchronize().unwrap();
    assert!(fresh.is_done());
}

#[test]
fn an_exec_launch_completes_a_future() {
    gpu_test_support::require_gpu!();
    let (stream, out) = setup();
    let graph = Graph::new().unwrap();
    graph
        .add_kernel(
            fill_pattern_after_spin(),
            LaunchConfig::for_elements(4096, 256),
            (out.ptr(), 4096, 3, SPIN),
            &[],
        )
        .unwrap();
    let exec = graph.instantiate::<HostLaunch>(Default::default()).unwrap();
    pending_then_woken(exec.launch_completion(&stream).unwrap()).unwrap();
    assert_eq!(out.to_vec().unwrap(), expected(3));
}

#[test]
fn a_completion_is_refused_during_capture() {
    gpu_test_support::require_gpu!();
    let (_, _) = setup();
    let stream =
        Stream::with_options(cuda_graph::StreamOptions { non_blocking: true, priority: None }).unwrap();
    let capture = stream.begin_capture(cuda_graph::graph::CaptureMode::Global).unwrap();
    assert!(stream.completion().is_err());
    drop(capture);
}
