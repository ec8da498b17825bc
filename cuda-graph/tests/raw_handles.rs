//! Raw handles in and out: streams, events, graphs, execs and device memory made
//! by raw calls adopted, borrowed and handed back, on a real GPU (skipped without one).

use std::ffi::c_void;
use std::ptr;

use cuda_graph::graph::{Graph, GraphExec, HostLaunch};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::refusal::ExecRefusal;
use cuda_graph::{sys, Device, DeviceBuffer, DevicePtr, Event, Refusal, Stream};
use test_kernels::{add_scalar, fill_pattern, pattern};

fn setup() {
    Device::get(0).unwrap().set_current().unwrap();
}

fn ok(status: sys::cudaError_t) {
    assert_eq!(status, sys::cudaError::cudaSuccess);
}

#[test]
fn an_adopted_stream_runs_work_and_keeps_its_flags() {
    gpu_test_support::require_gpu!();
    setup();
    let mut raw = ptr::null_mut();
    // SAFETY: valid out-pointer; the flag is a defined stream flag.
    ok(unsafe { sys::cudaStreamCreateWithFlags(&mut raw, sys::cudaStreamNonBlocking) });
    // SAFETY: a live stream of device 0, owned by nothing else from here on.
    let stream = unsafe { Stream::from_raw(raw) }.unwrap();
    let data = DeviceBuffer::<u32>::zeroed(1000).unwrap();
    fill_pattern().launch(&stream, LaunchConfig::for_elements(1000, 128), (data.ptr(), 1000, 5)).unwrap();
    stream.synchronize().unwrap();
    let expected: Vec<u32> = (0..1000).map(|i| pattern(i, 5)).collect();
    assert_eq!(data.to_vec().unwrap(), expected);
    // Handed back out, it is still alive: the raw owner destroys it.
    let raw_again = stream.into_raw();
    assert_eq!(raw_again, raw);
    let mut flags = 0;
    // SAFETY: the stream is alive (into_raw did not destroy it); `flags` is writable.
    ok(unsafe { sys::cudaStreamGetFlags(raw_again, &mut flags) });
    assert_eq!(flags, sys::cudaStreamNonBlocking);
    // SAFETY: owned by this test again, destroyed once.
    ok(unsafe { sys::cudaStreamDestroy(raw_again) });
}

#[test]
fn a_borrowed_stream_is_not_destroyed_when_dropped() {
    gpu_test_support::require_gpu!();
    setup();
    let owner = Stream::new().unwrap();
    let data = DeviceBuffer::<u32>::zeroed(256).unwrap();
    {
        // SAFETY: `owner` outlives this block.
        let borrowed = unsafe { Stream::borrow_raw(owner.as_raw()) }.unwrap();
        add_scalar().launch(&borrowed, LaunchConfig::for_elements(256, 128), (data.ptr(), 256, 3)).unwrap();
    }
    // Still usable: the borrow's drop left it alone.
    add_scalar().launch(&owner, LaunchConfig::for_elements(256, 128), (data.ptr(), 256, 4)).unwrap();
    owner.synchronize().unwrap();
    assert_eq!(data.to_vec().unwrap(), vec![7; 256]);
    // The legacy default stream can be borrowed, not owned.
    // SAFETY: the null handle names the legacy default stream, alive as long as the device.
    let legacy = unsafe { Stream::borrow_raw(ptr::null_mut()) }.unwrap();
    legacy.synchronize().unwrap();
    // SAFETY: refused before any use.
    assert!(unsafe { Stream::from_raw(ptr::null_mut()) }.is_err());
}

#[test]
fn events_in_and_out_keep_working() {
    gpu_test_support::require_gpu!();
    setup();
    let stream = Stream::new().unwrap();
    let mut raw = ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { sys::cudaEventCreate(&mut raw) });
    // SAFETY: a live event of device 0 owned by nothing else.
    let event = unsafe { Event::from_raw(raw) }.unwrap();
    event.record(&stream).unwrap();
    {
        // SAFETY: `event` outlives the borrow.
        let borrowed = unsafe { Event::borrow_raw(event.as_raw()) }.unwrap();
        borrowed.synchronize().unwrap();
        assert!(borrowed.is_complete().unwrap());
    }
    let raw_again = event.into_raw();
    // SAFETY: the event is alive: neither the borrow nor into_raw destroyed it.
    ok(unsafe { sys::cudaEventQuery(raw_again) });
    // SAFETY: owned by this test again, destroyed once.
    ok(unsafe { sys::cudaEventDestroy(raw_again) });
}

#[test]
fn graphs_and_execs_handed_out_run_with_what_their_nodes_kept() {
    gpu_test_support::require_gpu!();
    setup();
    let stream = Stream::new().unwrap();
    let data = DeviceBuffer::<u32>::zeroed(512).unwrap();
    let graph = Graph::new().unwrap();
    graph.add_kernel(add_scalar(), LaunchConfig::for_elements(512, 128), (data.ptr(), 512, 2), &[]).unwrap();
    // Shared with an exec: refused, and the graph comes back.
    let exec = graph.instantiate::<HostLaunch>(Default::default()).unwrap();
    let graph = graph.into_raw().expect_err("an exec shares the graph");
    drop(exec);
    let raw_graph = graph.into_raw().expect("nothing else shares the graph");
    let mut raw_exec = ptr::null_mut();
    // SAFETY: the graph is alive and owned by this test now; valid out-pointer, no flags.
    ok(unsafe { sys::cudaGraphInstantiateWithFlags(&mut raw_exec, raw_graph, 0) });
    // SAFETY: a live host-launch exec owned by nobody else; its kernel node points into
    // `data`, which the leaked graph family keeps alive forever.
    let exec = unsafe { GraphExec::<HostLaunch>::from_raw(raw_exec) }.unwrap();
    exec.launch(&stream).unwrap();
    exec.launch(&stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(data.to_vec().unwrap(), vec![4; 512]);
    // Out again: the raw exec still launches.
    let raw_exec = exec.into_raw();
    // SAFETY: the exec and the stream are alive.
    ok(unsafe { sys::cudaGraphLaunch(raw_exec, stream.as_raw()) });
    stream.synchronize().unwrap();
    assert_eq!(data.to_vec().unwrap(), vec![6; 512]);
    // SAFETY: both handles are owned by this test, destroyed once, no launch pending.
    ok(unsafe { sys::cudaGraphExecDestroy(raw_exec) });
    // SAFETY: as above.
    ok(unsafe { sys::cudaGraphDestroy(raw_graph) });
}

#[test]
fn device_launch_execs_are_not_adopted() {
    gpu_test_support::require_gpu!();
    setup();
    let graph = Graph::new().unwrap();
    let data = DeviceBuffer::<u32>::zeroed(4).unwrap();
    graph.add_memset(&data.ptr(), 1u32, 4, &[]).unwrap();
    let raw = graph.instantiate::<cuda_graph::DeviceLaunch>(Default::default()).unwrap().into_raw();
    // SAFETY: a live exec owned by nobody else; refused before it is owned.
    let err = unsafe { GraphExec::<HostLaunch>::from_raw(raw) }.unwrap_err();
    assert!(matches!(err.refusal(), Some(Refusal::Exec(ExecRefusal::DeviceLaunchNotAdoptable))), "{err}");
    // SAFETY: still owned by this test; destroyed once.
    ok(unsafe { sys::cudaGraphExecDestroy(raw) });
}

#[test]
fn device_memory_in_and_out() {
    gpu_test_support::require_gpu!();
    setup();
    let stream = Stream::new().unwrap();
    let mut raw: *mut c_void = ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { sys::cudaMalloc(&mut raw, 64 * 4) });
    // SAFETY: 256 bytes of cudaMalloc memory on device 0, owned by nothing else.
    let buffer = unsafe { DeviceBuffer::<u32>::from_raw(raw, 64) }.unwrap();
    fill_pattern().launch(&stream, LaunchConfig::for_elements(64, 64), (buffer.ptr(), 64, 9)).unwrap();
    stream.synchronize().unwrap();
    let expected: Vec<u32> = (0..64).map(|i| pattern(i, 9)).collect();
    assert_eq!(buffer.to_vec().unwrap(), expected);
    // Shared with a pointer: refused, the buffer comes back.
    let shared = buffer.ptr();
    let buffer = buffer.into_raw().expect_err("a pointer shares the memory");
    drop(shared);
    let out = buffer.into_raw().expect("the only owner");
    assert_eq!(out, raw);
    // A pointer that keeps an owner: the memory of another buffer, kept by its allocation.
    let other = DeviceBuffer::<u32>::zeroed(32).unwrap();
    // SAFETY: `keep_alive` is the buffer's own allocation, which frees after the device is idle.
    let ptr = unsafe { DevicePtr::<u32>::from_raw_with_owner(other.ptr().addr(), 32, other.keep_alive()) };
    drop(other);
    add_scalar().launch(&stream, LaunchConfig::for_elements(32, 32), (ptr.clone(), 32, 11)).unwrap();
    stream.synchronize().unwrap();
    let mut host = vec![0u32; 32];
    // SAFETY: `ptr` keeps 128 bytes of device memory alive; `host` holds as many.
    ok(unsafe {
        sys::cudaMemcpy(
            host.as_mut_ptr().cast(),
            ptr.addr() as *const c_void,
            128,
            sys::cudaMemcpyKind::cudaMemcpyDeviceToHost,
        )
    });
    assert_eq!(host, vec![11; 32]);
    // SAFETY: `out` is owned by this test; the stream was synchronized.
    ok(unsafe { sys::cudaFree(out) });
}
