//! Host functions on streams, on a real GPU (skipped without one).

use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use cuda_graph::{
    CudaError, Device, DeviceBuffer, Event, MemoryPool, MemoryPoolOptions, PinnedBuffer, Stream,
};

fn setup() -> Stream {
    Device::get(0).unwrap().set_current().unwrap();
    Stream::new().unwrap()
}

#[test]
fn host_functions_run_in_stream_order() {
    gpu_test_support::require_gpu!();
    let stream = setup();
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut buffer = DeviceBuffer::<u32>::zeroed(4 << 20).unwrap();
    let source = DeviceBuffer::<u32>::zeroed(4 << 20).unwrap();
    for step in 0..16 {
        buffer.copy_from_device_async(&source, &stream).unwrap();
        let log = log.clone();
        stream.launch_host_fn(move || log.lock().unwrap().push(step)).unwrap();
    }
    stream.synchronize().unwrap();
    assert_eq!(*log.lock().unwrap(), (0..16).collect::<Vec<_>>());
}

#[test]
fn work_after_a_host_function_waits_for_it() {
    gpu_test_support::require_gpu!();
    let stream = setup();
    let (open, opened) = mpsc::channel::<()>();
    let (ran, ran_rx) = mpsc::channel();
    stream
        .launch_host_fn(move || {
            opened.recv_timeout(Duration::from_secs(10)).unwrap();
            ran.send(()).unwrap();
        })
        .unwrap();
    let after = Event::new().unwrap();
    after.record(&stream).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(!after.is_complete().unwrap(), "the event ran ahead of the blocked host function");
    open.send(()).unwrap();
    stream.synchronize().unwrap();
    ran_rx.try_recv().unwrap();
    assert!(after.is_complete().unwrap());
}

#[test]
fn a_panicking_host_function_is_reported_and_the_stream_goes_on() {
    gpu_test_support::require_gpu!();
    let stream = setup();
    const MARKER: &str = "host fn panic marker 5150";
    let (after, after_rx) = mpsc::channel();
    stream.launch_host_fn(|| panic!("{MARKER}")).unwrap();
    stream.launch_host_fn(move || after.send("still running").unwrap()).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(after_rx.try_recv(), Ok("still running"));

    let errors = cuda_graph::take_unreported_errors();
    let reported = errors
        .iter()
        .filter(|err| matches!(err, CudaError::HostFunctionPanicked { message } if message == MARKER));
    assert_eq!(reported.count(), 1, "{errors:?}");

    // The stream and the device are still usable.
    let mut buffer = DeviceBuffer::<u8>::zeroed(16).unwrap();
    buffer.memset_async(9, &stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(buffer.to_vec().unwrap(), [9; 16]);
}

#[test]
fn resources_dropped_inside_a_host_function_are_released_afterwards() {
    gpu_test_support::require_gpu!();
    let stream = setup();
    let pool = MemoryPool::new(MemoryPoolOptions::default()).unwrap();
    let buffer = DeviceBuffer::<u32>::alloc_from_pool_async(1 << 20, &pool, &stream).unwrap();
    let plain = DeviceBuffer::<u32>::zeroed(1024).unwrap();
    let pinned = PinnedBuffer::<u32>::zeroed(1024).unwrap();
    let event = Event::new().unwrap();
    let captured_pool = pool.clone();
    stream.synchronize().unwrap();
    assert!(pool.used_bytes().unwrap() >= 4 << 20);

    stream
        .launch_host_fn(move || {
            // Everything here releases with CUDA calls, which a host function may not make.
            drop((buffer, plain, pinned, event, captured_pool));
        })
        .unwrap();
    stream.synchronize().unwrap();

    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        Device::get(0).unwrap().synchronize().unwrap();
        if pool.used_bytes().unwrap() == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the buffer dropped in the host function was never freed");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The list is the process's: a panic the test beside this one recorded meanwhile is
    // put back for it.
    let (panics, errors): (Vec<CudaError>, Vec<CudaError>) = cuda_graph::take_unreported_errors()
        .into_iter()
        .partition(|err| matches!(err, CudaError::HostFunctionPanicked { .. }));
    panics.into_iter().for_each(cuda_graph::record_unreported_error);
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn host_functions_can_move_values_back_to_the_caller() {
    gpu_test_support::require_gpu!();
    let stream = setup();
    let (sender, receiver) = mpsc::channel();
    let payload = String::from("moved into the closure");
    stream.launch_host_fn(move || sender.send(payload.len()).unwrap()).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(receiver.recv_timeout(Duration::from_secs(10)), Ok(22));
}
