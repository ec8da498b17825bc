//! Dropped device-launch execs are reused for graphs of the same shape (the crate's way
//! around a CUDA 13.0 fault when they are destroyed): a reused exec runs the new graph's
//! parameters, its per-node setters name the new graph's nodes (and change the same node a new
//! exec would), nodes disabled before are enabled again, other shapes get new execs, and what
//! the first graph's nodes pointed to is released once only the pool holds that graph.
//!
//! Each test uses graphs of its own width, so that tests on parallel threads do not take each
//! other's parked execs.

mod graph_support;

use std::sync::Arc;

use cuda_graph::graph::{
    exec_pool_stats, DeviceLaunch, Graph, GraphExec, HostLaunch, InstantiateOptions, KernelNode,
};
use cuda_graph::refusal::NodeRefusal;
use cuda_graph::{CudaError, DeviceBuffer, Refusal};
use gpu_test_support::require_gpu;
use graph_support::{one, run, stream};
use test_kernels::increment_counter;

/// `width` kernel nodes, node `i` incrementing `counters[slot(i)]`; chained when `chain`.
fn counting_graph(
    counters: &DeviceBuffer<u32>, width: u32, chain: bool, slot: impl Fn(u32) -> u32,
) -> Result<(Graph, Vec<KernelNode>), CudaError> {
    let graph = Graph::new()?;
    let mut nodes: Vec<KernelNode> = Vec::new();
    for i in 0..width {
        let deps: Vec<&dyn cuda_graph::graph::AsNode> = match nodes.last() {
            Some(last) if chain => vec![last],
            _ => vec![],
        };
        let node = graph.add_kernel(increment_counter(), one(), (counters.ptr(), slot(i)), &deps)?;
        nodes.push(node);
    }
    Ok((graph, nodes))
}

fn launch(exec: &GraphExec<DeviceLaunch>) -> Result<(), CudaError> {
    let stream = stream()?;
    exec.launch(&stream)?;
    stream.synchronize()
}

#[test]
fn a_dropped_exec_is_reused_for_a_graph_of_the_same_shape_and_runs_that_graph() {
    require_gpu!();
    run(|| {
        const W: u32 = 8;
        let (first, second, third) = (
            DeviceBuffer::<u32>::zeroed(8)?,
            DeviceBuffer::<u32>::zeroed(8)?,
            DeviceBuffer::<u32>::zeroed(8)?,
        );
        let reused_before = exec_pool_stats().reused;
        let (graph0, nodes0) = counting_graph(&first, W, false, |i| i)?;
        let node0 = nodes0[0];
        let exec0 = graph0.instantiate::<DeviceLaunch>(Default::default())?;
        launch(&exec0)?;
        drop(exec0);
        drop(graph0); // the parked exec's first graph is now held only to name its nodes

        let permuted = |i: u32| (i * 3) % W;
        let (graph1, nodes1) = counting_graph(&second, W, false, permuted)?;
        let mut exec1 = graph1.instantiate::<DeviceLaunch>(Default::default())?;
        assert!(exec1.is_recycled(), "the parked exec of the same shape was not reused");
        assert!(exec_pool_stats().reused > reused_before);
        launch(&exec1)?;
        assert_eq!(second.to_vec()?, [1; 8], "the reused exec runs the new graph's parameters");
        assert_eq!(first.to_vec()?, [1; 8], "and not the old graph's");

        // Node 5 of the new graph is the one a per-node setter changes, not another.
        exec1.set_kernel_params(&nodes1[5], increment_counter(), one(), (third.ptr(), 5))?;
        launch(&exec1)?;
        let mut expected = [2; 8];
        expected[permuted(5) as usize] = 1;
        assert_eq!(second.to_vec()?, expected);
        assert_eq!(third.to_vec()?, [0, 0, 0, 0, 0, 1, 0, 0]);

        // The first graph's nodes are not this exec's.
        let err = exec1.set_node_enabled(&node0, false).unwrap_err();
        assert!(matches!(err.refusal(), Some(Refusal::Node(NodeRefusal::NotOfExecGraph { .. }))), "{err}");
        Ok(())
    });
}

#[test]
fn a_reused_exec_has_every_node_enabled_and_is_uploaded_when_asked() {
    require_gpu!();
    run(|| {
        const W: u32 = 6;
        let counters = DeviceBuffer::<u32>::zeroed(W as usize)?;
        let (graph0, nodes0) = counting_graph(&counters, W, true, |i| i)?;
        let mut exec0 = graph0.instantiate::<DeviceLaunch>(Default::default())?;
        exec0.set_node_enabled(&nodes0[2], false)?;
        launch(&exec0)?;
        assert_eq!(counters.to_vec()?, [1, 1, 0, 1, 1, 1]);
        drop(exec0);

        let (graph1, nodes1) = counting_graph(&counters, W, true, |i| i)?;
        let stream = stream()?;
        let options = InstantiateOptions { upload_stream: Some(&stream), ..Default::default() };
        let exec1 = graph1.instantiate::<DeviceLaunch>(options)?;
        assert!(exec1.is_recycled());
        assert!(exec1.node_enabled(&nodes1[2])?, "a node disabled in the dropped exec was not enabled again");
        launch(&exec1)?;
        assert_eq!(counters.to_vec()?, [2, 2, 1, 2, 2, 2]);
        Ok(())
    });
}

#[test]
fn a_graph_of_another_shape_gets_a_new_exec() {
    require_gpu!();
    run(|| {
        const W: u32 = 5;
        let counters = DeviceBuffer::<u32>::zeroed(W as usize)?;
        let (chain, _) = counting_graph(&counters, W, true, |i| i)?;
        drop(chain.instantiate::<DeviceLaunch>(Default::default())?);

        let (independent, _) = counting_graph(&counters, W, false, |i| i)?;
        let exec = independent.instantiate::<DeviceLaunch>(Default::default())?;
        assert!(!exec.is_recycled(), "same nodes, other edges: not the same shape");
        launch(&exec)?;
        assert_eq!(counters.to_vec()?, [1; 5]);

        let (chain_again, _) = counting_graph(&counters, W, true, |i| i)?;
        let exec = chain_again.instantiate::<DeviceLaunch>(Default::default())?;
        assert!(exec.is_recycled());
        launch(&exec)?;
        assert_eq!(counters.to_vec()?, [2; 5]);
        Ok(())
    });
}

#[test]
fn what_a_parked_execs_graph_pointed_to_is_released_once_only_the_pool_holds_it() {
    require_gpu!();
    run(|| {
        // Widths of their own (no other test parks these shapes); the last case parks two
        // execs of one graph, and keeps a host-launch exec of it until after the graph.
        for (width, graph_dropped_first, execs) in [(3, true, 1), (4, false, 1), (9, false, 2)] {
            let counters = DeviceBuffer::<u32>::zeroed(width as usize)?;
            let alive = Arc::downgrade(&counters.keep_alive());
            let (graph, _) = counting_graph(&counters, width, false, |i| i)?;
            let device: Vec<GraphExec<DeviceLaunch>> = (0..execs)
                .map(|_| graph.instantiate::<DeviceLaunch>(Default::default()))
                .collect::<Result<_, _>>()?;
            let host =
                (execs > 1).then(|| graph.instantiate::<HostLaunch>(Default::default())).transpose()?;
            for exec in &device {
                launch(exec)?;
            }
            drop(counters);
            if graph_dropped_first {
                drop(graph);
                drop(device);
            } else {
                drop(device);
                drop(graph);
            }
            assert_eq!(
                alive.upgrade().is_none(),
                host.is_none(),
                "width {width}: the host exec still needs the buffer"
            );
            drop(host);
            assert!(
                alive.upgrade().is_none(),
                "width {width}: the buffer outlived its graph and execs (graph dropped first: {graph_dropped_first})"
            );
        }
        Ok(())
    });
}

#[test]
fn host_launch_execs_are_not_reused() {
    require_gpu!();
    run(|| {
        const W: u32 = 7;
        let counters = DeviceBuffer::<u32>::zeroed(W as usize)?;
        let (graph, _) = counting_graph(&counters, W, false, |i| i)?;
        drop(graph.instantiate::<HostLaunch>(Default::default())?);
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        assert!(!exec.is_recycled());
        Ok(())
    });
}
