//! Reading graphs back on a real GPU: node kinds, memcpy parameters with the memory kind of
//! each side, child graphs to any depth, and the pointer, device and partial-copy helpers
//! that the device-launch crate builds on. Misuse (a node of another graph, of another kind,
//! or of another view) is refused before CUDA sees it.

mod graph_support;

use cuda_graph::graph::{AsNode, Graph, MemcpyDirection, MemcpyEndpoint, NodeKind};
use cuda_graph::memory::MemoryKind;
use cuda_graph::refusal::{Bounds, NodeRefusal};
use cuda_graph::{CudaError, Device, DeviceBuffer, PinnedBuffer, Refusal};
use gpu_test_support::require_gpu;
use graph_support::run;

fn linear_addr(endpoint: MemcpyEndpoint) -> u64 {
    match endpoint {
        MemcpyEndpoint::Linear { addr, .. } => addr,
        other => panic!("expected linear memory, got {other}"),
    }
}

/// Asserts that `result` is a refusal whose reason matches the pattern (and the guard).
macro_rules! refused {
    ($result:expr, $reason:pat if $guard:expr) => {
        match $result {
            Err(CudaError::InvalidArgument { reason: $reason, .. }) if $guard => {}
            other => panic!("expected a refusal {}, got {other:?}", stringify!($reason if $guard)),
        }
    };
    ($result:expr, $reason:pat) => {
        match $result {
            Err(CudaError::InvalidArgument { reason: $reason, .. }) => {}
            other => panic!("expected a refusal {}, got {other:?}", stringify!($reason)),
        }
    };
}

#[test]
fn memcpy_params_name_both_sides_and_their_memory() {
    require_gpu!();
    run(|| {
        let (a, b) = (DeviceBuffer::<u32>::zeroed(4)?, DeviceBuffer::<u32>::zeroed(4)?);
        let pinned = PinnedBuffer::from_slice(&[1u32, 2, 3, 4])?;
        let graph = Graph::new()?;
        let copy = graph.add_memcpy(&b.ptr(), &a.ptr(), 4, &[])?;
        let upload = graph.add_memcpy_from_host(&a.ptr(), &pinned, 4, &[&copy])?;
        let download = graph.add_memcpy_to_host(&pinned, &b.ptr(), 2, &[&upload])?;

        let params = graph.memcpy_params(&copy)?;
        assert_eq!(
            (params.source.memory(), params.destination.memory()),
            (Some(MemoryKind::Device), Some(MemoryKind::Device))
        );
        assert_eq!(
            (linear_addr(params.source), linear_addr(params.destination)),
            (a.ptr().addr(), b.ptr().addr())
        );
        assert_eq!((params.bytes(), params.direction), (16, MemcpyDirection::DeviceToDevice));

        let params = graph.memcpy_params(&upload)?;
        assert_eq!(params.source.memory(), Some(MemoryKind::Pinned));
        assert_eq!(params.destination.memory(), Some(MemoryKind::Device));
        assert_eq!(linear_addr(params.source), pinned.as_raw() as u64);
        assert_eq!(params.direction, MemcpyDirection::HostToDevice);

        let params = graph.memcpy_params(&download)?;
        assert_eq!(params.destination.memory(), Some(MemoryKind::Pinned));
        assert_eq!((params.bytes(), params.direction), (8, MemcpyDirection::DeviceToHost));
        assert_eq!(params.sides()[1], ("destination", params.destination));
        Ok(())
    });
}

#[test]
fn nodes_of_another_kind_or_graph_are_refused() {
    require_gpu!();
    run(|| {
        let data = DeviceBuffer::<u32>::zeroed(4)?;
        let graph = Graph::new()?;
        let fill = graph.add_memset(&data.ptr(), 1u32, 4, &[])?;
        assert_eq!(graph.node_kind(&fill)?, NodeKind::Memset);
        refused!(
            graph.memcpy_params(&fill),
            Refusal::Node(NodeRefusal::WrongKind { found, wanted }) if found == "memset" && wanted == "memcpy"
        );
        refused!(
            graph.child_graph(&fill),
            Refusal::Node(NodeRefusal::WrongKind { found, wanted })
                if found == "memset" && wanted == "child graph"
        );

        let other = Graph::new()?;
        let foreign = other.add_memcpy(&data.ptr(), &data.ptr(), 1, &[])?;
        refused!(graph.memcpy_params(&foreign), Refusal::Node(NodeRefusal::OfAnotherGraph { .. }));
        refused!(graph.node_kind(&foreign), Refusal::Node(NodeRefusal::OfAnotherGraph { .. }));
        assert_eq!(other.node_kind(&foreign)?, NodeKind::Memcpy);
        Ok(())
    });
}

#[test]
fn child_graphs_are_read_to_any_depth() {
    require_gpu!();
    run(|| {
        let (a, b) = (DeviceBuffer::<u32>::zeroed(8)?, DeviceBuffer::<u32>::zeroed(8)?);
        let inner = Graph::new()?;
        inner.add_memcpy(&b.ptr(), &a.ptr(), 8, &[])?;
        inner.add_empty(&[])?;
        let outer = Graph::new()?;
        let fill = outer.add_memset(&a.ptr(), 3u32, 8, &[])?;
        outer.add_child_graph(&inner, &[&fill])?;
        let graph = Graph::new()?;
        let node = graph.add_child_graph(&outer, &[])?;
        assert_eq!(graph.node_kind(&node)?, NodeKind::ChildGraph);

        let outer_copy = graph.child_graph(&node)?;
        let mut kinds: Vec<NodeKind> = outer_copy.nodes()?.iter().map(|info| info.kind()).collect();
        kinds.sort_by_key(|kind| kind.to_string());
        assert_eq!(kinds, [NodeKind::ChildGraph, NodeKind::Memset]);
        let nested =
            outer_copy.nodes()?.into_iter().find(|info| info.kind() == NodeKind::ChildGraph).unwrap();
        assert_eq!(outer_copy.node_kind(&nested)?, NodeKind::ChildGraph);

        let inner_copy = outer_copy.child_graph(&nested)?;
        assert_eq!(inner_copy.node_count()?, 2);
        let copy = inner_copy.nodes()?.into_iter().find(|info| info.kind() == NodeKind::Memcpy).unwrap();
        let params = inner_copy.memcpy_params(&copy)?;
        assert_eq!(
            (linear_addr(params.source), linear_addr(params.destination)),
            (a.ptr().addr(), b.ptr().addr())
        );
        assert_eq!(params.bytes(), 32);

        // A view's nodes are its own: the graph, another view and the view around it refuse them.
        refused!(graph.memcpy_params(&copy), Refusal::Node(NodeRefusal::OfAnotherGraph { .. }));
        refused!(outer_copy.memcpy_params(&copy), Refusal::Node(NodeRefusal::OfAnotherGraph { .. }));
        refused!(
            graph.child_graph(&node)?.child_graph(&nested),
            Refusal::Node(NodeRefusal::OfAnotherGraph { .. })
        );
        refused!(inner_copy.node_kind(&node.as_node()), Refusal::Node(NodeRefusal::OfAnotherGraph { .. }));
        // No builder takes them as dependencies either.
        refused!(
            graph.add_empty(&[&copy]),
            Refusal::Node(NodeRefusal::DependencyOfAnotherGraph { index: 0, .. })
        );
        Ok(())
    });
}

#[test]
fn memory_kinds_of_pointers() {
    require_gpu!();
    run(|| {
        let device = DeviceBuffer::<u32>::zeroed(4)?;
        let pinned = PinnedBuffer::<u32>::zeroed(4)?;
        let pageable = Box::new([0u32; 4]); // from the Rust allocator
        assert_eq!(MemoryKind::of(device.ptr().addr())?, MemoryKind::Device);
        assert_eq!(MemoryKind::of(pinned.as_raw() as u64)?, MemoryKind::Pinned);
        assert_eq!(MemoryKind::of(pageable.as_ptr() as u64)?, MemoryKind::Pageable);
        Ok(())
    });
}

#[test]
fn with_current_runs_on_the_device_and_restores_the_callers() {
    require_gpu!();
    run(|| {
        let first = Device::get(0)?;
        first.set_current()?;
        let last = Device::get(Device::count()? - 1)?;
        let seen = last.with_current(Device::current)?;
        assert_eq!(seen, last);
        assert_eq!(Device::current()?, first);
        let refusal = Refusal::NoSuchDevice { ordinal: 9, count: 1 };
        let err = last
            .with_current(|| Err::<(), _>(CudaError::InvalidArgument { call: "f", reason: refusal.clone() }));
        assert_eq!(err.unwrap_err().refusal(), Some(&refusal));
        assert_eq!(Device::current()?, first);
        last.with_current(|| last.synchronize())?;
        Ok(())
    });
}

#[test]
fn partial_host_copies_leave_the_rest_alone() {
    require_gpu!();
    run(|| {
        let mut buffer = DeviceBuffer::from_slice(&[1u32, 2, 3, 4])?;
        buffer.copy_from_host_at(1, &[20, 30])?;
        buffer.copy_from_host_at(4, &[])?;
        assert_eq!(buffer.to_vec()?, [1, 20, 30, 4]);
        refused!(
            buffer.copy_from_host_at(3, &[5, 6]),
            Refusal::OutOfBounds(Bounds::Range { count: 2, offset: 3, len: 4, unit: "elements" })
        );

        let mut pairs = DeviceBuffer::from_slice(&[[1u32, 2], [3, 4]])?;
        pairs.copy_bytes_from_host_at(12, &40u32.to_ne_bytes())?;
        assert_eq!(pairs.to_vec()?, [[1, 2], [3, 40]]);
        refused!(
            pairs.copy_bytes_from_host_at(14, &[0; 4]),
            Refusal::OutOfBounds(Bounds::Range { count: 4, offset: 14, len: 16, unit: "bytes" })
        );
        Ok(())
    });
}
