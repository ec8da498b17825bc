//! Where this crate meets streams and buffers it did not make (SOUNDNESS.md, "Things of other
//! code"): a capture cudarc begins on a stream this crate borrows or showed it, and a buffer
//! of ours that cudarc writes on a stream of its own. Each test first shows what happened
//! before the fix (the damage, counted) when the crate lets the work through.
#![cfg(feature = "cudarc")]

use std::sync::Arc;

use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{take_unreported_errors, Device, DeviceBuffer, Event, Refusal, Stream, StreamOptions};
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaContext, CudaStream};
use gpu_test_support::require_gpu;
use test_kernels::{fill_pattern, spin_then_fill};

/// About 100 ms of spinning on an H100/H200.
const SPIN_CYCLES: u64 = 100_000_000;
const N: u32 = 1 << 20;

fn context() -> Arc<CudaContext> {
    Device::get(0).unwrap().set_current().unwrap();
    CudaContext::new(0).expect("cudarc context on device 0")
}

fn config() -> LaunchConfig {
    LaunchConfig::for_elements(N, 256)
}

/// Ends cudarc's capture on `stream`, whatever happened inside it, and returns its graph.
fn end_cudarc_capture(stream: &Arc<CudaStream>) -> Option<cudarc::driver::CudaGraph> {
    stream.end_capture(CUgraphInstantiate_flags(0)).ok().flatten()
}

/// What a launch accepted into cudarc's capture does: the graph holds a kernel node writing
/// `buffer`'s address without owning it. Drop the buffer, make a new one (the same address
/// where the allocator reuses it), replay the graph, and count the new buffer's elements
/// that the replay overwrote. Panics with that count: the launch should have been refused.
fn show_unowned_capture(
    graph: Option<cudarc::driver::CudaGraph>, buffer: DeviceBuffer<u32>, stream: &CudaStream,
) -> ! {
    let address = buffer.as_raw();
    drop(buffer);
    let fresh = DeviceBuffer::<u32>::zeroed(N as usize).unwrap();
    let same = fresh.as_raw() == address;
    if let Some(graph) = &graph {
        graph.launch().unwrap();
        stream.synchronize().unwrap();
    }
    let overwritten = fresh.to_vec().unwrap().iter().filter(|&&v| v != 0).count();
    panic!(
        "a launch was recorded into cudarc's capture without its buffer kept: replaying cudarc's graph \
         overwrote {overwritten} of {N} elements of a new, unrelated buffer (same address: {same})"
    );
}

/// SOUNDNESS.md, "Things of other code", item 1: cudarc's safe `begin_capture` on a stream this
/// crate borrows (`Stream::borrow_cudarc`). Launches, copies and event records of this crate on it
/// must be refused while it captures; before the fix the kernel launch was recorded without its
/// buffer, and a replay after the buffer's drop wrote 1,048,576 elements of a new buffer.
#[test]
fn work_queued_into_a_capture_cudarc_began_is_refused() {
    require_gpu!();
    let ctx = context();
    let cudarc_stream = ctx.new_stream().unwrap();
    let buffer = DeviceBuffer::<u32>::zeroed(N as usize).unwrap();
    // SAFETY: no other thread captures the cudarc stream while it is borrowed.
    let borrowed = unsafe { Stream::borrow_cudarc(&cudarc_stream) }.unwrap();
    // Made before the capture: allocations are not allowed on a capturing thread.
    let mut copy = DeviceBuffer::<u32>::zeroed(N as usize).unwrap();
    let event = Event::new().unwrap();
    cudarc_stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).unwrap();
    let launched = fill_pattern().launch(&borrowed, config(), (buffer.ptr(), N, 7));
    if launched.is_ok() {
        let graph = end_cudarc_capture(&cudarc_stream);
        show_unowned_capture(graph, buffer, &cudarc_stream);
    }
    let err = launched.unwrap_err();
    assert!(matches!(err.refusal(), Some(Refusal::CapturedElsewhere)), "{err}");
    let err = copy.copy_from_device_async(&buffer, &borrowed).unwrap_err();
    assert!(matches!(err.refusal(), Some(Refusal::CapturedElsewhere | Refusal::NotCapturable)), "{err}");
    let err = event.record(&borrowed).unwrap_err();
    assert!(matches!(err.refusal(), Some(Refusal::CapturedElsewhere)), "{err}");
    drop(end_cudarc_capture(&cudarc_stream));
    // Once cudarc's capture ended, the same stream takes work again.
    fill_pattern().launch(&borrowed, config(), (buffer.ptr(), N, 7)).unwrap();
    borrowed.synchronize().unwrap();
    assert_eq!(buffer.to_vec().unwrap()[1], test_kernels::pattern(1, 7));
    ctx.check_err().unwrap();
    assert_eq!(take_unreported_errors(), []);
}

/// SOUNDNESS.md, "Things of other code", item 1, the other way in: one of this crate's streams
/// shown to cudarc (`Stream::to_cudarc`), which begins a capture on it. Work of this crate queued
/// on the stream is refused while that capture runs.
#[test]
fn a_stream_shown_to_cudarc_refuses_work_while_cudarc_captures_it() {
    require_gpu!();
    let ctx = context();
    let stream = Stream::with_options(StreamOptions { non_blocking: true, priority: None }).unwrap();
    let buffer = DeviceBuffer::<u32>::zeroed(N as usize).unwrap();
    // SAFETY: `view` is dropped below, before `stream`; it allocates nothing.
    let view = unsafe { stream.to_cudarc(&ctx) }.unwrap();
    view.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).unwrap();
    let launched = fill_pattern().launch(&stream, config(), (buffer.ptr(), N, 3));
    if launched.is_ok() {
        let graph = end_cudarc_capture(&view);
        show_unowned_capture(graph, buffer, &view);
    }
    let err = launched.unwrap_err();
    assert!(matches!(err.refusal(), Some(Refusal::CapturedElsewhere)), "{err}");
    drop(end_cudarc_capture(&view));
    drop(view);
    fill_pattern().launch(&stream, config(), (buffer.ptr(), N, 3)).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(buffer.to_vec().unwrap()[2], test_kernels::pattern(2, 3));
    ctx.check_err().unwrap();
}

/// SOUNDNESS.md, "Things of other code", item 2: a stream-ordered buffer of ours, lent to cudarc on
/// the legacy stream (`lend_to_cudarc`), written by cudarc on a non-blocking stream of its own
/// after ~100 ms of other work there. Its free must wait for that write; before the fix it was
/// queued on the legacy stream at once, the pool gave the memory to the next allocation, and
/// cudarc's late write landed there.
#[test]
fn a_buffer_lent_to_cudarc_is_freed_after_cudarc_work_on_any_stream() {
    require_gpu!();
    let ctx = context();
    let blocking = Stream::new().unwrap();
    let cudarc_stream = Stream::with_options(StreamOptions { non_blocking: true, priority: None })
        .unwrap()
        .into_cudarc(&ctx)
        .unwrap();
    // ~100 ms of work ahead of cudarc's write on its stream.
    let scratch = DeviceBuffer::<u32>::zeroed(1).unwrap();
    {
        // SAFETY: no other thread captures the cudarc stream while it is borrowed.
        let ahead = unsafe { Stream::borrow_cudarc(&cudarc_stream) }.unwrap();
        spin_then_fill().launch(&ahead, LaunchConfig::new(1, 1), (scratch.ptr(), 1, SPIN_CYCLES, 1)).unwrap();
    }

    let buffer = DeviceBuffer::<u32>::alloc_async(N as usize, &blocking).unwrap();
    blocking.synchronize().unwrap();
    let address = buffer.as_raw();
    {
        // SAFETY: cudarc's memset is waited for (its stream is synchronized) before the test ends; nothing captures the slice; the buffer's drop is what the test checks.
        let mut lent = unsafe { buffer.lend_to_cudarc(&ctx.default_stream()) }.unwrap();
        cudarc_stream.memset_zeros(&mut lent.view_mut()).unwrap();
    }
    drop(buffer);

    let mut next = DeviceBuffer::<u32>::alloc_async(N as usize, &blocking).unwrap();
    let same = next.as_raw() == address;
    next.memset_async(0x11, &blocking).unwrap();
    blocking.synchronize().unwrap();
    cudarc_stream.synchronize().unwrap();
    let zeroed = next.to_vec().unwrap().iter().filter(|&&v| v != 0x1111_1111).count();
    assert_eq!(
        zeroed, 0,
        "cudarc's write into the dropped buffer landed in the next allocation (same address: {same})"
    );
    ctx.check_err().unwrap();
    assert_eq!(take_unreported_errors(), []);
}

/// Lets `to` read and write memory of `from`'s current memory pool, where cudarc allocates
/// (`cudaDeviceGetMemPool`, `cudaMemPoolSetAccess`; this crate's own pools are others).
fn grant_current_pool_access(from: Device, to: Device) {
    use cuda_graph::sys;
    let mut pool = std::ptr::null_mut();
    // SAFETY: `pool` is a writable pool handle; the ordinal is a device of this host.
    assert_eq!(unsafe { sys::cudaDeviceGetMemPool(&mut pool, from.ordinal()) }, sys::cudaError::cudaSuccess);
    let access = sys::cudaMemAccessDesc {
        location: sys::cudaMemLocation {
            type_: sys::cudaMemLocationType::cudaMemLocationTypeDevice,
            id: to.ordinal(),
        },
        flags: sys::cudaMemAccessFlags::cudaMemAccessFlagsProtReadWrite,
    };
    // SAFETY: `pool` is the device's live pool; `access` is one valid descriptor.
    assert_eq!(unsafe { sys::cudaMemPoolSetAccess(pool, &access, 1) }, sys::cudaError::cudaSuccess);
}

/// SOUNDNESS.md, "Things of other code", item 3 (cudarc's side): a cudarc slice of device 0 used by
/// a kernel of device 1. Its shares are the same record as a buffer's, so the launch is refused
/// without peer (or pool) access, and with it the slice's last drop waits for device 1 before
/// cudarc frees it. Before the fix the share was a wrapper: no check, and the drop waited for
/// device 0 only. Needs two GPUs.
#[test]
fn a_cudarc_slice_is_checked_and_waited_for_on_another_device() {
    gpu_test_support::require_gpus!(2);
    let ctx = context();
    let (first, second) = (Device::get(0).unwrap(), Device::get(1).unwrap());
    let on_second =
        Stream::with_options_on(second, StreamOptions { non_blocking: true, priority: None }).unwrap();
    let shared = cuda_graph::interop::cudarc::CudarcSlice::new(
        ctx.default_stream().alloc_zeros::<u32>(N as usize).unwrap(),
    )
    .unwrap();
    assert_eq!(shared.ptr().device(), Some(first), "the shared slice is device 0 memory to the crate");
    if !second.peer_access_enabled(first) {
        let refused = fill_pattern().launch(&on_second, config(), (shared.ptr(), N, 9));
        let err = refused.expect_err("a device-1 kernel took device-0 cudarc memory without access");
        assert!(matches!(err.refusal(), Some(Refusal::NoPeerAccess { owner: 0, user: 1 })), "{err}");
    }
    second.enable_peer_access(first).unwrap();
    grant_current_pool_access(first, second);
    let address = shared.ptr().addr();
    spin_then_fill().launch(&on_second, config(), (shared.ptr(), N, SPIN_CYCLES, 9)).unwrap();
    drop(shared); // the last share: waits for device 1 (and 0), then cudarc frees the slice
    let next = ctx.default_stream().alloc_zeros::<u32>(N as usize).unwrap();
    ctx.default_stream().synchronize().unwrap();
    on_second.synchronize().unwrap();
    let same = {
        use cudarc::driver::DevicePtr as _;
        let stream = ctx.default_stream();
        let (addr, _record) = next.device_ptr(&stream);
        addr == address
    };
    let written = ctx.default_stream().clone_dtoh(&next).unwrap().iter().filter(|&&v| v != 0).count();
    assert_eq!(written, 0, "device 1's late write landed in cudarc's next allocation (same address: {same})");
    ctx.check_err().unwrap();
    assert_eq!(take_unreported_errors(), []);
}

/// The review's H2: a context of other code made current on the thread (cudarc's safe
/// `CudaContext::new_non_primary`). What this crate makes must live in the device's primary
/// context, which only `cudaDeviceReset` tears down: made in the other context, it would
/// dangle once cudarc destroys that context.
#[test]
fn what_the_crate_makes_lives_in_the_primary_context_whatever_is_current() {
    require_gpu!();
    Device::get(0).unwrap().set_current().unwrap();
    let other = CudaContext::new_non_primary(0, 0).expect("a non-primary cudarc context");
    let stream = Stream::new().unwrap();
    let buffer = DeviceBuffer::<u32>::zeroed(N as usize).unwrap();
    let event = Event::new().unwrap();
    drop(other); // cudarc destroys its context, and what was made in it
    fill_pattern().launch(&stream, config(), (buffer.ptr(), N, 3)).unwrap();
    event.record(&stream).unwrap();
    event.synchronize().unwrap();
    assert_eq!(buffer.to_vec().unwrap()[5], test_kernels::pattern(5, 3));
    assert_eq!(take_unreported_errors(), []);
}

/// The review's H1: cudarc makes its context current without the crate knowing, and its
/// default stream is the null handle, which names the default stream of whichever context is
/// current. A launch on the borrowed default stream of device 1 must run there (and the
/// buffer of device 0 it writes must then wait for device 1), not wherever the crate last
/// left the thread. Needs two GPUs.
#[test]
fn a_borrowed_default_stream_runs_on_its_own_device_whatever_is_current() {
    gpu_test_support::require_gpus!(2);
    let (first, second) = (Device::get(0).unwrap(), Device::get(1).unwrap());
    let ctx1 = CudaContext::new(1).expect("cudarc context on device 1");
    second.enable_peer_access(first).unwrap();
    first.set_current().unwrap();
    let null = ctx1.default_stream();
    // SAFETY: no other thread captures cudarc's default stream meanwhile.
    let stream = unsafe { Stream::borrow_cudarc(&null) }.unwrap();
    assert_eq!(stream.device(), second, "cudarc's default stream of device 1");
    let data = DeviceBuffer::<u32>::zeroed(N as usize).unwrap(); // device 0's
    null.synchronize().unwrap(); // cudarc makes device 1 current behind the crate's back
    spin_then_fill().launch(&stream, config(), (data.ptr(), N, SPIN_CYCLES, 5)).unwrap();
    let address = data.as_raw();
    drop(data); // must wait for device 1's kernel
    first.set_current().unwrap();
    let victim = DeviceBuffer::<u32>::zeroed(N as usize).unwrap();
    let same = victim.as_raw() == address;
    second.synchronize().unwrap();
    first.synchronize().unwrap();
    let written = victim.to_vec().unwrap().iter().filter(|&&v| v != 0).count();
    assert_eq!(
        written, 0,
        "the kernel wrote a buffer allocated after its own was dropped (same address: {same})"
    );
    assert_eq!(take_unreported_errors(), []);
}

/// A context of other code current on the thread while the crate launches on its own stream
/// (of the primary context): the launch must not run in the other context (the crate's
/// driver path launches only when the stream's own context is current) and must run right.
#[test]
fn a_launch_while_a_context_of_other_code_is_current_runs_in_the_streams_context() {
    require_gpu!();
    Device::get(0).unwrap().set_current().unwrap();
    let stream = Stream::new().unwrap();
    let buffer = DeviceBuffer::<u32>::zeroed(N as usize).unwrap();
    let other = CudaContext::new_non_primary(0, 0).expect("a non-primary cudarc context");
    let launched = fill_pattern().launch(&stream, config(), (buffer.ptr(), N, 9));
    let finished = launched.and_then(|()| stream.synchronize());
    drop(other);
    finished.expect("the launch on the crate's stream, another context current");
    assert_eq!(buffer.to_vec().unwrap()[77], test_kernels::pattern(77, 9));
    assert_eq!(take_unreported_errors(), []);
}
