//! Does where a kernel chain's counter lives decide its replay time? The bench's "graph
//! replay, kernel chain" and read-modify-write rows compare the Rust side's graph, whose
//! kernels update the Rust side's counter, with the C++ twin's, whose kernels update the
//! twin's own counter; the rows without memory traffic (empty kernels) agree to 0.1%.
//!
//! This probe builds the same 100-node `bench_chain_step` chain through the crate on each of 8
//! counters (separate `cudaMalloc`s, so separate addresses), and the twin's chain on its
//! counter (a ninth), and times replays of each, the chains taking turns: 21 samples of 100 replays
//! each after 3 warm-up samples, medians in µs per node. If the Rust chains differ among
//! themselves as much as the bench's Rust and C++ rows do, the rows measure where the counter
//! lives, not the code that built the graph.
//!
//! ```text
//! bash .gpu/run replay_probe          # on the GPU machine, from the bundle
//! ```

use cuda_graph::graph::{GraphExec, HostLaunch};
use cuda_graph::{DeviceBuffer, Event, Stream};
use cuda_graph_bench::graph_replay::build_chain;
use cuda_graph_bench::twin::Twin;
use cuda_graph_bench::Result;

const NODES: u32 = 100;
const REPLAYS: u32 = 100;
const COUNTERS: usize = 8;
const SAMPLES: usize = 21;
const WARMUP: usize = 3;

fn main() -> Result<()> {
    let stream = Stream::new()?;
    let (start, end) = (Event::new()?, Event::new()?);
    let counters: Vec<DeviceBuffer<u32>> =
        (0..COUNTERS).map(|_| DeviceBuffer::<u32>::zeroed(1)).collect::<std::result::Result<_, _>>()?;
    let mut execs: Vec<GraphExec<HostLaunch>> = Vec::new();
    for counter in &counters {
        let exec: GraphExec<HostLaunch> = build_chain(counter, NODES, 1)?.instantiate(Default::default())?;
        exec.upload(&stream)?;
        execs.push(exec);
    }
    stream.synchronize()?;
    // The twin on a ninth counter of its own (the bench hands it the Rust side's).
    let twin_counter = DeviceBuffer::<u32>::zeroed(1)?;
    let twin = Twin::new(&twin_counter)?;
    let cpp = twin.chain(NODES, 1)?;
    let mut rust_samples = vec![Vec::new(); COUNTERS];
    let mut cpp_samples = Vec::new();
    for sample in 0..WARMUP + SAMPLES {
        for turn in 0..=COUNTERS {
            let way = (sample + turn) % (COUNTERS + 1);
            let us = if way == COUNTERS {
                cpp.replay(REPLAYS)?.0
            } else {
                start.record(&stream)?;
                for _ in 0..REPLAYS {
                    execs[way].launch(&stream)?;
                }
                end.record(&stream)?;
                end.synchronize()?;
                f64::from(Event::elapsed_ms(&start, &end)?) * 1e3 / f64::from(NODES * REPLAYS)
            };
            if sample >= WARMUP {
                if way == COUNTERS {
                    cpp_samples.push(us);
                } else {
                    rust_samples[way].push(us);
                }
            }
        }
    }
    let median = |samples: &mut Vec<f64>| {
        samples.sort_by(f64::total_cmp);
        samples[samples.len() / 2]
    };
    let cpp_median = median(&mut cpp_samples);
    println!(
        "100-node bench_chain_step chain, µs per node (median of {SAMPLES} samples of {REPLAYS} replays):"
    );
    println!("  C++ twin, its counter                      {cpp_median:.4}");
    let mut rust: Vec<(f64, u64)> = Vec::new();
    for (samples, counter) in rust_samples.iter_mut().zip(&counters) {
        rust.push((median(samples), counter.as_raw() as u64));
    }
    for (us, address) in &rust {
        println!("  Rust, counter at {address:#014x}          {us:.4}   ({:.3} of C++)", us / cpp_median);
    }
    let (low, high) =
        rust.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), (us, _)| (lo.min(*us), hi.max(*us)));
    println!("  Rust over its counters: {low:.4}-{high:.4} ({:.3}x spread)", high / low);
    Ok(())
}
