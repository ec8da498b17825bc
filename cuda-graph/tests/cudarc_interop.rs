//! cudarc 0.19.10 and this crate side by side (the `cudarc` feature): one primary
//! context seen by both, cudarc memory in graphs (a WHILE loop over it), streams and buffers
//! both ways, cudarc launches captured into a graph; on a real GPU (skipped without one).
#![cfg(feature = "cudarc")]

use std::sync::Arc;

use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::interop::cudarc::{capture_cudarc, same_primary_context, CudarcSlice};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::memory::MemoryKind;
use cuda_graph::{Device, DeviceBuffer, Refusal, Stream, StreamOptions};
use cudarc::driver::{CudaContext, LaunchConfig as CudarcLaunch, PushKernelArg};
use cudarc::nvrtc::Ptx;
use test_kernels::{add_scalar, fill_pattern, pattern, while_step};

fn context() -> Arc<CudaContext> {
    Device::get(0).unwrap().set_current().unwrap();
    CudaContext::new(0).expect("cudarc context on device 0")
}

fn non_blocking() -> Stream {
    Stream::with_options(StreamOptions { non_blocking: true, priority: None }).unwrap()
}

#[test]
fn the_runtime_and_cudarc_see_one_primary_context() {
    gpu_test_support::require_gpu!();
    let ctx = context();
    assert!(same_primary_context(&ctx).unwrap());
    // An address cudarc allocated is device memory of the runtime's context, and the
    // runtime's memory is readable through cudarc.
    let slice = ctx.default_stream().clone_htod(&[5u32, 6, 7]).unwrap();
    let shared = CudarcSlice::new(slice).unwrap();
    assert_eq!(MemoryKind::of(shared.ptr().addr()).unwrap(), MemoryKind::Device);
    let ours = DeviceBuffer::from_slice(&[1u32, 2, 3]).unwrap();
    // SAFETY: cudarc uses the slice only on the stream synchronized below, and captures nothing.
    let lent = unsafe { ours.lend_to_cudarc(&ctx.default_stream()) }.unwrap();
    assert_eq!(ctx.default_stream().clone_dtoh(&*lent).unwrap(), [1, 2, 3]);
    // A non-primary context is refused by name.
    let other = CudaContext::new_non_primary(0, 0).unwrap();
    // SAFETY: no other thread captures the cudarc stream while it is borrowed.
    let err = unsafe { Stream::borrow_cudarc(&other.default_stream()) }.unwrap_err();
    assert!(matches!(err.refusal(), Some(Refusal::NotPrimaryContext)), "{err}");
}

#[test]
fn a_while_graph_runs_its_body_on_cudarc_memory() {
    gpu_test_support::require_gpu!();
    let ctx = context();
    let cudarc_stream = ctx.new_stream().unwrap();
    let start: Vec<u32> = (0..1000).collect();
    let data = CudarcSlice::new(cudarc_stream.clone_htod(&start).unwrap()).unwrap();
    let counter = CudarcSlice::new(cudarc_stream.alloc_zeros::<u32>(1).unwrap()).unwrap();
    for limit in [1u32, 7, 20] {
        let graph = Graph::new().unwrap();
        let handle = graph.conditional_handle(Some(1)).unwrap();
        let reset = graph.add_memset(&counter.ptr(), 0u32, 1, &[]).unwrap();
        let (_, body) = graph.add_while(&handle, &[&reset]).unwrap();
        let step = body
            .add_kernel(add_scalar(), LaunchConfig::for_elements(1000, 256), (data.ptr(), 1000, 2), &[])
            .unwrap();
        body.add_kernel(while_step(), LaunchConfig::new(1, 1), (handle, counter.ptr(), limit), &[&step])
            .unwrap();
        let exec = graph.instantiate::<HostLaunch>(Default::default()).unwrap();
        drop(graph);
        // SAFETY: no other thread captures the cudarc stream while it is borrowed.
        let stream = unsafe { Stream::borrow_cudarc(&cudarc_stream) }.unwrap();
        exec.launch(&stream).unwrap();
        stream.synchronize().unwrap();
        assert_eq!(cudarc_stream.clone_dtoh(counter.cudarc()).unwrap(), [limit]);
    }
    // 1 + 7 + 20 iterations, each adding 2.
    let expected: Vec<u32> = start.iter().map(|x| x + 2 * 28).collect();
    assert_eq!(cudarc_stream.clone_dtoh(data.cudarc()).unwrap(), expected);
    // The graph and exec are gone: the slice comes back to cudarc.
    let back = data.into_cudarc().expect("nothing else shares it");
    assert_eq!(back.len(), 1000);
    ctx.check_err().unwrap();
}

#[test]
fn graphs_keep_cudarc_slices_alive_after_their_last_user_handle() {
    gpu_test_support::require_gpu!();
    let ctx = context();
    let cudarc_stream = ctx.default_stream();
    let out = DeviceBuffer::<u32>::zeroed(256).unwrap();
    let exec = {
        let source = CudarcSlice::new(cudarc_stream.clone_htod(&[9u32; 256]).unwrap()).unwrap();
        let graph = Graph::new().unwrap();
        let copy = graph.add_memcpy(&out.ptr(), &source.ptr(), 256, &[]).unwrap();
        graph
            .add_kernel(add_scalar(), LaunchConfig::for_elements(256, 256), (out.ptr(), 256, 1), &[&copy])
            .unwrap();
        let shared = source.ptr();
        let refused = source.into_cudarc().expect_err("the graph and a pointer share it");
        drop((refused, shared));
        graph.instantiate::<HostLaunch>(Default::default()).unwrap()
    };
    let stream = non_blocking();
    exec.launch(&stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap(), vec![10; 256]);
    drop(exec); // the last share: waits for the device, then cudarc frees the slice
    ctx.check_err().unwrap();
    assert!(cuda_graph::take_unreported_errors().is_empty());
}

#[test]
fn streams_and_buffers_go_both_ways() {
    gpu_test_support::require_gpu!();
    let ctx = context();
    // A cudarc stream runs our kernels in order with cudarc's own work on it.
    let cudarc_stream = ctx.new_stream().unwrap();
    let ours = DeviceBuffer::<u32>::zeroed(500).unwrap();
    // SAFETY: no other thread captures the cudarc stream while it is borrowed.
    let borrowed = unsafe { Stream::borrow_cudarc(&cudarc_stream) }.unwrap();
    fill_pattern().launch(&borrowed, LaunchConfig::for_elements(500, 128), (ours.ptr(), 500, 3)).unwrap();
    // SAFETY: cudarc uses the slice only on this stream, synchronized below; nothing captures it.
    let lent = unsafe { ours.lend_to_cudarc(&cudarc_stream) }.unwrap();
    let expected: Vec<u32> = (0..500).map(|i| pattern(i, 3)).collect();
    assert_eq!(
        cudarc_stream.clone_dtoh(&*lent).unwrap(),
        expected,
        "same stream: cudarc's copy after our kernel"
    );
    // cudarc writes into our buffer through a lent view.
    let mut lent = lent;
    cudarc_stream.memset_zeros(&mut lent.view_mut()).unwrap();
    drop(lent);
    cudarc_stream.synchronize().unwrap();
    assert_eq!(ours.to_vec().unwrap(), vec![0; 500]);
    // Our stream handed to cudarc for good.
    let handed = non_blocking().into_cudarc(&ctx).unwrap();
    let copied = handed.clone_htod(&[4u32, 5]).unwrap();
    assert_eq!(handed.clone_dtoh(&copied).unwrap(), [4, 5]);
    ctx.check_err().unwrap();
}

#[test]
fn cudarc_launches_are_captured_or_refused_with_a_reason() {
    gpu_test_support::require_gpu!();
    let stream = non_blocking();
    // Event tracking on, several streams: refused before capturing, saying why.
    let tracking = context();
    let _second_stream = tracking.new_stream().unwrap();
    // SAFETY: refused before `f` runs; nothing is captured.
    let err = unsafe { capture_cudarc(&stream, &tracking, |_| ()) }.unwrap_err();
    assert!(matches!(err.refusal(), Some(Refusal::CudarcEventTracking)), "{err}");

    // Tracking off: cudarc's kernel launch (PTX loaded by cudarc) is captured.
    let ctx = CudaContext::new(0).unwrap();
    // SAFETY: no slice of this context exists yet; the test orders its streams itself.
    unsafe { ctx.disable_event_tracking() };
    let module = ctx.load_module(Ptx::from_src(module_images::PLAIN_PTX)).unwrap();
    let add = module.load_function("mod_add").unwrap();
    let mut data = ctx.default_stream().clone_htod(&(0..300u32).collect::<Vec<_>>()).unwrap();
    ctx.default_stream().synchronize().unwrap();
    let (n, value) = (300u32, 4u32);
    let record = |cudarc_stream: &Arc<cudarc::driver::CudaStream>| {
        let mut launch = cudarc_stream.launch_builder(&add);
        launch.arg(&mut data).arg(&n).arg(&value);
        // SAFETY: mod_add(uint32_t* data, uint32_t n, uint32_t value) gets a 300-element
        // slice and n = 300: it writes data[i] only for i < n.
        unsafe { launch.launch(CudarcLaunch::for_num_elems(n)) }
    };
    // SAFETY: `data` outlives the graph and its exec (dropped before it, below); nothing is
    // allocated during the capture.
    let (graph, launched) = unsafe { capture_cudarc(&stream, &ctx, record) }.unwrap();
    launched.unwrap();
    let exec = graph.instantiate::<HostLaunch>(Default::default()).unwrap();
    for _ in 0..3 {
        exec.launch(&stream).unwrap();
    }
    stream.synchronize().unwrap();
    drop((exec, graph));
    let expected: Vec<u32> = (0..300).map(|x| x + 12).collect();
    assert_eq!(ctx.default_stream().clone_dtoh(&data).unwrap(), expected);
    ctx.check_err().unwrap();
}
