//! Validation before device-launch instantiation: refused node kinds are named (index, kind,
//! why) instead of CUDA's bare cudaErrorInvalidValue; kernel, memset, device and pinned
//! memcpy nodes pass and run.

mod support;

use std::sync::Arc;

use cuda_graph::graph::{AsNode, DeviceLaunch, Graph, NodeKind};
use cuda_graph::graph::{Dependency, KernelNode};
use cuda_graph::kernel::KernelAttributes;
use cuda_graph::Device;
use cuda_graph::{DeviceBuffer, Event, PinnedBuffer, Stream};
use device_launch::{
    instantiate_for_device, validate, DeviceExec, Error, ErrorSlot, Launcher, NotUploaded,
    CHILD_GRAPH_NODES_ALLOWED, PROGRAMMATIC_EDGES_ALLOWED,
};
use device_launch_kernels::{dl_fire_and_forget_one, dl_mark, dl_pdl_count};
use gpu_test_support::require_gpu;
use support::{one, run, stream};

/// The index `graph.nodes()` gives `node`.
fn index_of(graph: &Graph, node: &dyn AsNode) -> Result<usize, Error> {
    let node = node.as_node();
    Ok(graph.nodes()?.iter().position(|info| info.as_node() == node).expect("node of this graph"))
}

/// Kernel and memset nodes first, so the refused node is not the first one.
fn allowed_prefix(graph: &Graph, data: &DeviceBuffer<u32>) -> Result<(), Error> {
    let fill = graph.add_memset(&data.ptr(), 0u32, data.len(), &[])?;
    graph.add_kernel(dl_mark(), one(), (data.ptr(), 0), &[&fill])?;
    Ok(())
}

/// What CUDA 13.0 itself does with a device-launch instantiation of such a node.
#[derive(PartialEq)]
enum Cuda {
    Refuses,
    /// Measured on driver 580 / CUDA 13.0 for a child graph of memset nodes; the crate
    /// refuses it while `CHILD_GRAPH_NODES_ALLOWED` is false.
    Accepts,
}

fn assert_refused(graph: &Graph, node: &dyn AsNode, kind: NodeKind, cuda: Cuda) -> Result<(), Error> {
    let index = index_of(graph, node)?;
    let err = instantiate_for_device(graph).unwrap_err();
    assert_eq!(err, Error::UnsupportedNode { index, kind });
    assert_eq!(validate(graph).unwrap_err(), err);
    let text = err.to_string();
    assert!(
        text.starts_with("device-launch graphs may contain only kernel, memcpy and memset nodes;"),
        "{text}"
    );
    assert!(text.contains(&format!("node {index} is a")), "{text}");
    // What CUDA does without the check, pinned so that a driver that changes it is noticed.
    let by_cuda = graph.instantiate::<DeviceLaunch>(Default::default());
    match cuda {
        Cuda::Refuses => assert!(by_cuda.is_err(), "CUDA accepted a {kind} node"),
        Cuda::Accepts => assert!(by_cuda.is_ok(), "CUDA now refuses a {kind} node: {:?}", by_cuda.err()),
    }
    Ok(())
}

#[test]
fn a_host_node_is_refused_with_its_index_and_kind() {
    require_gpu!();
    run(|| {
        let data = DeviceBuffer::<u32>::zeroed(16)?;
        let graph = Graph::new()?;
        allowed_prefix(&graph, &data)?;
        let host = graph.add_host(|| {}, &[])?;
        assert_refused(&graph, &host, NodeKind::Host, Cuda::Refuses)?;
        let text = instantiate_for_device(&graph).unwrap_err().to_string();
        assert!(text.contains("is a host node (CUDA 13.0 refuses it with cudaErrorInvalidValue)"), "{text}");
        Ok(())
    });
}

#[test]
fn an_empty_node_is_refused_with_its_index_and_kind() {
    require_gpu!();
    run(|| {
        let data = DeviceBuffer::<u32>::zeroed(16)?;
        let graph = Graph::new()?;
        allowed_prefix(&graph, &data)?;
        let empty = graph.add_empty(&[])?;
        assert_refused(&graph, &empty, NodeKind::Empty, Cuda::Refuses)?;
        assert!(instantiate_for_device(&graph).unwrap_err().to_string().contains("is an empty node"));
        Ok(())
    });
}

#[test]
fn child_graph_memory_event_and_conditional_nodes_are_refused_by_the_crate() {
    require_gpu!();
    run(|| {
        let data = DeviceBuffer::<u32>::zeroed(16)?;

        let child = Graph::new()?;
        child.add_memset(&data.ptr(), 1u32, 16, &[])?;
        let graph = Graph::new()?;
        allowed_prefix(&graph, &data)?;
        let node = graph.add_child_graph(&child, &[])?;
        if !CHILD_GRAPH_NODES_ALLOWED {
            assert_refused(&graph, &node, NodeKind::ChildGraph, Cuda::Accepts)?;
        }

        let graph = Graph::new()?;
        allowed_prefix(&graph, &data)?;
        let alloc = graph.add_mem_alloc::<u32>(64, &[])?;
        graph.add_mem_free(&alloc, &[&alloc])?;
        assert_refused(&graph, &alloc, NodeKind::MemAlloc, Cuda::Refuses)?;

        let graph = Graph::new()?;
        allowed_prefix(&graph, &data)?;
        let record = graph.add_event_record(&Arc::new(Event::new()?), &[])?;
        assert_refused(&graph, &record, NodeKind::EventRecord, Cuda::Refuses)?;

        let graph = Graph::new()?;
        allowed_prefix(&graph, &data)?;
        let handle = graph.conditional_handle(Some(1))?;
        let (node, body) = graph.add_if(&handle, &[])?;
        body.add_memset(&data.ptr(), 2u32, 16, &[])?;
        assert_refused(&graph, &node, NodeKind::Conditional, Cuda::Refuses)?;
        Ok(())
    });
}

#[test]
fn kernel_memset_and_device_memcpy_nodes_are_accepted_and_run() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let (a, b) = (DeviceBuffer::from_slice(&[5u32, 6, 7, 8])?, DeviceBuffer::<u32>::zeroed(4)?);
        let graph = Graph::new()?;
        let mark = graph.add_kernel(dl_mark(), one(), (a.ptr(), 0), &[])?;
        let copy = graph.add_memcpy(&b.ptr(), &a.ptr(), 4, &[&mark])?;
        graph.add_memset(&a.ptr(), 0u32, 4, &[&copy])?;
        validate(&graph)?;
        let exec = instantiate_for_device(&graph)?.upload(&stream)?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(b.to_vec()?, [6, 6, 7, 8]);
        assert_eq!(a.to_vec()?, [0, 0, 0, 0]);
        Ok(())
    });
}

#[test]
fn a_copy_from_pinned_host_memory_is_refused_naming_the_node() {
    require_gpu!();
    run(|| {
        let input = PinnedBuffer::from_slice(&[5u32, 6, 7, 8])?;
        let a = DeviceBuffer::<u32>::zeroed(4)?;
        let graph = Graph::new()?;
        let mark = graph.add_kernel(dl_mark(), one(), (a.ptr(), 0), &[])?;
        let upload = graph.add_memcpy_from_host(&a.ptr(), &input, 4, &[&mark])?;
        let index = index_of(&graph, &upload)?;
        let err = instantiate_for_device(&graph).unwrap_err();
        assert!(matches!(err, Error::UnsupportedMemcpy { index: i, .. } if i == index), "{err}");
        assert!(err.to_string().contains("pinned host memory as its source"), "{err}");
        Ok(())
    });
}

/// Uploads `exec` and fire-and-forgets it once from a launcher kernel; `Ok` once the launch
/// was accepted on the device and the stream synchronized.
fn launch_from_device(exec: DeviceExec<NotUploaded>, stream: &Stream) -> Result<(), Error> {
    let uploaded = exec.upload(stream)?;
    let slot = ErrorSlot::new()?;
    Launcher::new(dl_fire_and_forget_one(), one(), (uploaded.handle().arg(), slot.ptr()))?.run(stream, &slot)
}

/// A child graph holding a kernel, in a device-launched graph: what the crate does follows
/// `CHILD_GRAPH_NODES_ALLOWED` (set from `device-launch/repro/child_graph_device_launch.cu`).
/// Refused while it is false (naming the node). Once true: validated inside (a host node two
/// children deep is named by its path), instantiated, uploaded, launched from the device, and
/// the child's kernel ran. With `PROBE_CHILD_GRAPHS=1` (or once allowed), it also records what
/// CUDA itself does with the graph, bypassing the crate's check.
#[test]
fn a_child_graph_node_is_handled_as_the_probe_decided() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let mut counters = DeviceBuffer::<u32>::zeroed(2)?;
        let child = Graph::new()?;
        child.add_kernel(dl_mark(), one(), (counters.ptr(), 1), &[])?;
        let graph = Graph::new()?;
        let first = graph.add_kernel(dl_mark(), one(), (counters.ptr(), 0), &[])?;
        let node = graph.add_child_graph(&child, &[&first])?;

        let probe = std::env::var("PROBE_CHILD_GRAPHS").is_ok_and(|v| v == "1");
        if probe || CHILD_GRAPH_NODES_ALLOWED {
            // What CUDA does without the crate's check (the probe's `kernel` variant).
            let outcome = match graph.instantiate::<DeviceLaunch>(Default::default()) {
                Err(err) => format!("instantiation refused: {err}"),
                Ok(exec) => match launch_from_device(DeviceExec::from(exec), &stream) {
                    Err(err) => format!("instantiated, device launch failed: {err}"),
                    Ok(()) => format!(
                        "instantiated and launched from the device; counters {:?}",
                        counters.to_vec()?
                    ),
                },
            };
            eprintln!("CUDA with a child graph holding a kernel: {outcome}");
            counters.copy_from_host(&[0, 0])?;
        }

        if !CHILD_GRAPH_NODES_ALLOWED {
            let index = index_of(&graph, &node)?;
            assert_eq!(
                instantiate_for_device(&graph).unwrap_err(),
                Error::UnsupportedNode { index, kind: NodeKind::ChildGraph }
            );
            return Ok(());
        }
        validate(&graph)?;
        launch_from_device(instantiate_for_device(&graph)?, &stream)?;
        assert_eq!(counters.to_vec()?, [1, 1], "the parent's kernel and the child's kernel ran once each");

        // A refused node inside nested children is named by the path to it.
        let inner = Graph::new()?;
        inner.add_kernel(dl_mark(), one(), (counters.ptr(), 1), &[])?;
        inner.add_host(|| {}, &[])?;
        let outer = Graph::new()?;
        outer.add_kernel(dl_mark(), one(), (counters.ptr(), 1), &[])?;
        outer.add_child_graph(&inner, &[])?;
        let graph = Graph::new()?;
        graph.add_kernel(dl_mark(), one(), (counters.ptr(), 0), &[])?;
        let node = graph.add_child_graph(&outer, &[])?;
        let index = index_of(&graph, &node)?;
        match validate(&graph).unwrap_err() {
            Error::UnsupportedInChildGraph { index: i, path, problem } => {
                assert_eq!(i, index);
                assert_eq!(path.len(), 2, "{path:?}");
                assert!(problem.contains("host node"), "{problem}");
            }
            other => panic!("{other}"),
        }
        Ok(())
    });
}

/// A chain of kernels joined by programmatic edges, launched from the device: what the crate
/// does follows `PROGRAMMATIC_EDGES_ALLOWED`, and what CUDA itself does is pinned
/// beside it. Allowed: validated, instantiated, uploaded, fire-and-forgotten by a kernel, and
/// every node counted once (non-atomic counts, in order only if every wait held). Refused:
/// the second node is named.
#[test]
fn programmatic_edges_in_a_device_launched_graph_are_handled_as_measured() {
    require_gpu!();
    run(|| {
        if Device::current()?.properties()?.major < 9 {
            eprintln!("skipped: programmatic dependent launch needs sm_90");
            return Ok(());
        }
        const NODES: u32 = 32;
        let stream = stream()?;
        let counters = DeviceBuffer::<u32>::zeroed(1)?;
        let graph = Graph::new()?;
        let none = KernelAttributes::default();
        let mut previous: Option<KernelNode> = None;
        for _ in 0..NODES {
            let deps: Vec<Dependency> = previous.iter().map(Dependency::programmatic).collect();
            previous =
                Some(graph.add_kernel_with(dl_pdl_count(), one(), (counters.ptr(), 0), &none, &deps)?);
        }
        let by_cuda = graph.instantiate::<DeviceLaunch>(Default::default());
        assert_eq!(by_cuda.is_ok(), PROGRAMMATIC_EDGES_ALLOWED, "CUDA itself: {:?}", by_cuda.err());
        drop(by_cuda);
        if PROGRAMMATIC_EDGES_ALLOWED {
            validate(&graph)?;
            launch_from_device(instantiate_for_device(&graph)?, &stream)?;
            stream.synchronize()?;
            assert_eq!(counters.to_vec()?, [NODES]);
        } else {
            let err = instantiate_for_device(&graph).unwrap_err();
            assert!(matches!(err, Error::UnsupportedEdge { .. }), "{err}");
        }
        Ok(())
    });
}
