//! (b) Graph replay of a chain of `nodes` kernel nodes (1, 10, 100, 1000): the exec launched
//! `replays` times back to back between two events, µs per node. Both graphs are built node by
//! node (Rust: `GraphBuilder::add_kernel`; C++: `cudaGraphAddKernelNode`), instantiated and
//! uploaded before timing; the counter proves every node ran once per replay.

use cuda_graph::graph::{Graph, GraphExec, HostLaunch, KernelNode};
use cuda_graph::{DeviceBuffer, LaunchConfig};

use crate::error::{expect_count, Result};
use crate::harness::{interleave, Plan, Row, RustSide};
use crate::kernels::bench_chain_step;
use crate::twin::Twin;

/// The operation's name in the results.
pub const OPERATION: &str = cuda_graph_bench_report::operations::GRAPH_REPLAY;

/// A graph of `nodes` `bench_chain_step(counter, value)` nodes, each after the previous.
pub fn build_chain(counter: &DeviceBuffer<u32>, nodes: u32, value: u32) -> Result<Graph> {
    let graph = Graph::new()?;
    let config = LaunchConfig::new(1, 1);
    let mut previous: Option<KernelNode> = None;
    for _ in 0..nodes {
        let node = match &previous {
            Some(p) => graph.add_kernel(bench_chain_step(), config, (counter.ptr(), value), &[p])?,
            None => graph.add_kernel(bench_chain_step(), config, (counter.ptr(), value), &[])?,
        };
        previous = Some(node);
    }
    Ok(graph)
}

/// Launches per sample so that a sample runs about `target_nodes` nodes (at least one launch).
pub fn replays_for(nodes: u32, target_nodes: u32) -> u32 {
    (target_nodes / nodes.max(1)).max(1)
}

/// Measures both sides at each chain length.
pub fn measure(
    rust: &mut RustSide, twin: &Twin, plan: &Plan, lengths: &[u32], target_nodes: u32,
) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for &nodes in lengths {
        let replays = replays_for(nodes, target_nodes);
        let want = nodes * replays;
        let graph = build_chain(&rust.counter, nodes, 1)?;
        let exec: GraphExec<HostLaunch> = graph.instantiate(Default::default())?;
        exec.upload(&rust.stream)?;
        rust.stream.synchronize()?;
        let cpp_chain = twin.chain(nodes, 1)?;
        let pair = interleave(
            plan,
            || {
                rust.begin_sample()?;
                for _ in 0..replays {
                    exec.launch(&rust.stream)?;
                }
                let ms = rust.end_sample()?;
                expect_count(OPERATION, "Rust", rust.counter()?, want)?;
                Ok(ms * 1e3 / f64::from(want))
            },
            || {
                let (us, counter) = cpp_chain.replay(replays)?;
                expect_count(OPERATION, "C++", counter, want)?;
                Ok(us)
            },
        )?;
        rows.push(Row::new(OPERATION, format!("nodes={nodes}"), "µs/node", pair));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_cover_the_target_and_never_drop_to_zero() {
        assert_eq!(replays_for(1, 20_000), 20_000);
        assert_eq!(replays_for(1000, 20_000), 20);
        assert_eq!(replays_for(1000, 500), 1);
        assert_eq!(replays_for(0, 10), 10);
    }
}
