//! (h) Programmatic dependent launch (bench/README.md, "Programmatic dependent launch (h)"): graph
//! replay of a chain of `nodes` one-thread kernel nodes (10, 100, 1000), empty or `*counter += 1`
//! (read-modify-write), each after the previous by a plain edge or by a programmatic one, µs per
//! node. Plain chains run the plain kernels (`bench_empty`, `bench_rmw`); programmatic ones their
//! PDL versions (`bench_pdl_empty`, `bench_pdl_rmw`: trigger, then wait, through
//! `cuda_graph_pdl.cuh`), as a user switching to PDL writes them. Rust: `GraphBuilder::add_kernel`
//! (plain) and `add_kernel_with` with `Dependency::programmatic`; C++: `cudaGraphAddNode` with edge
//! data (`twin_pdl.cu`). Instantiated and uploaded before timing, [`SETS`] execs per side in
//! alternating build order. The read-modify-write chains' counter proves every node ran once
//! per replay, in order (a lost update shows as a short count); the empty chains are checked by
//! CUDA's statuses alone, as the empty stream launch is.

use cuda_graph::graph::{Dependency, Graph, GraphExec, HostLaunch, KernelNode};
use cuda_graph::kernel::KernelAttributes;
use cuda_graph::{DeviceBuffer, LaunchConfig};

use crate::error::{expect_count, Result};
use crate::graph_replay::replays_for;
use crate::harness::{interleave, Plan, Row, RustSide};
use crate::kernels::{bench_empty, bench_pdl_empty, bench_pdl_rmw, bench_rmw};
use crate::twin::Twin;

/// Empty kernels, plain edges: the row to compare with other crates.
pub const EMPTY_PLAIN: &str = cuda_graph_bench_report::operations::EMPTY_PLAIN;
/// Empty kernels (PDL versions), programmatic edges.
pub const EMPTY_PROGRAMMATIC: &str = cuda_graph_bench_report::operations::EMPTY_PROGRAMMATIC;
/// `*counter += 1` kernels, plain edges.
pub const RMW_PLAIN: &str = cuda_graph_bench_report::operations::RMW_PLAIN;
/// `*counter += 1` kernels (PDL versions), programmatic edges.
pub const RMW_PROGRAMMATIC: &str = cuda_graph_bench_report::operations::RMW_PROGRAMMATIC;

/// The four chains, in the order measured: (operation, read-modify-write, programmatic).
pub const CHAINS: [(&str, bool, bool); 4] = [
    (EMPTY_PLAIN, false, false),
    (EMPTY_PROGRAMMATIC, false, true),
    (RMW_PLAIN, true, false),
    (RMW_PROGRAMMATIC, true, true),
];

/// The chain lengths measured.
pub const LENGTHS: [u32; 3] = [10, 100, 1000];

/// A graph of `nodes` one-thread nodes, empty or `*counter += 1`, joined by plain or
/// programmatic edges.
pub fn build(counter: &DeviceBuffer<u32>, rmw: bool, programmatic: bool, nodes: u32) -> Result<Graph> {
    let graph = Graph::new()?;
    let config = LaunchConfig::new(1, 1);
    let none = KernelAttributes::default();
    let mut previous: Option<KernelNode> = None;
    for _ in 0..nodes {
        let node = if programmatic {
            let deps: Vec<Dependency> = previous.iter().map(Dependency::programmatic).collect();
            if rmw {
                graph.add_kernel_with(bench_pdl_rmw(), config, (counter.ptr(),), &none, &deps)?
            } else {
                graph.add_kernel_with(bench_pdl_empty(), config, (), &none, &deps)?
            }
        } else {
            let deps: Vec<&dyn cuda_graph::graph::AsNode> =
                previous.iter().map(|p| p as &dyn cuda_graph::graph::AsNode).collect();
            if rmw {
                graph.add_kernel(bench_rmw(), config, (counter.ptr(),), &deps)?
            } else {
                graph.add_kernel(bench_empty(), config, (), &deps)?
            }
        };
        previous = Some(node);
    }
    Ok(graph)
}

/// Exec sets per side, chain and length: sample `i` of a side replays set `i % SETS`. The sets
/// are made in pairs in the order of
/// [`rust_made_first`](crate::device_launch_width::rust_made_first) (R C, C R, C R, R C): an
/// exec's speed depends on when it was made, not on who made it (`bench/README.md`, "Exec
/// placement"), and one set per side measured that (a 10-node row at 1.05 in one H100 run, the
/// next at 0.94), not the API.
pub const SETS: usize = 4;

/// Measures both sides for each chain at each length, about `target_nodes` nodes per sample.
pub fn measure(rust: &mut RustSide, twin: &Twin, plan: &Plan, target_nodes: u32) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for (operation, rmw, programmatic) in CHAINS {
        for nodes in LENGTHS {
            let replays = replays_for(nodes, target_nodes);
            let want = if rmw { nodes * replays } else { 0 };
            let (mut execs, mut chains) = (Vec::with_capacity(SETS), Vec::with_capacity(SETS));
            for set in 0..SETS {
                let rust_first = crate::device_launch_width::rust_made_first(set);
                if !rust_first {
                    chains.push(twin.pdl_chain(rmw, programmatic, nodes)?);
                }
                let exec: GraphExec<HostLaunch> =
                    build(&rust.counter, rmw, programmatic, nodes)?.instantiate(Default::default())?;
                exec.upload(&rust.stream)?;
                execs.push(exec);
                if rust_first {
                    chains.push(twin.pdl_chain(rmw, programmatic, nodes)?);
                }
            }
            rust.stream.synchronize()?;
            let (mut rust_sample, mut cpp_sample) = (0, 0);
            let pair = interleave(
                plan,
                || {
                    let exec = &execs[rust_sample % SETS];
                    rust_sample += 1;
                    rust.begin_sample()?;
                    for _ in 0..replays {
                        exec.launch(&rust.stream)?;
                    }
                    let ms = rust.end_sample()?;
                    expect_count(operation, "Rust", rust.counter()?, want)?;
                    Ok(ms * 1e3 / f64::from(nodes * replays))
                },
                || {
                    let chain = &chains[cpp_sample % SETS];
                    cpp_sample += 1;
                    let (us, counter) = chain.replay(replays)?;
                    expect_count(operation, "C++", counter, want)?;
                    Ok(us)
                },
            )?;
            rows.push(Row::new(operation, format!("nodes={nodes}"), "µs/node", pair));
        }
    }
    Ok(rows)
}
