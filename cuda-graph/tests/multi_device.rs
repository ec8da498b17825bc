//! Several devices: handles know their device, operations run there whatever the thread's
//! current device is, mixing devices is refused by name, peer access, and copies between
//! devices on streams and in graphs. Tests that need two GPUs skip visibly with one
//! (`require_gpus!(2)`; `REQUIRE_GPUS=2` makes them fail instead).
//!
//! Peer access is process-wide and never turned off: only device 0's access to device 1 is
//! ever enabled here, so the refusals test the other direction (device 1 using device 0's
//! memory).

use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::refusal::DevicePair;
use cuda_graph::{
    CudaError, Device, DeviceBuffer, Event, EventOptions, LaunchConfig, MemoryPool, Refusal, Stream,
};
use test_kernels::{add_scalar, fill_pattern, fill_pattern_after_spin, pattern};

fn per_element(n: u32) -> LaunchConfig {
    LaunchConfig::for_elements(n, 128)
}

fn two() -> (Device, Device) {
    (Device::get(0).unwrap(), Device::get(1).unwrap())
}

/// The refusal of mixing devices.
fn refusal(result: cuda_graph::Result<impl std::fmt::Debug>) -> CudaError {
    let err = result.expect_err("mixing devices must be refused");
    assert!(matches!(err, CudaError::InvalidArgument { .. }), "{err:?}");
    err
}

/// Whether `err` is the refusal of two things of devices 0 and 1 (`pair`).
fn differ(err: &CudaError, pair: DevicePair) -> bool {
    err.refusal() == Some(&Refusal::DevicesDiffer { pair, first: 0, second: 1 })
}

#[test]
fn handles_remember_the_device_they_were_made_on() {
    gpu_test_support::require_gpu!();
    let device = Device::get(0).unwrap();
    device.set_current().unwrap();
    let stream = Stream::new().unwrap();
    let buffer = DeviceBuffer::<u32>::zeroed(16).unwrap();
    let graph = Graph::new().unwrap();
    graph.add_memset(&buffer.ptr(), 5u32, 16, &[]).unwrap();
    let exec = graph.instantiate::<HostLaunch>(Default::default()).unwrap();
    assert_eq!(stream.device(), device);
    assert_eq!(Event::new().unwrap().device(), device);
    assert_eq!(buffer.device(), device);
    assert_eq!(buffer.ptr().device(), Some(device));
    assert_eq!(graph.device(), device);
    assert_eq!(exec.device(), device);
    assert_eq!(MemoryPool::device_default(device).unwrap().device_ordinal(), 0);
    assert!(device.peer_access_enabled(device) && device.can_access_peer(device).unwrap());
    exec.launch(&stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(buffer.to_vec().unwrap(), vec![5; 16]);
}

#[test]
fn work_runs_on_its_handles_device_whatever_is_current() {
    gpu_test_support::require_gpus!(2);
    let (first, second) = two();
    first.set_current().unwrap();
    let stream = Stream::new_on(second).unwrap();
    let data = DeviceBuffer::<u32>::zeroed_on(second, 1000).unwrap();
    assert_eq!((stream.device(), data.device()), (second, second));
    assert_eq!(Device::current().unwrap(), first, "the _on constructors leave the caller's device current");
    fill_pattern().launch(&stream, per_element(1000), (data.ptr(), 1000, 7)).unwrap();
    assert_eq!(Device::current().unwrap(), first, "the launch switches for the call only");
    let graph = Graph::new_on(second).unwrap();
    graph.add_kernel(add_scalar(), per_element(1000), (data.ptr(), 1000, 1), &[]).unwrap();
    let exec = graph.instantiate::<HostLaunch>(Default::default()).unwrap();
    assert_eq!(exec.device(), second);
    exec.launch(&stream).unwrap();
    exec.launch(&stream).unwrap();
    let done = Event::with_options_on(second, EventOptions::default()).unwrap();
    done.record(&stream).unwrap();
    done.synchronize().unwrap();
    assert_eq!(Device::current().unwrap(), first);
    let want: Vec<u32> = (0..1000).map(|i| pattern(i, 7).wrapping_add(2)).collect();
    assert_eq!(data.to_vec().unwrap(), want);
    let copy = DeviceBuffer::from_slice_on(second, &want).unwrap();
    assert_eq!((copy.device(), copy.to_vec().unwrap()), (second, want));
}

#[test]
fn mixing_devices_is_refused_naming_both() {
    gpu_test_support::require_gpus!(2);
    let (first, second) = two();
    let on_first = DeviceBuffer::<u32>::zeroed_on(first, 64).unwrap();
    let stream_second = Stream::new_on(second).unwrap();
    let stream_first = Stream::new_on(first).unwrap();
    let no_peer_access = Refusal::NoPeerAccess { owner: 0, user: 1 };

    // A kernel on device 1 with device 0's memory (device 1 never gets peer access here).
    let err = refusal(fill_pattern().launch(&stream_second, per_element(64), (on_first.ptr(), 64, 1)));
    assert!(matches!(&err, CudaError::InvalidArgument { call: "Kernel::launch", .. }), "{err}");
    assert_eq!(err.refusal(), Some(&no_peer_access), "{err}");
    // The same in a graph of device 1, as a kernel node and as a memset node.
    let graph = Graph::new_on(second).unwrap();
    let err = refusal(graph.add_kernel(fill_pattern(), per_element(64), (on_first.ptr(), 64, 1), &[]));
    assert!(matches!(&err, CudaError::InvalidArgument { call: "GraphBuilder::add_kernel", .. }), "{err}");
    assert_eq!(err.refusal(), Some(&no_peer_access), "{err}");
    let err = refusal(graph.add_memset(&on_first.ptr(), 1u32, 64, &[]));
    assert_eq!(err.refusal(), Some(&no_peer_access), "{err}");
    // An exec of device 1 on a stream of device 0.
    graph.add_empty(&[]).unwrap();
    let exec = graph.instantiate::<HostLaunch>(Default::default()).unwrap();
    let err = refusal(exec.launch(&stream_first));
    let exec_and_stream = Refusal::DevicesDiffer { pair: DevicePair::ExecAndStream, first: 1, second: 0 };
    assert_eq!(err.refusal(), Some(&exec_and_stream), "{err}");
    exec.launch(&stream_second).unwrap();
    // Events record on their own device only; any stream may wait for them.
    let event = Event::with_options_on(first, EventOptions::default()).unwrap();
    assert!(differ(&refusal(event.record(&stream_second)), DevicePair::EventAndStream));
    event.record(&stream_first).unwrap();
    stream_second.wait_event(&event).unwrap();
    let late = Event::with_options_on(second, EventOptions::default()).unwrap();
    late.record(&stream_second).unwrap();
    late.synchronize().unwrap();
    assert!(differ(&refusal(Event::elapsed_ms(&event, &late)), DevicePair::StartAndEndEvent));
    // A pool of device 0 with a stream of device 1; a graph of device 0 captured from device 1.
    let pool = MemoryPool::device_default(first).unwrap();
    let err = refusal(DeviceBuffer::<u32>::alloc_from_pool_async(8, &pool, &stream_second));
    assert!(differ(&err, DevicePair::PoolAndStream), "{err}");
    let other = Graph::new_on(first).unwrap();
    let err = refusal(stream_second.begin_capture_to_graph(&other, Default::default(), &[]).map(drop));
    assert!(differ(&err, DevicePair::GraphAnd { what: "the stream" }), "{err}");
    // The graph of device 1 refuses a child graph of device 0.
    let err = refusal(graph.add_child_graph(&other, &[]));
    let graph_and_child = DevicePair::GraphAnd { what: "the child graph" };
    assert_eq!(
        err.refusal(),
        Some(&Refusal::DevicesDiffer { pair: graph_and_child, first: 1, second: 0 }),
        "{err}"
    );
    let mut memset_target = DeviceBuffer::<u32>::zeroed_on(first, 8).unwrap();
    let err = refusal(memset_target.memset_async(0, &stream_second));
    assert_eq!(err.refusal(), Some(&no_peer_access), "{err}");
    stream_second.synchronize().unwrap();
}

#[test]
fn peer_access_lets_a_kernel_write_another_devices_memory() {
    gpu_test_support::require_gpus!(2);
    let (first, second) = two();
    if !first.can_access_peer(second).unwrap() {
        // Still a real check: enabling must then be refused, naming both.
        let err = refusal(first.enable_peer_access(second));
        assert_eq!(err.refusal(), Some(&Refusal::PeerAccessImpossible { device: 0, peer: 1 }), "{err}");
        eprintln!("skipped: devices 0 and 1 have no peer path");
        return;
    }
    first.enable_peer_access(second).unwrap();
    first.enable_peer_access(second).unwrap(); // idempotent
    assert!(first.peer_access_enabled(second));
    let remote = DeviceBuffer::<u32>::zeroed_on(second, 4096).unwrap();
    let stream = Stream::new_on(first).unwrap();
    fill_pattern().launch(&stream, per_element(4096), (remote.ptr(), 4096, 11)).unwrap();
    let graph = Graph::new_on(first).unwrap();
    graph.add_kernel(add_scalar(), per_element(4096), (remote.ptr(), 4096, 3), &[]).unwrap();
    graph.instantiate::<HostLaunch>(Default::default()).unwrap().launch(&stream).unwrap();
    stream.synchronize().unwrap();
    let want: Vec<u32> = (0..4096).map(|i| pattern(i, 11).wrapping_add(3)).collect();
    assert_eq!(remote.to_vec().unwrap(), want);
}

#[test]
fn memory_a_peer_device_still_writes_is_freed_only_after_that_device_finished() {
    gpu_test_support::require_gpus!(2);
    let (first, second) = two();
    if !first.can_access_peer(second).unwrap() {
        eprintln!("skipped: devices 0 and 1 have no peer path");
        return;
    }
    first.enable_peer_access(second).unwrap();
    let (writer, owner) = (Stream::new_on(first).unwrap(), Stream::new_on(second).unwrap());
    let pool = MemoryPool::device_default(second).unwrap();
    let n = 1u32 << 16;
    let spin = if gpu_test_support::under_sanitizer() { 1_000_000 } else { 200_000_000 };
    let doomed = DeviceBuffer::<u32>::alloc_from_pool_async(n as usize, &pool, &owner).unwrap();
    owner.synchronize().unwrap();
    // Peer access does not reach pool memory (device 0 would fault): refused until the pool
    // lets device 0 in.
    if !pool.is_accessible_from(first).unwrap() {
        let err = refusal(fill_pattern().launch(&writer, per_element(n), (doomed.ptr(), n, 5)));
        assert_eq!(err.refusal(), Some(&Refusal::NoPoolAccess { owner: 1, user: 0 }), "{err}");
    }
    pool.enable_access_from(first).unwrap();
    assert!(pool.is_accessible_from(first).unwrap());
    // Device 0 writes device 1's buffer for a while; the buffer is dropped at once.
    fill_pattern_after_spin().launch(&writer, per_element(n), (doomed.ptr(), n, 5, spin)).unwrap();
    let address = doomed.as_raw() as usize;
    drop(doomed);
    // Were it freed before device 0 finished, the pool would hand the same memory out now
    // (it reuses completed frees) and the late writes would land in it.
    let mut fresh = DeviceBuffer::<u32>::alloc_from_pool_async(n as usize, &pool, &owner).unwrap();
    fresh.memset_async(0, &owner).unwrap();
    owner.synchronize().unwrap();
    writer.synchronize().unwrap();
    let reused = fresh.as_raw() as usize == address;
    assert!(
        fresh.to_vec().unwrap().iter().all(|&v| v == 0),
        "late peer writes landed in new memory (reused: {reused})"
    );
    assert!(cuda_graph::take_unreported_errors().is_empty());
}

#[test]
fn peer_copies_run_on_streams_and_as_graph_nodes() {
    gpu_test_support::require_gpus!(2);
    let (first, second) = two();
    let n = 1 << 20;
    let source: Vec<u32> = (0..n as u32).map(|i| pattern(i, 21)).collect();
    let on_first = DeviceBuffer::from_slice_on(first, &source).unwrap();
    let mut on_second = DeviceBuffer::<u32>::zeroed_on(second, n).unwrap();
    let mut back = DeviceBuffer::<u32>::zeroed_on(first, n).unwrap();
    // Stream copies, each on a stream of one of the two devices.
    let stream_second = Stream::new_on(second).unwrap();
    on_second.copy_from_peer_async(&on_first, &stream_second).unwrap();
    stream_second.synchronize().unwrap();
    assert_eq!(on_second.to_vec().unwrap(), source);
    let stream_first = Stream::new_on(first).unwrap();
    add_scalar().launch(&stream_second, per_element(n as u32), (on_second.ptr(), n as u32, 1)).unwrap();
    stream_second.synchronize().unwrap();
    back.copy_from_peer_async(&on_second, &stream_first).unwrap();
    stream_first.synchronize().unwrap();
    let plus_one: Vec<u32> = source.iter().map(|v| v.wrapping_add(1)).collect();
    assert_eq!(back.to_vec().unwrap(), plus_one);
    // A memcpy node between devices in a graph of device 0, then one captured on device 1.
    let graph = Graph::new_on(first).unwrap();
    let into_first = DeviceBuffer::<u32>::zeroed_on(first, n).unwrap();
    graph.add_memcpy(&into_first.ptr(), &on_second.ptr(), n, &[]).unwrap();
    let exec = graph.instantiate::<HostLaunch>(Default::default()).unwrap();
    exec.launch(&stream_first).unwrap();
    stream_first.synchronize().unwrap();
    assert_eq!(into_first.to_vec().unwrap(), plus_one);
    let mut into_second = DeviceBuffer::<u32>::zeroed_on(second, n).unwrap();
    let capture = stream_second.begin_capture(Default::default()).unwrap();
    into_second.copy_from_peer_async(&on_first, &stream_second).unwrap();
    let captured = capture.end().unwrap();
    assert_eq!(captured.device(), second);
    let exec = captured.instantiate::<HostLaunch>(Default::default()).unwrap();
    drop((captured, on_first)); // the exec keeps both sides
    exec.launch(&stream_second).unwrap();
    stream_second.synchronize().unwrap();
    assert_eq!(into_second.to_vec().unwrap(), source);
}

#[test]
fn one_graph_per_device_each_launched_from_one_thread() {
    gpu_test_support::require_gpus!(2);
    Device::get(0).unwrap().set_current().unwrap();
    let n = 2048u32;
    let devices = Device::all().unwrap();
    let work: Vec<_> = devices
        .iter()
        .map(|&device| {
            let data = DeviceBuffer::<u32>::zeroed_on(device, n as usize).unwrap();
            let graph = Graph::new_on(device).unwrap();
            let fill = graph.add_kernel(
                fill_pattern(),
                per_element(n),
                (data.ptr(), n, device.ordinal() as u32),
                &[],
            );
            let fill = fill.unwrap();
            graph.add_kernel(add_scalar(), per_element(n), (data.ptr(), n, 100), &[&fill]).unwrap();
            let exec = graph.instantiate::<HostLaunch>(Default::default()).unwrap();
            (Stream::new_on(device).unwrap(), exec, data)
        })
        .collect();
    for (stream, exec, _) in &work {
        exec.launch(stream).unwrap();
    }
    for (stream, _, data) in &work {
        stream.synchronize().unwrap();
        let seed = data.device().ordinal() as u32;
        let want: Vec<u32> = (0..n).map(|i| pattern(i, seed).wrapping_add(100)).collect();
        assert_eq!(data.to_vec().unwrap(), want);
    }
    assert_eq!(Device::current().unwrap(), Device::get(0).unwrap());
}
