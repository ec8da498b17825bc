//! Stream capture on a real GPU: captured kernels form a graph that runs, the guard leaves
//! the stream usable after a panic, an early drop or an invalidated capture, and capture into
//! an existing graph adds to it (or, dropped, adds nothing).

mod graph_support;

use std::panic::{catch_unwind, AssertUnwindSafe};

use cuda_graph::graph::{CaptureMode, Graph, HostLaunch, NodeKind};
use cuda_graph::refusal::{EditRefusal, ExecRefusal};
use cuda_graph::{CudaError, DeviceBuffer, Refusal};
use gpu_test_support::require_gpu;
use graph_support::{per_element, run, stream};
use test_kernels::{add_scalar, fill_pattern, pattern, scale_add_index};

const N: u32 = 3000;

/// The number of edges of `graph`, read through the raw API (the safe API has no edge query).
fn edge_count(graph: &Graph) -> usize {
    let mut count = 0usize;
    // SAFETY: the graph is alive for the call; null arrays ask for the count alone.
    let status = unsafe {
        cuda_graph::sys::cudaGraphGetEdges(
            graph.as_raw(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut count,
        )
    };
    assert_eq!(status, cuda_graph::sys::cudaError::cudaSuccess, "cudaGraphGetEdges");
    count
}

/// Runs each kernel's parameter check now, outside any capture.
fn warm_up() -> Result<(), CudaError> {
    fill_pattern().function()?;
    add_scalar().function()?;
    scale_add_index().function()?;
    Ok(())
}

#[test]
fn three_captured_kernels_form_a_graph_that_runs() {
    require_gpu!();
    run(|| {
        warm_up()?;
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let stream = stream()?;
        let capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
        assert!(stream.is_capturing()?);
        fill_pattern().launch(&stream, per_element(N), (data.ptr(), N, 5))?;
        scale_add_index().launch(&stream, per_element(N), (data.ptr(), N, 3))?;
        add_scalar().launch(&stream, per_element(N), (data.ptr(), N, 11))?;
        let graph = capture.end()?;
        assert!(!stream.is_capturing()?);
        stream.synchronize()?;
        assert!(data.to_vec()?.iter().all(|&v| v == 0), "captured work does not run");
        let nodes = graph.nodes()?;
        let kinds: Vec<NodeKind> = nodes.iter().map(|n| n.kind()).collect();
        assert_eq!(kinds, [NodeKind::Kernel; 3]);
        // Captured launches read back as the kernels launched, by name and by kernel.
        let names: Vec<_> = nodes.iter().map(|n| n.kernel_name()).collect();
        assert_eq!(names, [Some("fill_pattern"), Some("scale_add_index"), Some("add_scalar")]);
        let last = graph.kernel_params(&nodes[2])?;
        assert_eq!(last.config, per_element(N));
        assert!(last.launches(add_scalar())? && !last.launches(fill_pattern())?);
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        exec.launch(&stream)?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        let got = data.to_vec()?;
        for (i, value) in got.iter().enumerate() {
            let i = i as u32;
            assert_eq!(*value, pattern(i, 5).wrapping_mul(3).wrapping_add(i).wrapping_add(11), "element {i}");
        }
        Ok(())
    });
}

#[test]
fn a_captured_graph_owns_the_buffers_its_kernels_use() {
    require_gpu!();
    run(|| {
        warm_up()?;
        let stream = stream()?;
        let mut result = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let scratch = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
        fill_pattern().launch(&stream, per_element(N), (scratch.ptr(), N, 9))?;
        result.copy_from_device_async(&scratch, &stream)?;
        // From here only the captured kernel and copy refer to `scratch`'s memory.
        drop(scratch);
        let graph = capture.end()?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        drop(graph);
        exec.launch(&stream)?;
        stream.synchronize()?;
        let got = result.to_vec()?;
        for (i, value) in got.iter().enumerate() {
            assert_eq!(*value, pattern(i as u32, 9), "element {i}");
        }
        Ok(())
    });
}

#[test]
fn a_panic_during_capture_leaves_the_stream_usable() {
    require_gpu!();
    run(|| {
        warm_up()?;
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let stream = stream()?;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let _capture = stream.begin_capture(CaptureMode::ThreadLocal).unwrap();
            add_scalar().launch(&stream, per_element(N), (data.ptr(), N, 1)).unwrap();
            panic!("failure in the middle of a capture");
        }));
        assert!(outcome.is_err());
        assert!(!stream.is_capturing()?, "the guard ended the capture while unwinding");
        add_scalar().launch(&stream, per_element(N), (data.ptr(), N, 4))?;
        stream.synchronize()?;
        assert!(data.to_vec()?.iter().all(|&v| v == 4), "only the real launch ran");
        Ok(())
    });
}

#[test]
fn an_invalidated_capture_is_an_error_and_the_stream_recovers() {
    require_gpu!();
    run(|| {
        warm_up()?;
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let stream = stream()?;
        let capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
        assert!(stream.synchronize().is_err(), "waiting on a capturing stream is refused");
        assert!(capture.end().is_err(), "the capture was invalidated");
        assert!(!stream.is_capturing()?);
        fill_pattern().launch(&stream, per_element(N), (data.ptr(), N, 8))?;
        stream.synchronize()?;
        assert_eq!(data.to_vec()?[17], pattern(17, 8));
        Ok(())
    });
}

#[test]
fn capture_into_an_existing_graph_lands_after_the_given_nodes() {
    require_gpu!();
    run(|| {
        warm_up()?;
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let graph = Graph::new()?;
        let set = graph.add_memset(&data.ptr(), 2u32, N as usize, &[])?;
        let stream = stream()?;
        let capture = stream.begin_capture_to_graph(&graph, CaptureMode::ThreadLocal, &[&set])?;
        scale_add_index().launch(&stream, per_element(N), (data.ptr(), N, 3))?;
        capture.end()?;
        assert_eq!(graph.node_count()?, 2);
        assert_eq!(edge_count(&graph), 1, "the captured kernel depends on the memset");
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        let got = data.to_vec()?;
        let wrong: Vec<(usize, u32)> =
            got.iter().copied().enumerate().filter(|&(i, v)| v != 2 * 3 + i as u32).collect();
        assert!(
            wrong.is_empty(),
            "{} of {N} elements wrong, first {:?} (i alone: the kernel ran before the memset; \
             2: the memset ran after the kernel)",
            wrong.len(),
            &wrong[..wrong.len().min(4)]
        );
        Ok(())
    });
}

#[test]
fn a_dropped_capture_into_a_graph_removes_what_it_added() {
    require_gpu!();
    run(|| {
        warm_up()?;
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let graph = Graph::new()?;
        let first = graph.add_empty(&[])?;
        let stream = stream()?;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let _capture =
                stream.begin_capture_to_graph(&graph, CaptureMode::ThreadLocal, &[&first]).unwrap();
            add_scalar().launch(&stream, per_element(N), (data.ptr(), N, 1)).unwrap();
            add_scalar().launch(&stream, per_element(N), (data.ptr(), N, 1)).unwrap();
            panic!("failure while capturing into a graph");
        }));
        assert!(outcome.is_err());
        assert!(!stream.is_capturing()?);
        assert_eq!(graph.node_count()?, 1, "the partial capture was removed");
        graph.add_empty(&[&first])?;
        graph.instantiate::<HostLaunch>(Default::default())?;
        Ok(())
    });
}

#[test]
fn a_graph_being_captured_into_refuses_other_calls_from_this_thread() {
    require_gpu!();
    run(|| {
        let graph = Graph::new()?;
        let stream = stream()?;
        let capture = stream.begin_capture_to_graph(&graph, CaptureMode::ThreadLocal, &[])?;
        let err = graph.add_empty(&[]).unwrap_err();
        assert!(matches!(err.refusal(), Some(Refusal::Edit(EditRefusal::CaptureInProgress))), "{err}");
        capture.end()?;
        graph.add_empty(&[])?;
        assert_eq!(graph.node_count()?, 1);
        Ok(())
    });
}

#[test]
fn a_capture_dropped_early_discards_its_graph() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        {
            let _capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
            assert!(stream.is_capturing()?);
        }
        assert!(!stream.is_capturing()?);
        let graph = stream.begin_capture(CaptureMode::ThreadLocal)?.end()?;
        assert_eq!(graph.node_count()?, 0);
        Ok(())
    });
}

#[test]
fn launching_an_exec_into_a_capture_is_refused_and_the_capture_goes_on() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let data = DeviceBuffer::<u32>::zeroed(4)?;
        let graph = Graph::new()?;
        graph.add_memset(&data.ptr(), 5u32, 4, &[])?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
        let err = exec.launch(&stream).unwrap_err();
        assert!(
            matches!(
                err,
                CudaError::InvalidArgument {
                    call: "GraphExec::launch",
                    reason: Refusal::Exec(ExecRefusal::LaunchIntoCapture)
                }
            ),
            "{err}"
        );
        let captured = capture.end()?;
        assert_eq!(captured.node_count()?, 0, "the refused launch was captured anyway");
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(data.to_vec()?, [5; 4]);
        Ok(())
    });
}
