//! `graph_memory`: where a graph's scratch memory comes from, and what it costs.
//!
//! A pipeline of K stages (`gm_stage`, one elementwise kernel per stage) reads `x`, hands K-1
//! scratch buffers from stage to stage, and writes `y`. The scratch comes from three places:
//! 1. **static graph**: K-1 buffers allocated once with `cudaMalloc` and held for good, and a
//!    graph of the K kernels over them (the chapter's advice: "pre-allocate memory outside the
//!    graph");
//! 2. **graph memory nodes**: the graph allocates each buffer (`cudaGraphNodeTypeMemAlloc`)
//!    right before its writer and frees it (`cudaGraphNodeTypeMemFree`) right after its
//!    reader, with each allocation ordered after the free two stages back, so CUDA can give it
//!    the same memory and at most two buffers' worth is ever needed;
//! 3. **stream pool**: the same pass launched on a stream, each buffer taken from a
//!    stream-ordered memory pool (`cudaMallocFromPoolAsync`) and freed in stream order.
//!
//! For each, the time per pass (median of `runs` timed runs of `iters` passes, CUDA events)
//! and the output, checked against the CPU reference after every run. For the graph with
//! memory nodes, the device's graph-memory counters (`Device::graph_memory_usage`) after
//! one replay and after all of them: the peak, and that memory does not grow with replays (it
//! is reused, not leaked). For the pool, its used and reserved bytes after one pass and after
//! all of them.

#![warn(missing_docs)]
#![deny(unsafe_code)]

mod program;

pub use program::Program;

mod graph_alloc;
mod pipeline;

use std::collections::BTreeSet;

use chapter_common::{Book, ExampleError, OptionCheck, Report, Rng, Samples};
use cuda_graph::graph::HostLaunch;
use cuda_graph::{CudaError, DeviceBuffer, Event, GraphMemoryUsage, MemoryPool, MemoryPoolOptions, Stream};
use serde_json::json;

pub use graph_alloc::mem_node_graph;
pub use pipeline::{pool_pass, reference, static_graph, Stage, THREADS_PER_BLOCK};

/// The largest buffer accepted (256 MiB of `u32`).
pub const MAX_ELEMENTS: u32 = 1 << 26;

/// What to run: the pipeline's size and length, and how long to time it.
///
/// The fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Options {
    /// Timed runs of each variant after one warm-up pass; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the input and of the stages' constants.
    #[arg(skip)]
    pub seed: u64,
    /// Elements per buffer (default: 4194304, or 65536 with --quick).
    #[arg(long, value_name = "N")]
    pub size: u32,
    /// Stages of the pipeline, 2 to 16; it has one scratch buffer fewer (default: 6, or 4 with
    /// --quick).
    #[arg(long, value_name = "K")]
    pub stages: u32,
    /// Passes (graph replays) per timed run (default: 50, or 5 with --quick).
    #[arg(long, value_name = "N")]
    pub iters: u32,
}

impl Default for Options {
    /// Chapter scale: 4 Mi elements (16 MiB buffers), 6 stages (5 scratch buffers), 50
    /// passes per run.
    fn default() -> Options {
        Options { size: 1 << 22, stages: 6, iters: 50, runs: 5, seed: 0x5eed }
    }
}

impl Options {
    /// Small and fast (for tests and `--quick`): 64 Ki elements, 4 stages, 5 passes, 2 runs.
    pub fn quick() -> Options {
        Options { size: 1 << 16, stages: 4, iters: 5, runs: 2, ..Options::default() }
    }

    /// Refuses what the pipeline cannot run, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        OptionCheck::new("graph_memory")
            .rule("size", (1..=MAX_ELEMENTS).contains(&self.size), || {
                format!("size must be 1..={MAX_ELEMENTS} elements, not {}", self.size)
            })
            .within("stages", self.stages, 2..=16)
            .within("iters", self.iters, 1..=100_000)
            .at_least("runs", self.runs, 1)
            .done()
    }

    /// Passes each variant makes: one warm-up, then `runs` x `iters`.
    pub fn passes(&self) -> u64 {
        1 + self.runs as u64 * u64::from(self.iters)
    }
}

/// The chapter's own listing for this program: what `--book` runs, or why it runs nothing
/// (see [`Book`]).
pub fn book() -> Book<Options> {
    Book::NoListing {
        note: "The chapter gives no program for this: its text advises pre-allocating outside \
               the graph (static pools, fixed addresses). The pipeline, its sizes and the \
               memory-node variant are the port's.",
    }
}

/// One variant's timings and its first wrong output.
struct Timing {
    samples: Samples,
    mismatch: Option<String>,
}

/// What every variant shares: the stream, the output and its reference.
struct Bench<'a> {
    stream: &'a Stream,
    y: DeviceBuffer<u32>,
    reference: &'a [u32],
    options: &'a Options,
}

impl Bench<'_> {
    /// One warm-up pass, `after_warmup`, then `runs` timed runs of `iters` passes; `y` is
    /// cleared before and checked after every run (the warm-up's included).
    fn measure(
        &mut self, name: &str, mut pass: impl FnMut(&Stream) -> Result<(), CudaError>,
        mut after_warmup: impl FnMut() -> Result<(), CudaError>,
    ) -> Result<Timing, CudaError> {
        let (start, end) = (Event::new()?, Event::new()?);
        let mut samples = Samples::default();
        let mut mismatch = None;
        for run in 0..=self.options.runs {
            self.y.memset_async(0, self.stream)?;
            let passes = if run == 0 { 1 } else { self.options.iters };
            start.record(self.stream)?;
            for _ in 0..passes {
                pass(self.stream)?;
            }
            end.record(self.stream)?;
            end.synchronize()?;
            if run == 0 {
                after_warmup()?;
            } else {
                samples.push(f64::from(Event::elapsed_ms(&start, &end)?) / f64::from(passes));
            }
            let got = self.y.to_vec()?;
            if mismatch.is_none() {
                mismatch = got.iter().zip(self.reference).position(|(g, w)| g != w).map(|i| {
                    format!("{name} run {run}: element {i} is {:#x}, want {:#x}", got[i], self.reference[i])
                });
            }
        }
        Ok(Timing { samples, mismatch })
    }
}

/// Bytes as MiB.
fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 20)
}

/// Runs the three variants on device 0 and reports times, memory figures and the checks.
///
/// Errors are CUDA's (no device, a failed launch) or invalid options; a wrong result is not an
/// error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    let (device, properties) = chapter_common::device_zero()?;
    let mut rng = Rng::new(options.seed);
    let stages = Stage::random(&mut rng, options.stages);
    let n = options.size;
    let input: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
    let want = reference(&input, &stages);
    let stream = Stream::new()?;
    let x = DeviceBuffer::from_slice(&input)?;
    let mut bench =
        Bench { stream: &stream, y: DeviceBuffer::zeroed(n as usize)?, reference: &want, options };

    let static_timing = bench.static_graph(&stages, &x)?;
    let nodes = bench.mem_nodes(&device, &stages, &x)?;
    let pool = bench.stream_pool(&device, &stages, &x)?;

    let mut report = Report::new("graph_memory");
    let runs = Runs { options, static_timing, nodes, pool };
    runs.report_figures(&mut report);
    runs.report_checks(&mut report);
    runs.report_notes(&mut report, &properties);
    Ok(report)
}

/// What the graph-memory-node variant measured: its times, the graph memory counters before,
/// after one replay, after all and after a trim, and the allocations' addresses.
struct MemNodes {
    timing: Timing,
    baseline: GraphMemoryUsage,
    after_one: GraphMemoryUsage,
    after_all: GraphMemoryUsage,
    after_trim: GraphMemoryUsage,
    addresses: Vec<u64>,
}

/// What the stream-ordered pool variant measured: its times, and the pool's (used, reserved)
/// bytes after one pass and after all.
struct PoolRun {
    timing: Timing,
    after_one: (u64, u64),
    after_all: (u64, u64),
}

impl Bench<'_> {
    /// 1. Preallocated scratch, a graph over it.
    fn static_graph(&mut self, stages: &[Stage], x: &DeviceBuffer<u32>) -> Result<Timing, ExampleError> {
        let n = self.options.size as usize;
        let scratch = (0..self.options.stages as usize - 1)
            .map(|_| DeviceBuffer::<u32>::zeroed(n))
            .collect::<Result<Vec<_>, _>>()?;
        let graph = static_graph(stages, x, &self.y, &scratch)?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        exec.upload(self.stream)?;
        Ok(self.measure("static graph", |s| exec.launch(s), || Ok(()))?)
    }

    /// 2. Graph memory nodes: the scratch allocated and freed inside the graph.
    fn mem_nodes(
        &mut self, device: &cuda_graph::Device, stages: &[Stage], x: &DeviceBuffer<u32>,
    ) -> Result<MemNodes, ExampleError> {
        device.synchronize()?;
        device.trim_graph_memory()?;
        device.reset_graph_memory_peaks()?;
        let baseline = device.graph_memory_usage()?;
        let (graph, allocs) = mem_node_graph(stages, x, &self.y)?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        exec.upload(self.stream)?;
        let mut after_one = GraphMemoryUsage::default();
        let mem_nodes_timing = self.measure(
            "graph memory nodes",
            |s| exec.launch(s),
            || {
                after_one = device.graph_memory_usage()?;
                Ok(())
            },
        )?;
        self.stream.synchronize()?;
        let after_all = device.graph_memory_usage()?;
        drop(exec);
        drop(graph);
        device.synchronize()?;
        device.trim_graph_memory()?;
        let after_trim = device.graph_memory_usage()?;

        let addresses = allocs.iter().map(|a| a.addr()).collect();
        Ok(MemNodes { timing: mem_nodes_timing, baseline, after_one, after_all, after_trim, addresses })
    }

    /// 3. A stream-ordered pool: the scratch allocated and freed on the stream every pass.
    fn stream_pool(
        &mut self, device: &cuda_graph::Device, stages: &[Stage], x: &DeviceBuffer<u32>,
    ) -> Result<PoolRun, ExampleError> {
        let n = self.options.size;
        let pool = MemoryPool::new(MemoryPoolOptions { release_threshold: u64::MAX, ..Default::default() })?;
        let (x_ptr, y_ptr) = (x.ptr(), self.y.ptr());
        let mut pool_after_one = (0, 0);
        let pool_timing = self.measure(
            "stream pool",
            |s| pool_pass(s, &pool, stages, &x_ptr, &y_ptr, n),
            || {
                device.synchronize()?;
                pool_after_one = (pool.used_bytes()?, pool.reserved_bytes()?);
                Ok(())
            },
        )?;
        device.synchronize()?;
        let pool_after_all = (pool.used_bytes()?, pool.reserved_bytes()?);

        Ok(PoolRun { timing: pool_timing, after_one: pool_after_one, after_all: pool_after_all })
    }
}

/// The three variants' outcomes, for the report.
struct Runs<'a> {
    options: &'a Options,
    static_timing: Timing,
    nodes: MemNodes,
    pool: PoolRun,
}

impl Runs<'_> {
    /// The scratch bytes: one buffer per stage but the last.
    fn scratch(&self) -> (usize, u64) {
        let bytes = u64::from(self.options.size) * 4;
        (self.options.stages as usize - 1, bytes)
    }

    /// Times, the graph memory counters and the pool's bytes.
    fn report_figures(&self, report: &mut Report) {
        let (options, (scratch_count, bytes)) = (self.options, self.scratch());
        let (static_timing, mem_nodes_timing, pool_timing) =
            (&self.static_timing, &self.nodes.timing, &self.pool.timing);
        let (after_one, after_all, after_trim) =
            (&self.nodes.after_one, &self.nodes.after_all, &self.nodes.after_trim);
        let (pool_after_one, pool_after_all) = (self.pool.after_one, self.pool.after_all);
        let distinct_addresses = self.nodes.addresses.iter().collect::<BTreeSet<_>>().len();
        let (static_ms, nodes_ms, pool_ms) =
            (static_timing.samples.median(), mem_nodes_timing.samples.median(), pool_timing.samples.median());
        let static_bytes = scratch_count as u64 * bytes;
        report.figure("static_graph_ms", static_ms, "ms");
        report.figure("mem_nodes_graph_ms", nodes_ms, "ms");
        report.figure("stream_pool_ms", pool_ms, "ms");
        report.figure("mem_nodes_over_static_time", nodes_ms / static_ms, "x");
        report.figure("static_scratch_mib", mib(static_bytes), "MiB");
        report.figure("graph_peak_mib", mib(after_all.used_high), "MiB");
        report.figure("graph_peak_over_static", after_all.used_high as f64 / static_bytes as f64, "x");
        report.figure("graph_reserved_high_mib", mib(after_all.reserved_high), "MiB");
        report.figure("graph_used_after_1_mib", mib(after_one.used), "MiB");
        report.figure("graph_used_after_n_mib", mib(after_all.used), "MiB");
        report.figure("graph_reserved_after_1_mib", mib(after_one.reserved), "MiB");
        report.figure("graph_reserved_after_n_mib", mib(after_all.reserved), "MiB");
        report.figure("graph_reserved_after_trim_mib", mib(after_trim.reserved), "MiB");
        report.figure("distinct_scratch_addresses", distinct_addresses as f64, "addresses");
        report.figure("pool_used_after_n_mib", mib(pool_after_all.0), "MiB");
        report.figure("pool_reserved_after_1_mib", mib(pool_after_one.1), "MiB");
        report.figure("pool_reserved_after_n_mib", mib(pool_after_all.1), "MiB");
        report.figure("replays", options.passes() as f64, "replays");
    }

    /// Every variant against the CPU, the graph memory flat across replays and used at all, the
    /// pool's memory all returned.
    fn report_checks(&self, report: &mut Report) {
        let (options, (scratch_count, bytes)) = (self.options, self.scratch());
        let n = options.size;
        let (static_timing, mem_nodes_timing, pool_timing) =
            (&self.static_timing, &self.nodes.timing, &self.pool.timing);
        let (after_one, after_all) = (&self.nodes.after_one, &self.nodes.after_all);
        let (pool_after_one, pool_after_all) = (self.pool.after_one, self.pool.after_all);
        let timings = [
            ("static_graph", &static_timing),
            ("mem_nodes_graph", &mem_nodes_timing),
            ("stream_pool", &pool_timing),
        ];
        let mismatches: Vec<&str> = timings.iter().filter_map(|(_, t)| t.mismatch.as_deref()).collect();
        report.check(
            "all variants match CPU reference",
            mismatches.is_empty(),
            match mismatches.first() {
                None => format!(
                    "{} runs of each of 3 variants x {n} elements, bit-exact after every run",
                    options.runs + 1
                ),
                Some(first) => format!("{} variant(s) differ; first: {first}", mismatches.len()),
            },
        );
        report.check(
            "graph memory flat across replays",
            after_one.used == after_all.used && after_one.reserved == after_all.reserved,
            format!(
                "used {} -> {} bytes, reserved {} -> {} bytes from replay 1 to replay {}",
                after_one.used,
                after_all.used,
                after_one.reserved,
                after_all.reserved,
                options.passes()
            ),
        );
        report.check(
            "graph allocations were made",
            after_all.used_high >= bytes,
            format!(
                "graph-memory high watermark {} bytes for {scratch_count} allocations of {bytes} bytes",
                after_all.used_high
            ),
        );
        report.check(
            "pool memory all returned after every pass",
            pool_after_one.0 == 0 && pool_after_all.0 == 0,
            format!(
                "pool bytes in use once the device is idle: {} after 1 pass, {} after {}",
                pool_after_one.0,
                pool_after_all.0,
                options.passes()
            ),
        );
    }

    /// The device and sizes, the counters in full, and the per-variant data.
    fn report_notes(&self, report: &mut Report, properties: &cuda_graph::DeviceProperties) {
        let (options, (scratch_count, bytes)) = (self.options, self.scratch());
        let n = options.size;
        let MemNodes { baseline, after_one, after_all, after_trim, .. } = &self.nodes;
        let timings = [
            ("static_graph", &self.static_timing),
            ("mem_nodes_graph", &self.nodes.timing),
            ("stream_pool", &self.pool.timing),
        ];
        report.note(format!(
        "{} ({} SMs): {} stages over {n} elements ({:.1} MiB per buffer), {scratch_count} scratch buffers",
        properties.name,
        properties.multiprocessors,
        options.stages,
        mib(bytes)
    ));
        report.note(format!(
        "graph memory counters (bytes): before {baseline:?}; after 1 replay {after_one:?}; after {} {after_all:?}; \
         after drop + cudaDeviceGraphMemTrim {after_trim:?}",
        options.passes()
    ));
        report.note(
        "kernel nodes use graph allocations through MemAllocNode::ptr (unsafe in cuda-graph: the memory exists \
         only between the alloc and free nodes), in src/graph_alloc.rs",
    );
        report.data(
            "variants",
            json!(timings
                .iter()
                .map(|(name, t)| {
                    let (min, max) = t.samples.range();
                    json!({ "variant": name, "median_ms": t.samples.median(), "min_ms": min, "max_ms": max })
                })
                .collect::<Vec<_>>()),
        );
        report.data(
        "graph_memory_bytes",
        json!({
            "baseline": stats_json(baseline),
            "after_1": stats_json(after_one),
            "after_n": stats_json(after_all),
            "after_trim": stats_json(after_trim),
            "allocation_addresses": self.nodes.addresses.iter().map(|a| format!("{a:#x}")).collect::<Vec<_>>(),
        }),
    );
    }
}

fn stats_json(stats: &GraphMemoryUsage) -> serde_json::Value {
    json!({
        "used": stats.used,
        "used_high": stats.used_high,
        "reserved": stats.reserved,
        "reserved_high": stats.reserved_high,
    })
}

/// The one-line summary for the chapter table, e.g.
/// `graph scratch peak 32 MiB vs 80 MiB preallocated; 0.071 vs 0.070 ms/pass; flat over 251 replays`.
///
/// ```
/// let mut report = chapter_common::Report::new("graph_memory");
/// report.figure("graph_peak_mib", 32.0, "MiB");
/// report.figure("static_scratch_mib", 80.0, "MiB");
/// report.figure("mem_nodes_graph_ms", 0.071, "ms");
/// report.figure("static_graph_ms", 0.070, "ms");
/// report.figure("replays", 251.0, "replays");
/// report.check("graph memory flat across replays", true, "");
/// assert_eq!(
///     graph_memory::headline(&report),
///     "graph scratch peak 32 MiB vs 80 MiB preallocated; 0.071 vs 0.070 ms/pass; flat over 251 replays"
/// );
/// ```
pub fn headline(report: &Report) -> String {
    let flat = report.to_json()["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["name"] == "graph memory flat across replays"))
        .is_some_and(|c| c["held"] == true);
    format!(
        "graph scratch peak {:.0} MiB vs {:.0} MiB preallocated; {:.3} vs {:.3} ms/pass; {} over {:.0} replays",
        report.figure_or_nan("graph_peak_mib"),
        report.figure_or_nan("static_scratch_mib"),
        report.figure_or_nan("mem_nodes_graph_ms"),
        report.figure_or_nan("static_graph_ms"),
        if flat { "flat" } else { "GROWING" },
        report.figure_or_nan("replays"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_quick_are_valid_and_bad_options_are_refused_by_name() {
        assert!(Options::quick().size < Options::default().size);
        assert_eq!(Options::default().passes(), 251);
        chapter_common::assert_options_checked::<Program>(&[]);
        chapter_common::assert_flags_refused::<Program>(&[
            "--size=0",
            "--stages=1",
            "--stages=17",
            "--iters=0",
        ]);
    }

    #[test]
    fn mib_converts_bytes() {
        assert_eq!(mib(32 << 20), 32.0);
    }
}
