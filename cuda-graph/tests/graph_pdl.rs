//! Programmatic dependent launch on a real GPU: chains joined by programmatic edges,
//! built node by node and captured from stream launches with programmatic serialization, and
//! stream launches with it, all run in order (an unordered read-modify-write log would lose or
//! misplace entries); the edges read back as programmatic; what CUDA must not see is refused.

mod graph_support;

use cuda_graph::graph::{AsNode, CaptureMode, Dependency, Edge, Graph, HostLaunch, KernelNode};
use cuda_graph::kernel::{KernelAttributes, LaunchAttributes};
use cuda_graph::refusal::NodeRefusal;
use cuda_graph::{CudaError, DeviceBuffer, Refusal, Stream};
use gpu_test_support::require_gpu;
use graph_support::{one, run, sm90_or_skip, stream};
use test_kernels::{increment_counter, pdl_append};

const CHAIN: u32 = 64;

/// The log `pdl_append` leaves after `0..n` appended in order, `replays` times over.
fn expected_log(n: u32, replays: u32, room: usize) -> Vec<u32> {
    let mut log = vec![0u32; room];
    log[0] = n * replays;
    for k in 0..(n * replays) as usize {
        if 1 + k < room {
            log[1 + k] = k as u32 % n;
        }
    }
    log
}

/// On a device that runs programmatic dependent launch: a stream and a zeroed log with room
/// for `passes` passes of the chain. `None` (the test is skipped) elsewhere.
fn setup(passes: u32) -> Result<Option<(Stream, DeviceBuffer<u32>)>, CudaError> {
    if !sm90_or_skip("programmatic dependent launch")? {
        return Ok(None);
    }
    Ok(Some((stream()?, DeviceBuffer::<u32>::zeroed((passes * CHAIN + 1) as usize)?)))
}

/// Instantiates `graph`, launches it `launches` times on `stream`, and checks that `log` then
/// holds `passes` passes of the chain in order.
fn launch_and_check(
    graph: &Graph, stream: &Stream, log: &DeviceBuffer<u32>, launches: u32, passes: u32,
) -> Result<(), CudaError> {
    let exec = graph.instantiate::<HostLaunch>(Default::default())?;
    for _ in 0..launches {
        exec.launch(stream)?;
    }
    stream.synchronize()?;
    assert_eq!(log.to_vec()?, expected_log(CHAIN, passes, log.len()));
    Ok(())
}

/// A chain of `n` `pdl_append(log, i)` nodes, each after the previous by `edge`.
fn chain(graph: &Graph, log: &DeviceBuffer<u32>, n: u32, edge: Edge) -> Result<Vec<KernelNode>, CudaError> {
    let none = KernelAttributes::default();
    let mut nodes: Vec<KernelNode> = Vec::new();
    for i in 0..n {
        let deps: Vec<Dependency> = match (nodes.last(), edge) {
            (None, _) => Vec::new(),
            (Some(previous), Edge::Programmatic) => vec![Dependency::programmatic(previous)],
            (Some(previous), _) => vec![Dependency::full(previous)],
        };
        nodes.push(graph.add_kernel_with(pdl_append(), one(), (log.slice(), i), &none, &deps)?);
    }
    Ok(nodes)
}

#[test]
fn a_chain_of_programmatic_edges_runs_in_order_replay_after_replay() {
    require_gpu!();
    run(|| {
        let Some((stream, log)) = setup(3)? else { return Ok(()) };
        let graph = Graph::new()?;
        let nodes = chain(&graph, &log, CHAIN, Edge::Programmatic)?;
        assert!(graph.dependencies(&nodes[0])?.is_empty());
        for pair in nodes.windows(2) {
            let deps = graph.dependencies(&pair[1])?;
            assert_eq!(deps.len(), 1);
            assert_eq!((deps[0].node(), deps[0].edge()), (pair[0].as_node(), Edge::Programmatic));
        }
        launch_and_check(&graph, &stream, &log, 3, 3)
    });
}

#[test]
fn plain_programmatic_and_launch_completion_edges_mix() {
    require_gpu!();
    run(|| {
        let Some((stream, log)) = setup(2)? else { return Ok(()) };
        let room = log.len();
        let counters = DeviceBuffer::<u32>::zeroed(1)?;
        let graph = Graph::new()?;
        // A memset, a counting kernel after it by a plain edge, then a chain whose first link
        // depends on both: plain from the memset node, programmatic from the kernel.
        let clear = graph.add_memset(&log.ptr(), 0u32, room, &[])?;
        let count = graph.add_kernel(increment_counter(), one(), (counters.ptr(), 0), &[&clear])?;
        let deps = [Dependency::from(&clear), Dependency::programmatic(&count)];
        let none = KernelAttributes::default();
        let first = graph.add_kernel_with(pdl_append(), one(), (log.slice(), 0), &none, &deps)?;
        let kinds: Vec<Edge> = graph.dependencies(&first)?.iter().map(Dependency::edge).collect();
        assert_eq!(kinds, [Edge::Full, Edge::Programmatic]);
        let mut previous = first;
        for i in 1..CHAIN {
            previous = graph.add_kernel_with(
                pdl_append(),
                one(),
                (log.slice(), i),
                &none,
                &[Dependency::programmatic(&previous)],
            )?;
        }
        // A second count after the chain's last kernel has started: a launch-completion edge,
        // which orders the start only (the count is atomic, so it needs no more).
        let after = [Dependency::launch_completion(&previous)];
        let last = graph.add_kernel_with(increment_counter(), one(), (counters.ptr(), 0), &none, &after)?;
        assert_eq!(graph.dependencies(&last)?[0].edge(), Edge::LaunchCompletion);
        // Each launch clears the log first, so it holds one pass; each counts twice.
        launch_and_check(&graph, &stream, &log, 2, 1)?;
        assert_eq!(counters.to_vec()?, [4]);
        Ok(())
    });
}

#[test]
fn captured_launches_with_programmatic_serialization_become_programmatic_edges() {
    require_gpu!();
    run(|| {
        let Some((stream, log)) = setup(2)? else { return Ok(()) };
        pdl_append().function()?;
        let attributes = LaunchAttributes::programmatic();
        let capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
        pdl_append().launch(&stream, one(), (log.slice(), 0))?;
        for i in 1..CHAIN {
            pdl_append().launch_with(&stream, one(), &attributes, (log.slice(), i))?;
        }
        let graph = capture.end()?;
        let nodes = graph.nodes()?;
        assert_eq!(nodes.len(), CHAIN as usize);
        let programmatic = nodes
            .iter()
            .map(|node| graph.dependencies(node))
            .collect::<Result<Vec<_>, _>>()?
            .iter()
            .filter(|deps| deps.len() == 1 && deps[0].edge() == Edge::Programmatic)
            .count();
        assert_eq!(
            programmatic,
            CHAIN as usize - 1,
            "every launch but the first joined by a programmatic edge"
        );
        launch_and_check(&graph, &stream, &log, 2, 2)
    });
}

#[test]
fn stream_launches_with_programmatic_serialization_run_in_order() {
    require_gpu!();
    run(|| {
        let Some((stream, log)) = setup(4)? else { return Ok(()) };
        let room = log.len();
        let attributes = LaunchAttributes::programmatic();
        for _ in 0..4 {
            for i in 0..CHAIN {
                pdl_append().launch_with(&stream, one(), &attributes, (log.slice(), i))?;
            }
        }
        stream.synchronize()?;
        assert_eq!(log.to_vec()?, expected_log(CHAIN, 4, room));
        // No attribute at all: the same path, `cudaLaunchKernelExC` without entries.
        pdl_append().launch_with(&stream, one(), &LaunchAttributes::default(), (log.slice(), 0))?;
        stream.synchronize()?;
        assert_eq!(log.to_vec()?[0], 4 * CHAIN + 1);
        Ok(())
    });
}

#[test]
fn a_dependency_of_another_graph_is_refused_and_leaves_no_node() {
    require_gpu!();
    run(|| {
        let log = DeviceBuffer::<u32>::zeroed(4)?;
        let (a, b) = (Graph::new()?, Graph::new()?);
        let theirs = b.add_kernel(pdl_append(), one(), (log.slice(), 0), &[])?;
        let none = KernelAttributes::default();
        let err = a
            .add_kernel_with(
                pdl_append(),
                one(),
                (log.slice(), 1),
                &none,
                &[Dependency::programmatic(&theirs)],
            )
            .unwrap_err();
        assert!(
            matches!(
                err.refusal(),
                Some(Refusal::Node(NodeRefusal::DependencyOfAnotherGraph { index: 0, .. }))
            ),
            "{err}"
        );
        assert_eq!(a.node_count()?, 0);
        Ok(())
    });
}
