//! Editing graphs on a real GPU (SOUNDNESS.md, "Editing graphs"): removing nodes (and refusing
//! every handle of a removed node), adding and removing dependencies with their edge data, listing
//! dependents, cloning and mapping nodes into the clone, reading node parameters back by kind, and
//! update refusals that name the node CUDA pointed at. Results are checked against the CPU.

mod graph_support;

use cuda_graph::graph::{
    AsNode, ConditionalKind, Dependency, Edge, Graph, HostLaunch, KernelNode, MemsetNode, NodeKind,
    UpdateRefusal,
};
use cuda_graph::kernel::{KernelAttributes, LaunchConfig};
use cuda_graph::refusal::{EditRefusal, NodeRefusal, Unremovable};
use cuda_graph::{CudaError, DeviceBuffer, Refusal};
use gpu_test_support::require_gpu;
use graph_support::{per_element, run, sm90_or_skip, stream};
use test_kernels::{add_scalar, pdl_append};

const N: u32 = 1000;

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

/// Runs `graph` once and reads `data` back.
fn launch_and_read(graph: &Graph, data: &DeviceBuffer<u32>) -> Result<Vec<u32>, CudaError> {
    let exec = graph.instantiate::<HostLaunch>(Default::default())?;
    let stream = stream()?;
    exec.launch(&stream)?;
    stream.synchronize()?;
    data.to_vec()
}

/// `data` = 1, then += 5, then += 7: a chain of a memset and two kernel nodes.
fn fill_plus5_plus7(
    data: &DeviceBuffer<u32>,
) -> Result<(Graph, MemsetNode, KernelNode, KernelNode), CudaError> {
    let graph = Graph::new()?;
    let fill = graph.add_memset(&data.ptr(), 1u32, N as usize, &[])?;
    let plus5 = graph.add_kernel(add_scalar(), per_element(N), (data.ptr(), N, 5), &[&fill])?;
    let plus7 = graph.add_kernel(add_scalar(), per_element(N), (data.ptr(), N, 7), &[&plus5])?;
    Ok((graph, fill, plus5, plus7))
}

#[test]
fn a_removed_node_is_gone_and_every_copy_of_its_handle_is_refused() {
    require_gpu!();
    run(|| {
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let (graph, fill, plus5, plus7) = fill_plus5_plus7(&data)?;
        let copy = plus5;
        graph.remove_node(plus5)?;
        assert_eq!(graph.node_count()?, 2);
        assert!(
            graph.dependencies(&plus7)?.is_empty(),
            "the edge into the removed node's dependent went too"
        );
        assert!(graph.dependents(&fill)?.is_empty());
        refused!(graph.node_kind(&copy), Refusal::Node(NodeRefusal::Removed));
        refused!(graph.dependencies(&copy), Refusal::Node(NodeRefusal::Removed));
        refused!(graph.add_empty(&[&copy]), Refusal::Node(NodeRefusal::Removed));
        refused!(graph.remove_node(copy), Refusal::Node(NodeRefusal::Removed));
        // New nodes (CUDA may give one the removed node's address) leave the handle refused.
        for _ in 0..8 {
            graph.add_empty(&[])?;
        }
        refused!(graph.kernel_params(&copy), Refusal::Node(NodeRefusal::Removed));
        // Order what is left again: fill, then +7.
        graph.add_dependencies(&plus7, &[Dependency::from(&fill)])?;
        let deps = graph.dependencies(&plus7)?;
        assert_eq!((deps.len(), deps[0].node(), deps[0].edge()), (1, fill.as_node(), Edge::Full));
        assert_eq!(launch_and_read(&graph, &data)?, vec![1 + 7; N as usize]);
        Ok(())
    });
}

#[test]
fn an_instantiated_graph_keeps_its_nodes_and_a_clone_is_edited_instead() {
    require_gpu!();
    run(|| {
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let (graph, fill, plus5, plus7) = fill_plus5_plus7(&data)?;
        let clone = graph.clone_graph()?;
        assert_eq!(launch_and_read(&graph, &data)?, vec![13; N as usize]);
        refused!(graph.remove_node(plus5), Refusal::Edit(EditRefusal::Instantiated));

        // The clone's nodes are its own: the original's handles are refused there.
        refused!(clone.node_kind(&plus5), Refusal::Node(NodeRefusal::OfAnotherGraph { .. }));
        let (fill_c, plus5_c, plus7_c) = (
            clone.cloned_node(&graph, &fill)?,
            clone.cloned_node(&graph, &plus5)?,
            clone.cloned_node(&graph, &plus7)?,
        );
        assert_eq!(clone.kernel_params(&plus7_c)?.config, per_element(N));
        refused!(graph.node_kind(&plus7_c), Refusal::Node(NodeRefusal::OfAnotherGraph { .. }));
        clone.remove_node(plus5_c)?;
        refused!(clone.cloned_node(&graph, &plus5), Refusal::Node(NodeRefusal::CopyRemovedFromClone));
        clone.add_dependencies(&plus7_c, &[Dependency::from(&fill_c)])?;
        assert_eq!(launch_and_read(&clone, &data)?, vec![8; N as usize]);
        // The original runs as it was.
        assert_eq!(launch_and_read(&graph, &data)?, vec![13; N as usize]);

        // An exec of the clone refuses the original's nodes.
        let mut exec = clone.instantiate::<HostLaunch>(Default::default())?;
        refused!(exec.set_node_enabled(&plus7, false), Refusal::Node(NodeRefusal::NotOfExecGraph { .. }));
        let unrelated = Graph::new()?;
        refused!(unrelated.cloned_node(&graph, &fill), Refusal::Edit(EditRefusal::NotClonedFrom));
        Ok(())
    });
}

#[test]
fn dependents_and_dependencies_carry_their_edge_data() {
    require_gpu!();
    run(|| {
        if !sm90_or_skip("programmatic edges")? {
            return Ok(());
        }
        let log = DeviceBuffer::<u32>::zeroed(4)?;
        let graph = Graph::new()?;
        let none = KernelAttributes::default();
        let one = LaunchConfig::new(1, 1);
        let first = graph.add_kernel_with(pdl_append(), one, (log.slice(), 1), &none, &[])?;
        let second = graph.add_kernel_with(pdl_append(), one, (log.slice(), 2), &none, &[])?;
        let join = graph.add_empty(&[])?;
        graph.add_dependencies(&second, &[Dependency::programmatic(&first)])?;
        refused!(
            graph.add_dependencies(&join, &[Dependency::programmatic(&first)]),
            Refusal::Edit(EditRefusal::ProgrammaticEdgeTarget)
        );
        graph.add_dependencies(&join, &[Dependency::from(&second)])?;

        let after_first = graph.dependents(&first)?;
        assert_eq!(after_first.len(), 1);
        assert_eq!((after_first[0].node(), after_first[0].edge()), (second.as_node(), Edge::Programmatic));
        let before_second = graph.dependencies(&second)?;
        assert_eq!((before_second[0].node(), before_second[0].edge()), (first.as_node(), Edge::Programmatic));
        // The programmatic edge orders the log: 1 then 2.
        // pdl_append keeps a count in log[0] and the values after it.
        assert_eq!(launch_and_read(&graph, &log)?, [2, 1, 2, 0]);

        graph.remove_dependencies(&second, &before_second)?;
        assert!(graph.dependencies(&second)?.is_empty());
        assert!(graph.dependents(&first)?.is_empty());
        Ok(())
    });
}

#[test]
fn node_parameters_read_back_by_kind() {
    require_gpu!();
    run(|| {
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let graph = Graph::new()?;
        let fill = graph.add_memset(&data.ptr(), 0xabcd_u32, N as usize, &[])?;
        let config = LaunchConfig { shared_mem_bytes: 64, ..per_element(N) };
        let kernel = graph.add_kernel(add_scalar(), config, (data.ptr(), N, 3), &[&fill])?;
        let handle = graph.conditional_handle(Some(0))?;
        let (cond, bodies) = graph.add_switch(&handle, 3, &[&kernel])?;
        bodies[2].add_empty(&[])?;
        bodies[2].add_empty(&[])?;

        let memset = graph.memset_params(&fill)?;
        assert_eq!(
            (memset.addr, memset.value, memset.element_size, memset.width, memset.height),
            (data.ptr().addr(), 0xabcd, 4, N as usize, 1)
        );
        let params = graph.kernel_params(&kernel)?;
        assert_eq!(params.config, config);
        assert_eq!(params.name.as_deref(), Some("add_scalar"));
        assert!(params.launches(add_scalar())?);
        assert!(!params.launches(test_kernels::fill_pattern())?);

        let params = graph.conditional_params(&cond)?;
        assert_eq!(params.kind, ConditionalKind::Switch);
        assert!(params.tests(&handle));
        assert!(!params.tests(&graph.conditional_handle(None)?));
        let counts: Vec<usize> =
            params.bodies.iter().map(|body| body.node_count()).collect::<Result<_, _>>()?;
        assert_eq!(counts, [0, 0, 2]);

        refused!(
            graph.memset_params(&kernel),
            Refusal::Node(NodeRefusal::WrongKind { found, wanted }) if found == "kernel" && wanted == "memset"
        );
        refused!(
            graph.kernel_params(&fill),
            Refusal::Node(NodeRefusal::WrongKind { found, wanted }) if found == "memset" && wanted == "kernel"
        );
        refused!(
            graph.conditional_params(&fill),
            Refusal::Node(NodeRefusal::WrongKind { found, wanted })
                if found == "memset" && wanted == "conditional"
        );
        refused!(graph.remove_node(cond), Refusal::Edit(EditRefusal::NotRemovable(Unremovable::Conditional)));
        // A removal elsewhere in the family retires every view read before it.
        let spare = graph.add_empty(&[])?;
        graph.remove_node(spare)?;
        refused!(params.bodies[2].node_count(), Refusal::Node(NodeRefusal::StaleView));
        assert_eq!(graph.conditional_params(&cond)?.bodies[2].nodes()?[0].kind(), NodeKind::Empty);
        Ok(())
    });
}

#[test]
fn an_update_refusal_names_the_node_cuda_points_at() {
    require_gpu!();
    run(|| {
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let graph = Graph::new()?;
        let fill = graph.add_memset(&data.ptr(), 1u32, N as usize, &[])?;
        graph.add_memset(&data.ptr(), 2u32, N as usize, &[&fill])?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let changed = Graph::new()?;
        let fill = changed.add_memset(&data.ptr(), 1u32, N as usize, &[])?;
        changed.add_empty(&[&fill])?;
        match exec.update(&changed) {
            Err(CudaError::UpdateRefused { reason: UpdateRefusal::NodeTypeChanged, node: Some(node) }) => {
                assert!(node.ends_with("(empty)"), "{node}");
            }
            other => panic!("expected NodeTypeChanged naming the empty node, got {other:?}"),
        }
        Ok(())
    });
}

/// A node's edges may be what orders a use of graph memory after its allocation
/// (alloc -> middle -> use -> free): removing the middle node would unorder the use, so node
/// removal is refused in graphs with memory nodes, as edge removal is.
#[test]
fn nodes_are_not_removed_from_graphs_with_memory_nodes() {
    require_gpu!();
    run(|| {
        let graph = Graph::new()?;
        let alloc = graph.add_mem_alloc::<u32>(256, &[])?;
        let middle = graph.add_empty(&[&alloc])?;
        let last = graph.add_empty(&[&middle])?;
        graph.add_mem_free(&alloc, &[&last])?;
        refused!(graph.remove_node(middle), Refusal::Edit(EditRefusal::BesideMemoryNodes { what: "a node" }));
        assert_eq!(graph.node_count()?, 4);
        Ok(())
    });
}
