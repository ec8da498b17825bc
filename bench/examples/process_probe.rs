//! Why the bench's (h) chains cost more per node than the standalone
//! `bench/profile/chain_shape.cu` (bench/README.md, "Why the bench's chains cost more").
//!
//! In one process: the 100-node chains of (h) (empty and `*counter += 1`, plain and
//! programmatic edges), Rust and the C++ twin taking turns as the bench samples them, first in
//! a fresh process, then after 1000 empty-kernel stream launches on one new stream, then after
//! 30 more on a second new stream. Kernel launches on two streams are what the bench's (a)
//! does before (h) (its Rust stream and its twin's); the middle stage shows that launches on
//! one stream are not enough. Each figure is a median of 15 samples of 20 000 nodes after a
//! warm-up; the read-modify-write chains' counter is checked every sample, as in the bench.
//!
//! ```text
//! bash .gpu/run process_probe          # on the GPU machine, from the bundle
//! ```

use cuda_graph::graph::{GraphExec, HostLaunch};
use cuda_graph::{LaunchConfig, Stream};
use cuda_graph_bench::error::expect_count;
use cuda_graph_bench::harness::{interleave, Plan, RustSide};
use cuda_graph_bench::kernels::bench_empty;
use cuda_graph_bench::pdl_chain::{build, CHAINS};
use cuda_graph_bench::twin::{Twin, TwinChain};
use cuda_graph_bench::Result;

const NODES: u32 = 100;
const REPLAYS: u32 = 200;
const PLAN: Plan = Plan { warmup: 2, reps: 15 };

/// One chain of (h), on both sides.
struct Chain<'t> {
    operation: &'static str,
    rmw: bool,
    rust: GraphExec<HostLaunch>,
    cpp: TwinChain<'t>,
}

fn main() -> std::process::ExitCode {
    match probe() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("process_probe: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn probe() -> Result<()> {
    let mut rust = RustSide::new()?;
    let twin = Twin::new()?;
    let chains = CHAINS
        .iter()
        .map(|&(operation, rmw, programmatic)| {
            let exec = build(&rust.counter, rmw, programmatic, NODES)?.instantiate(Default::default())?;
            exec.upload(&rust.stream)?;
            Ok(Chain { operation, rmw, rust: exec, cpp: twin.pdl_chain(rmw, programmatic, NODES)? })
        })
        .collect::<Result<Vec<_>>>()?;
    println!(
        "{NODES}-node chains, µs per node, Rust / C++ (medians of {} samples of {} nodes)",
        PLAN.reps,
        NODES * REPLAYS
    );
    report("fresh process", &mut rust, &chains)?;
    let streams = [Stream::new()?, Stream::new()?];
    launch_empty(&streams[0], 1000)?;
    report("+ 1000 stream launches on one new stream", &mut rust, &chains)?;
    launch_empty(&streams[1], 30)?;
    report("+ 30 stream launches on a second new stream", &mut rust, &chains)?;
    drop(streams);
    report("+ both streams destroyed", &mut rust, &chains)
}

/// `count` launches of the empty kernel on `stream`, waited for.
fn launch_empty(stream: &Stream, count: u32) -> Result<()> {
    for _ in 0..count {
        bench_empty().launch(stream, LaunchConfig::new(1, 1), ())?;
    }
    Ok(stream.synchronize()?)
}

fn report(stage: &str, rust: &mut RustSide, chains: &[Chain<'_>]) -> Result<()> {
    println!("{stage}");
    for chain in chains {
        let want = if chain.rmw { NODES * REPLAYS } else { 0 };
        let pair = interleave(
            &PLAN,
            || {
                rust.begin_sample()?;
                for _ in 0..REPLAYS {
                    chain.rust.launch(&rust.stream)?;
                }
                let ms = rust.end_sample()?;
                expect_count(chain.operation, "Rust", rust.counter()?, want)?;
                Ok(ms * 1e3 / f64::from(NODES * REPLAYS))
            },
            || {
                let (us, counter) = chain.cpp.replay(REPLAYS)?;
                expect_count(chain.operation, "C++", counter, want)?;
                Ok(us)
            },
        )?;
        let (r, c) = (pair.rust.median(), pair.cpp.median());
        println!("  {:<58} {r:.3} / {c:.3}  ({:.3})", chain.operation, r / c);
    }
    Ok(())
}
