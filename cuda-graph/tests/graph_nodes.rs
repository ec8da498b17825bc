//! Explicit graphs on a real GPU: every node kind runs and does what it says, dependencies
//! order the work, graphs keep their memory alive, and misuse is refused before CUDA sees it.

mod graph_support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use cuda_graph::graph::{AsNode, DeviceLaunch, Graph, GraphBuilder, GraphExec, HostLaunch, NodeKind};
use cuda_graph::refusal::{Bounds, Empty, ExecRefusal, NodeRefusal};
use cuda_graph::{CudaError, DeviceBuffer, Event, EventOptions, PinnedBuffer, Refusal};
use gpu_test_support::require_gpu;
use graph_support::{one, per_element, run, stream};
use test_kernels::{add_scalar, fill_pattern, increment_counter, pattern, scale_add_index};

fn launch_once(graph: &Graph) -> Result<(), CudaError> {
    let stream = stream()?;
    graph.instantiate::<HostLaunch>(Default::default())?.launch(&stream)?;
    stream.synchronize()
}

#[test]
fn kernel_memset_and_memcpy_nodes_run_in_dependency_order() {
    require_gpu!();
    run(|| {
        let n = 4096u32;
        let scratch = DeviceBuffer::<u32>::zeroed(n as usize)?;
        let out = DeviceBuffer::<u32>::zeroed(n as usize)?;
        let graph = Graph::new()?;
        let fill = graph.add_memset(&scratch.ptr(), 3u32, n as usize, &[])?;
        let scale = graph.add_kernel(scale_add_index(), per_element(n), (scratch.ptr(), n, 5), &[&fill])?;
        let copy = graph.add_memcpy(&out.ptr(), &scratch.ptr(), n as usize, &[&scale])?;
        graph.add_kernel(add_scalar(), per_element(n), (out.ptr(), n, 1), &[&copy])?;
        drop(scratch); // the graph keeps the memory
        launch_once(&graph)?;
        let got = out.to_vec()?;
        for (i, value) in got.iter().enumerate() {
            assert_eq!(*value, 3 * 5 + i as u32 + 1, "element {i}");
        }
        Ok(())
    });
}

#[test]
fn an_empty_node_joins_parallel_branches() {
    require_gpu!();
    run(|| {
        let half = 1000u32;
        let data = DeviceBuffer::<u32>::zeroed(2 * half as usize)?;
        let graph = Graph::new()?;
        let low = graph.add_kernel(fill_pattern(), per_element(half), (data.ptr(), half, 1), &[])?;
        let high = graph.add_kernel(
            fill_pattern(),
            per_element(half),
            (data.ptr().offset(half as usize)?, half, 2),
            &[],
        )?;
        let join = graph.add_empty(&[&low, &high])?;
        graph.add_kernel(add_scalar(), per_element(2 * half), (data.ptr(), 2 * half, 7), &[&join])?;
        launch_once(&graph)?;
        let got = data.to_vec()?;
        for i in 0..half {
            assert_eq!(got[i as usize], pattern(i, 1).wrapping_add(7), "low {i}");
            assert_eq!(got[(half + i) as usize], pattern(i, 2).wrapping_add(7), "high {i}");
        }
        Ok(())
    });
}

#[test]
fn a_child_graph_runs_once_per_node_and_is_copied_when_added() {
    require_gpu!();
    run(|| {
        let n = 512u32;
        let data = DeviceBuffer::<u32>::zeroed(n as usize)?;
        let child = Graph::new()?;
        child.add_kernel(add_scalar(), per_element(n), (data.ptr(), n, 10), &[])?;
        let graph = Graph::new()?;
        let set = graph.add_memset(&data.ptr(), 1u32, n as usize, &[])?;
        let first = graph.add_child_graph(&child, &[&set])?;
        graph.add_child_graph(&child, &[&first])?;
        child.add_kernel(add_scalar(), per_element(n), (data.ptr(), n, 1000), &[])?; // not in the copies
        drop(child);
        launch_once(&graph)?;
        assert!(data.to_vec()?.iter().all(|&v| v == 21));
        Ok(())
    });
}

#[test]
fn host_nodes_run_on_every_launch_and_their_panics_are_reported() {
    require_gpu!();
    run(|| {
        let runs = Arc::new(AtomicU32::new(0));
        let graph = Graph::new()?;
        let counter = runs.clone();
        let count = graph.add_host(
            move || {
                counter.fetch_add(1, Ordering::SeqCst);
            },
            &[],
        )?;
        graph.add_host(|| panic!("graph host node marker 4242"), &[&count])?;
        let stream = stream()?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        for _ in 0..3 {
            exec.launch(&stream)?;
        }
        drop(exec); // waits for the last launch: the closures must outlive it
        drop(graph);
        assert_eq!(runs.load(Ordering::SeqCst), 3);
        assert_eq!(Arc::strong_count(&runs), 1, "the graph and exec released the closure");
        let panics = cuda_graph::take_unreported_errors()
            .iter()
            .filter(|err| err.to_string().contains("graph host node marker 4242"))
            .count();
        assert_eq!(panics, 3);
        Ok(())
    });
}

#[test]
fn pinned_copies_carry_data_through_a_graph_and_fence_host_access() {
    require_gpu!();
    run(|| {
        let n = 300usize;
        let mut input = PinnedBuffer::from_slice(&(0..n as u32).map(|i| i * 3).collect::<Vec<_>>())?;
        let output = PinnedBuffer::<u32>::zeroed(n)?;
        let device = DeviceBuffer::<u32>::zeroed(n)?;
        let graph = Graph::new()?;
        let up = graph.add_memcpy_from_host(&device.ptr(), &input, n, &[])?;
        let add =
            graph.add_kernel(add_scalar(), per_element(n as u32), (device.ptr(), n as u32, 2), &[&up])?;
        graph.add_memcpy_to_host(&output, &device.ptr(), n, &[&add])?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let stream = stream()?;
        exec.launch(&stream)?;
        let expected: Vec<u32> = (0..n as u32).map(|i| i * 3 + 2).collect();
        assert_eq!(output.as_slice()?, expected, "reading waits for the launch's copy");
        input.as_mut_slice()?.iter_mut().for_each(|v| *v = 100);
        exec.launch(&stream)?;
        assert!(output.as_slice()?.iter().all(|&v| v == 102));
        Ok(())
    });
}

/// The error a launch gives while a slice of a pinned buffer its nodes use is alive.
fn expect_borrowed_refusal(result: Result<(), CudaError>) {
    match result {
        Err(CudaError::InvalidArgument { call, reason }) => {
            assert_eq!(call, "GraphExec::launch");
            assert!(matches!(reason, Refusal::PinnedBorrowed { .. }), "{reason}");
        }
        other => panic!("expected the launch to be refused, got {other:?}"),
    }
}

#[test]
fn a_launch_is_refused_while_a_slice_of_its_pinned_buffers_is_alive() {
    require_gpu!();
    run(|| {
        let n = 64usize;
        let mut input = PinnedBuffer::from_slice(&vec![5u32; n])?;
        let output = PinnedBuffer::<u32>::zeroed(n)?;
        let device = DeviceBuffer::<u32>::zeroed(n)?;
        let graph = Graph::new()?;
        let up = graph.add_memcpy_from_host(&device.ptr(), &input, n, &[])?;
        let down = graph.add_memcpy_to_host(&output, &device.ptr(), n, &[&up])?;
        // The same pinned buffer in two nodes: launches lock and fence it once.
        graph.add_memcpy_to_host(&output, &device.ptr(), n, &[&down])?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let stream = stream()?;

        // A slice of the destination, taken before the launch: the launch would write under it.
        let before = output.as_slice()?;
        expect_borrowed_refusal(exec.launch(&stream));
        stream.synchronize()?;
        assert_eq!(before, vec![0; n], "a refused launch must not have copied anything");
        drop(before);

        // A writable slice of the source: the launch would read it while it changes.
        let mut writing = input.as_mut_slice()?;
        writing.fill(9);
        expect_borrowed_refusal(exec.launch(&stream));
        drop(writing);

        // Every slice dropped: the launch goes ahead, and a slice taken after it waits for it.
        exec.launch(&stream)?;
        assert_eq!(output.as_slice()?, vec![9; n]);
        assert_eq!(input.as_slice()?, vec![9; n]);
        Ok(())
    });
}

#[test]
fn graphs_with_pinned_copies_are_refused_for_device_launch() {
    require_gpu!();
    run(|| {
        let output = PinnedBuffer::<u32>::zeroed(4)?;
        let device = DeviceBuffer::<u32>::zeroed(4)?;
        let graph = Graph::new()?;
        graph.add_memcpy_to_host(&output, &device.ptr(), 4, &[])?;
        match graph.instantiate::<DeviceLaunch>(Default::default()) {
            Err(CudaError::InvalidArgument {
                call: "Graph::instantiate",
                reason: Refusal::Exec(ExecRefusal::PinnedForDeviceLaunch),
            }) => {}
            other => panic!("expected a refusal, got {other:?}"),
        }
        Ok(())
    });
}

#[test]
fn event_nodes_record_for_the_host_and_wait_for_other_streams() {
    require_gpu!();
    run(|| {
        let n = 2048u32;
        let options = EventOptions { timing: false, blocking_sync: false };
        let (source, target) =
            (DeviceBuffer::<u32>::zeroed(n as usize)?, DeviceBuffer::<u32>::zeroed(n as usize)?);
        let (producer, consumer) = (stream()?, stream()?);
        let (ready, done) =
            (Arc::new(Event::with_options(options)?), Arc::new(Event::with_options(options)?));
        let graph = Graph::new()?;
        let wait = graph.add_event_wait(&ready, &[])?;
        let copy = graph.add_memcpy(&target.ptr(), &source.ptr(), n as usize, &[&wait])?;
        graph.add_event_record(&done, &[&copy])?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        fill_pattern().launch(&producer, per_element(n), (source.ptr(), n, 77))?;
        ready.record(&producer)?;
        exec.launch(&consumer)?;
        done.synchronize()?; // the record node ran: the copy before it is complete
        let got = target.to_vec()?;
        assert!(got.iter().enumerate().all(|(i, &v)| v == pattern(i as u32, 77)));
        consumer.synchronize()
    });
}

#[test]
fn memory_alloc_and_free_nodes_give_the_graph_scratch_memory() {
    require_gpu!();
    run(|| {
        let n = 1024usize;
        let out = DeviceBuffer::<u32>::zeroed(n)?;
        let graph = Graph::new()?;
        let alloc = graph.add_mem_alloc::<u32>(n, &[])?;
        assert_eq!(alloc.bytes(), 4 * n);
        // SAFETY: the scratch pointer is used only by nodes after `alloc` and before `free`.
        let scratch = unsafe { alloc.ptr::<u32>() };
        let fill = graph.add_memset(&scratch, 9u32, n, &[&alloc])?;
        let add = graph.add_kernel(
            add_scalar(),
            per_element(n as u32),
            (scratch.clone(), n as u32, 1),
            &[&fill],
        )?;
        let copy = graph.add_memcpy(&out.ptr(), &scratch, n, &[&add])?;
        graph.add_mem_free(&alloc, &[&copy])?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let stream = stream()?;
        exec.launch(&stream)?;
        exec.launch(&stream)?; // freed by the graph itself, so it can run again
        stream.synchronize()?;
        assert!(out.to_vec()?.iter().all(|&v| v == 10));
        Ok(())
    });
}

#[test]
fn nodes_lists_each_node_with_its_kind_and_kernel_name() {
    require_gpu!();
    run(|| {
        let data = DeviceBuffer::<u32>::zeroed(64)?;
        let graph = Graph::new()?;
        let fill = graph.add_kernel(fill_pattern(), per_element(64), (data.ptr(), 64, 0), &[])?;
        let set = graph.add_memset(&data.ptr(), 0u32, 64, &[&fill])?;
        let join = graph.add_empty(&[&set])?;
        graph.add_host(|| {}, &[&join])?;
        let nodes = graph.nodes()?;
        let mut kinds: Vec<String> = nodes.iter().map(|n| n.kind().to_string()).collect();
        kinds.sort();
        assert_eq!(kinds, ["empty", "host", "kernel", "memset"]);
        let kernel = nodes.iter().find(|n| n.kind() == NodeKind::Kernel).unwrap();
        assert_eq!(kernel.kernel_name(), Some("fill_pattern"));
        assert!(kernel.to_string().ends_with("(kernel `fill_pattern`)"), "{kernel}");
        assert_eq!(kernel.as_node(), fill.as_node());
        assert_eq!(graph.node_count()?, 4);
        Ok(())
    });
}

#[test]
fn a_node_of_another_graph_is_refused_as_a_dependency() {
    require_gpu!();
    run(|| {
        let (first, second) = (Graph::new()?, Graph::new()?);
        let foreign = first.add_empty(&[])?;
        let err = second.add_empty(&[&foreign]).unwrap_err();
        assert!(
            matches!(
                err.refusal(),
                Some(Refusal::Node(NodeRefusal::DependencyOfAnotherGraph { index: 0, .. }))
            ),
            "{err}"
        );
        let (_, body): (_, GraphBuilder) = first.add_if(&first.conditional_handle(Some(1))?, &[])?;
        let inner = body.add_empty(&[])?;
        assert!(first.add_empty(&[&inner]).is_err(), "a body's node is not the parent's");
        assert!(body.add_empty(&[&foreign]).is_err(), "nor is the parent's node the body's");
        assert_eq!(second.node_count()?, 0);
        Ok(())
    });
}

#[test]
fn copies_and_fills_past_the_end_are_refused_before_cuda() {
    require_gpu!();
    run(|| {
        let (small, large) = (DeviceBuffer::<u32>::zeroed(10)?, DeviceBuffer::<u32>::zeroed(20)?);
        let graph = Graph::new()?;
        let err = graph.add_memcpy(&large.ptr(), &small.ptr(), 11, &[]).unwrap_err();
        let source = Bounds::Elements { count: 11, side: "source", len: 10 };
        assert_eq!(err.refusal(), Some(&Refusal::OutOfBounds(source)), "{err}");
        let err = graph.add_memset(&small.ptr(), 1u32, 0, &[]).unwrap_err();
        assert_eq!(err.refusal(), Some(&Refusal::Empty(Empty::Elements)), "{err}");
        let err = graph.add_memset(&small.ptr().offset(5)?, 1u32, 6, &[]).unwrap_err();
        let destination = Bounds::Elements { count: 6, side: "destination", len: 5 };
        assert_eq!(err.refusal(), Some(&Refusal::OutOfBounds(destination)), "{err}");
        assert_eq!(graph.node_count()?, 0);
        Ok(())
    });
}

#[test]
fn to_dot_describes_the_graph() {
    require_gpu!();
    run(|| {
        let counters = DeviceBuffer::<u32>::zeroed(1)?;
        let graph = Graph::new()?;
        graph.add_kernel(increment_counter(), one(), (counters.ptr(), 0), &[])?;
        let dot = graph.to_dot()?;
        assert!(dot.contains("digraph"), "{dot}");
        assert!(dot.contains("increment_counter"), "{dot}");
        assert!(graph.to_dot_verbose()?.contains("digraph"));
        Ok(())
    });
}

#[test]
fn graphs_and_execs_can_move_between_threads() {
    fn movable<T: Send>() {}
    movable::<Graph>();
    movable::<GraphBuilder>();
    movable::<GraphExec<HostLaunch>>();
    movable::<GraphExec<cuda_graph::graph::DeviceLaunch>>();
}

#[test]
fn an_impossible_geometry_is_refused_naming_the_call_that_was_given_it() {
    require_gpu!();
    run(|| {
        let out = DeviceBuffer::<u32>::zeroed(64)?;
        let graph = Graph::new()?;
        let too_many_threads = cuda_graph::LaunchConfig::new(1, 2048);
        let err = graph.add_kernel(fill_pattern(), too_many_threads, (out.ptr(), 64, 1), &[]).unwrap_err();
        assert!(
            matches!(
                err,
                CudaError::InvalidArgument {
                    call: "GraphBuilder::add_kernel",
                    reason: Refusal::BlockTooLarge { .. }
                }
            ),
            "{err:?}"
        );
        let node = graph.add_kernel(fill_pattern(), one(), (out.ptr(), 64, 1), &[])?;
        let mut exec = graph.instantiate_default()?;
        let err =
            exec.set_kernel_params(&node, fill_pattern(), too_many_threads, (out.ptr(), 64, 2)).unwrap_err();
        assert!(
            matches!(
                err,
                CudaError::InvalidArgument {
                    call: "GraphExec::set_kernel_params",
                    reason: Refusal::BlockTooLarge { .. }
                }
            ),
            "{err:?}"
        );
        Ok(())
    });
}
