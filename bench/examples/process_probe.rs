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
    let twin = Twin::new(&rust.counter)?;
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
    report("+ both streams destroyed", &mut rust, &chains)?;
    enqueue_cost(&rust)?;
    per_exec(&mut rust, &twin)
}

/// The 10-node chain of empty kernels with programmatic edges, 8 execs a side made in the
/// bench's alternating order, each timed alone (median of 9 samples of 20 000 nodes): does
/// one side's exec run slower than the other's, or do execs of one side differ as much?
fn per_exec(rust: &mut RustSide, twin: &Twin) -> Result<()> {
    const NODES: u32 = 10;
    const REPLAYS: u32 = 2000;
    let (mut execs, mut chains) = (Vec::new(), Vec::new());
    for set in 0..8 {
        let rust_first = cuda_graph_bench::device_launch_width::rust_made_first(set);
        if !rust_first {
            chains.push(twin.pdl_chain(false, true, NODES)?);
        }
        let exec = build(&rust.counter, false, true, NODES)?.instantiate::<HostLaunch>(Default::default())?;
        exec.upload(&rust.stream)?;
        execs.push(exec);
        if rust_first {
            chains.push(twin.pdl_chain(false, true, NODES)?);
        }
    }
    let plan = Plan { warmup: 2, reps: 9 };
    let line = |side: &str, medians: Vec<f64>| {
        let text: Vec<String> = medians.iter().map(|m| format!("{m:.3}")).collect();
        println!("  {side}: {}", text.join(" "));
    };
    let (mut rust_medians, mut cpp_medians) = (Vec::new(), Vec::new());
    for (exec, chain) in execs.iter().zip(&chains) {
        let pair = interleave(
            &plan,
            || {
                rust.begin_sample()?;
                for _ in 0..REPLAYS {
                    exec.launch(&rust.stream)?;
                }
                Ok(rust.end_sample()? * 1e3 / f64::from(NODES * REPLAYS))
            },
            || Ok(chain.replay(REPLAYS)?.0),
        )?;
        rust_medians.push(pair.rust.median());
        cpp_medians.push(pair.cpp.median());
    }
    println!("10-node chain of empty kernels, programmatic edges, µs per node, exec by exec (made in the bench's order):");
    line("Rust", rust_medians);
    line("C++ ", cpp_medians);
    Ok(())
}

/// Host time per launch of a 10-node chain with programmatic edges, through `GraphExec::launch`
/// and through `cudaGraphLaunch` on the same exec, against the GPU time per replay: where the
/// first is not below the last, the row is bound by the host, and what the wrapper adds shows.
fn enqueue_cost(rust: &RustSide) -> Result<()> {
    const LAUNCHES: u32 = 2000;
    let exec = build(&rust.counter, false, true, 10)?.instantiate::<HostLaunch>(Default::default())?;
    exec.upload(&rust.stream)?;
    let mut wrapped = Vec::new();
    let mut raw = Vec::new();
    let mut gpu = Vec::new();
    for sample in 0..12 {
        for through_wrapper in [true, false] {
            rust.stream.synchronize()?;
            rust.start.record(&rust.stream)?;
            let started = std::time::Instant::now();
            for _ in 0..LAUNCHES {
                if through_wrapper {
                    exec.launch(&rust.stream)?;
                } else {
                    // SAFETY: exec and stream are alive; the chain uses no memory, and the
                    // stream is waited for below, before the exec can be dropped.
                    let status =
                        unsafe { cuda_graph::sys::cudaGraphLaunch(exec.as_raw(), rust.stream.as_raw()) };
                    if status != cuda_graph::sys::cudaError::cudaSuccess {
                        return Err(
                            cuda_graph::CudaError::from_code(status.0 as i32, "cudaGraphLaunch").into()
                        );
                    }
                }
            }
            let host_us = started.elapsed().as_secs_f64() * 1e6 / f64::from(LAUNCHES);
            let gpu_us = rust.end_sample()? * 1e3 / f64::from(LAUNCHES);
            if sample >= 2 {
                if through_wrapper {
                    wrapped.push(host_us)
                } else {
                    raw.push(host_us)
                }
                gpu.push(gpu_us);
            }
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "10-node chain, programmatic edges: host time per launch {:.3} µs (GraphExec::launch), {:.3} µs (cudaGraphLaunch); GPU time per replay {:.3} µs",
        median(&mut wrapped),
        median(&mut raw),
        median(&mut gpu)
    );
    Ok(())
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
