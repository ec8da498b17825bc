//! `cuda_graphs`: the same chain of small dependent kernels issued two ways.
//!
//! 1. **Stream**: every iteration queues the chain's `kernels` launches one by one
//!    (`cudaLaunchKernel` each), as ordinary code does.
//! 2. **Graph**: the chain is captured once from the stream (`cudaStreamBeginCapture` ..
//!    `cudaStreamEndCapture`), instantiated, and every iteration is one `cudaGraphLaunch`.
//!
//! Each kernel is small (a few thousand elements), so the work is launch-bound: the GPU waits
//! for the CPU to submit each kernel on the stream, while a graph hands it the whole chain at
//! once. Then the two ways of changing an instantiated graph without building it again:
//! 3. **per node**: `cudaGraphExecKernelNodeSetParams` gives one kernel node a new constant;
//! 4. **whole graph**: the chain is captured again with new constants and
//!    `cudaGraphExecUpdate` moves the exec to it.
//!
//! Every kernel works in place, and a timed run starts from the input and makes `iters` passes,
//! each continuing from the one before; the output after every run of every variant is
//! compared bit for bit with the CPU reference for exactly `iters` passes, so a pass that was
//! skipped (a graph that did not replay) or ran twice fails the check, not only a wrong last
//! pass. The stream's and the graph's checksums are then equal too: that follows from the
//! two checks and is reported as data, not as a check of its own. The figures are medians of
//! `runs` timed runs (CUDA events around `iters` iterations) after one warm-up run; the
//! headline is `speedup = stream_us_per_iter / graph_us_per_iter`.

#![warn(missing_docs)]

mod program;

pub use program::Program;

mod chain;

use std::time::Instant;

use chapter_common::{Book, ExampleError, OptionCheck, Preset, Report, Rng, Samples};
use cuda_graph::graph::{GraphExec, HostLaunch};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DeviceBuffer, Event, Stream};
use serde_json::json;

pub use chain::{checksum, reference, reference_passes, Step};

/// The largest element count accepted (1 GiB per buffer).
pub const MAX_ELEMENTS: u32 = 1 << 28;

/// The most kernels in the chain.
pub const MAX_KERNELS: u32 = 4096;

/// What to run; the fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Options {
    /// Timed runs after one warm-up run; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the input and of the kernels' constants.
    #[arg(skip)]
    pub seed: u64,
    /// Elements each kernel processes, one thread each (default: 4096, or 1000 with --quick).
    #[arg(long = "size", value_name = "N")]
    pub elements: u32,
    /// Kernels in the chain, each working in place on the output buffer (default: 20, or 6
    /// with --quick).
    #[arg(long, value_name = "K")]
    pub kernels: u32,
    /// Iterations (passes of the whole chain) per timed run (default: 1000, or 20 with --quick).
    #[arg(long, value_name = "N")]
    pub iters: u32,
    /// Threads per block.
    #[arg(skip)]
    pub threads_per_block: u32,
}

impl Default for Options {
    /// Chapter scale: 20 dependent kernels of 4096 elements (16 blocks of 256 threads, a few
    /// microseconds of GPU work each: launch-bound), 1000 iterations per run, 5 runs.
    fn default() -> Options {
        Options { elements: 1 << 12, kernels: 20, iters: 1000, runs: 5, seed: 0x5eed, threads_per_block: 256 }
    }
}

impl Options {
    /// Small and fast (for tests and `--quick`): 6 kernels of 1000 elements, 20 iterations,
    /// two runs.
    pub fn quick() -> Options {
        Options { elements: 1000, kernels: 6, iters: 20, runs: 2, ..Options::default() }
    }

    /// Refuses what cannot run, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        OptionCheck::new("cuda_graphs")
            .within("elements", self.elements, 1..=MAX_ELEMENTS)
            .rule("kernels", (2..=MAX_KERNELS).contains(&self.kernels), || {
                format!(
                    "kernels must be 2..={MAX_KERNELS} (one node's constant is changed), not {}",
                    self.kernels
                )
            })
            .at_least("iters", self.iters, 1)
            .at_least("runs", self.runs, 1)
            .threads_per_block(self.threads_per_block)
            .done()
    }
}

/// The chapter's own listing for this program: what `--book` runs, or why it runs nothing
/// (see [`Book`]).
pub fn book() -> Book<Options> {
    let options =
        Options { elements: 1 << 20, kernels: 3, iters: 100, threads_per_block: 256, ..Options::default() };
    Book::Preset {
        preset: Preset {
            quick: Options { elements: 1 << 14, iters: 10, runs: 2, ..options.clone() },
            options,
        },
        note: "cuda_graphs.cu: 1 Mi elements, three kernels per iteration, each 4096 blocks of 256, 100 \
               iterations, stream launches vs replays of the captured three, CUDA events around the 100. \
               Not as listed: the three kernels are one integer step with three seeded constants, \
               checked against the CPU (the listing's are float maps, unchecked); the figure is the \
               median of timed runs after a warm-up (the listing times each loop once, the stream loop \
               first and cold); the listing's update demo (one kernel's grid resized) is not this \
               port's. The port's default: 20 kernels of 4096 elements, 1000 iterations.",
    }
}

/// The stream every variant runs on and the two events that time it.
struct Timer {
    stream: Stream,
    start: Event,
    end: Event,
}

/// One timed run: GPU time (between the events) and host time spent queuing, in ms.
struct Timed {
    gpu_ms: f64,
    enqueue_ms: f64,
}

impl Timer {
    /// Times `iters` iterations queued by `enqueue`: events before and after, then a wait.
    fn time(
        &self, iters: u32, mut enqueue: impl FnMut(&Stream) -> cuda_graph::Result<()>,
    ) -> cuda_graph::Result<Timed> {
        self.start.record(&self.stream)?;
        let host = Instant::now();
        for _ in 0..iters {
            enqueue(&self.stream)?;
        }
        let enqueue_ms = host.elapsed().as_secs_f64() * 1e3;
        self.end.record(&self.stream)?;
        self.end.synchronize()?;
        let gpu_ms = f64::from(Event::elapsed_ms(&self.start, &self.end)?);
        Ok(Timed { gpu_ms, enqueue_ms })
    }

    /// Copies `input` into `out`, launches `exec` once, waits, and returns what `out` holds.
    fn replay_once(
        &self, exec: &GraphExec<HostLaunch>, input: &DeviceBuffer<u32>, out: &mut DeviceBuffer<u32>,
    ) -> cuda_graph::Result<Vec<u32>> {
        out.copy_from_device_async(input, &self.stream)?;
        exec.launch(&self.stream)?;
        self.stream.synchronize()?;
        out.to_vec()
    }
}

/// Per-run samples of one variant, its last checksum and the first wrong output met.
#[derive(Default)]
struct Variant {
    gpu_ms: Samples,
    enqueue_ms: Samples,
    mismatch: Option<String>,
    checksum: u64,
}

impl Variant {
    fn record(&mut self, run: usize, timed: Timed, out: &[u32], want: &[u32], label: &str) {
        if run > 0 {
            self.gpu_ms.push(timed.gpu_ms);
            self.enqueue_ms.push(timed.enqueue_ms);
        }
        self.checksum = checksum(out);
        if self.mismatch.is_none() {
            self.mismatch = first_difference(out, want).map(|i| {
                format!("{label} run {run}: element {i} is {:x?}, want {:x?}", out.get(i), want.get(i))
            });
        }
    }
}

/// The first index where `a` and `b` differ; a length difference counts (at the shorter end).
fn first_difference(a: &[u32], b: &[u32]) -> Option<usize> {
    if a.len() != b.len() {
        return Some(a.len().min(b.len()));
    }
    a.iter().zip(b).position(|(x, y)| x != y)
}

/// How many elements differ (for the report's details).
fn count_different(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x != y).count() + a.len().abs_diff(b.len())
}

/// Microseconds since `start`.
fn us_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e6
}

/// Host wall time (µs) of calls to `f(i)` for `i` in `0..2 * (pairs + 1)`, the first two
/// untimed (warm-up): `pairs` pairs of calls timed, the last call's `i` odd.
fn time_alternating(
    pairs: usize, mut f: impl FnMut(usize) -> cuda_graph::Result<()>,
) -> cuda_graph::Result<Samples> {
    let mut samples = Samples::default();
    for i in 0..2 * (pairs + 1) {
        let t = Instant::now();
        f(i)?;
        if i >= 2 {
            samples.push(us_since(t));
        }
    }
    Ok(samples)
}

/// Runs the comparison and the two updates on device 0 and reports times and checks.
///
/// Errors are CUDA's (no device, a failed launch or capture) or invalid options; a wrong
/// result is not an error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    let (_, properties) = chapter_common::device_zero()?;

    let mut rng = Rng::new(options.seed);
    let n = options.elements as usize;
    let host_input: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
    let steps = Step::random(&mut rng, options.kernels);
    let want = reference(&host_input, &steps);
    // What a run must leave: the chain applied `iters` times, each pass from the last.
    let want_run = reference_passes(&host_input, &steps, options.iters);

    let config = LaunchConfig::for_elements(options.elements, options.threads_per_block);
    let timer = Timer { stream: Stream::new()?, start: Event::new()?, end: Event::new()? };
    let input = DeviceBuffer::from_slice(&host_input)?;
    let mut out_stream = DeviceBuffer::<u32>::zeroed(n)?;
    let mut out_graph = DeviceBuffer::<u32>::zeroed(n)?;

    // Capture once and instantiate once: the one-off costs, timed on the host (after the
    // kernel's one-off parameter check and module load).
    chain::cg_step().function()?;
    let t = Instant::now();
    let graph = chain::capture_pass(&timer.stream, config, &steps, &out_graph)?;
    let capture_us = us_since(t);
    let t = Instant::now();
    let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
    let instantiate_us = us_since(t);
    exec.upload(&timer.stream)?;
    let nodes = graph.node_count()?;

    // 1 and 2: stream launches vs graph replay, alternating; run 0 is the warm-up. Each run
    // starts from the input (copied untimed, before the start event) and must leave exactly
    // `iters` passes.
    let mut on_stream = Variant::default();
    let mut in_graph = Variant::default();
    for run in 0..=options.runs {
        out_stream.copy_from_device_async(&input, &timer.stream)?;
        let timed =
            timer.time(options.iters, |stream| chain::launch_pass(stream, config, &steps, &out_stream))?;
        on_stream.record(run, timed, &out_stream.to_vec()?, &want_run, "stream");

        out_graph.copy_from_device_async(&input, &timer.stream)?;
        let timed = timer.time(options.iters, |stream| exec.launch(stream))?;
        in_graph.record(run, timed, &out_graph.to_vec()?, &want_run, "graph");
    }

    // 3: the same chain built node by node (which hands out the kernel nodes), then one node's
    // constant changed in the exec with cudaGraphExecKernelNodeSetParams.
    let (built, built_nodes) = chain::build_pass(config, &steps, &out_graph)?;
    let mut built_exec = built.instantiate::<HostLaunch>(Default::default())?;
    let built_out = timer.replay_once(&built_exec, &input, &mut out_graph)?;
    let k = options.kernels as usize / 2;
    let mut changed = steps.clone();
    changed[k].add ^= rng.next_u64() as u32 | 1;
    let want_changed = reference(&host_input, &changed);
    // Alternate old and new constant; the last call (an odd index) leaves the new one.
    let set_params = time_alternating(options.runs, |i| {
        let step = if i % 2 == 1 { changed[k] } else { steps[k] };
        built_exec.set_kernel_params(
            &built_nodes[k],
            chain::cg_step(),
            config,
            chain::step_args(step, &out_graph),
        )
    })?;
    let set_out = timer.replay_once(&built_exec, &input, &mut out_graph)?;

    // 4: the chain captured again with all-new constants; cudaGraphExecUpdate moves the
    // captured exec to it (same topology, so no new instantiation).
    let new_steps = Step::random(&mut rng, options.kernels);
    let want_new = reference(&host_input, &new_steps);
    let recaptured = chain::capture_pass(&timer.stream, config, &new_steps, &out_graph)?;
    let updates =
        time_alternating(options.runs, |i| exec.update(if i % 2 == 1 { &recaptured } else { &graph }))?;
    let update_out = timer.replay_once(&exec, &input, &mut out_graph)?;
    let t = Instant::now();
    drop(recaptured.instantiate::<HostLaunch>(Default::default())?);
    let reinstantiate_us = us_since(t);

    // The report.
    let iters = f64::from(options.iters);
    let kernels = f64::from(options.kernels);
    let stream_us = on_stream.gpu_ms.median() * 1e3 / iters;
    let graph_us = in_graph.gpu_ms.median() * 1e3 / iters;
    let mut report = Report::new("cuda_graphs");
    report.figure("stream_us_per_iter", stream_us, "us");
    report.figure("graph_us_per_iter", graph_us, "us");
    report.figure("speedup", stream_us / graph_us, "x");
    report.figure("stream_us_per_kernel", stream_us / kernels, "us");
    report.figure("graph_us_per_kernel", graph_us / kernels, "us");
    report.figure("stream_enqueue_us_per_iter", on_stream.enqueue_ms.median() * 1e3 / iters, "us");
    report.figure("graph_enqueue_us_per_iter", in_graph.enqueue_ms.median() * 1e3 / iters, "us");
    report.figure("capture_us", capture_us, "us");
    report.figure("instantiate_us", instantiate_us, "us");
    report.figure("set_kernel_params_us", set_params.median(), "us");
    report.figure("exec_update_us", updates.median(), "us");
    report.figure("reinstantiate_us", reinstantiate_us, "us");
    report.figure("kernels", kernels, "kernels");
    report.figure("elements", f64::from(options.elements), "elements");

    for (name, variant) in
        [("stream matches CPU reference", &on_stream), ("graph replay matches CPU reference", &in_graph)]
    {
        report.check(
            name,
            variant.mismatch.is_none(),
            variant.mismatch.clone().unwrap_or_else(|| {
                format!(
                    "each of {} runs left exactly {} accumulated passes of {} kernels x {} elements, bit-exact",
                    options.runs + 1,
                    options.iters,
                    options.kernels,
                    options.elements
                )
            }),
        );
    }
    report.check(
        "node-by-node graph equals the captured one",
        built_out == want,
        format!("{} of {n} elements differ from the CPU reference", count_different(&built_out, &want)),
    );
    report.check(
        "replay after set_kernel_params",
        set_out == want_changed && want_changed != want,
        format!(
            "node {k}: add {:#010x} -> {:#010x}; {} of {n} elements differ from the new reference, {} from the old",
            steps[k].add,
            changed[k].add,
            count_different(&set_out, &want_changed),
            count_different(&set_out, &want),
        ),
    );
    report.check(
        "replay after whole-graph update",
        update_out == want_new && want_new != want,
        format!(
            "recaptured with new constants; {} of {n} elements differ from the new reference, {} from the old",
            count_different(&update_out, &want_new),
            count_different(&update_out, &want),
        ),
    );

    report.note(format!(
        "{} ({} SMs): {} kernels x {} blocks of {} threads per iteration, {} iterations per run; \
         the captured graph has {nodes} nodes",
        properties.name,
        properties.multiprocessors,
        options.kernels,
        config.grid.x,
        options.threads_per_block,
        options.iters
    ));
    report.note(
        "times per iteration are CUDA-event times around a whole run divided by its iterations; \
         enqueue times are host time spent in the launch calls",
    );
    let runs_json = |v: &Variant| json!(v.gpu_ms.0.iter().map(|ms| ms * 1e3 / iters).collect::<Vec<_>>());
    report
        .data("runs_us_per_iter", json!({ "stream": runs_json(&on_stream), "graph": runs_json(&in_graph) }));
    // Implied by the two checks above (both outputs equal the reference), so data, not a check.
    report.data(
        "checksum",
        json!({ "stream": on_stream.checksum, "graph": in_graph.checksum, "cpu": checksum(&want_run) }),
    );
    report.note(
        "checksums (data) are not a separate check: stream and graph equal is implied by both \
         matching the CPU reference",
    );
    Ok(report)
}

/// The one-line summary for the chapter table, e.g.
/// `graph 1.62x over stream (12.3 vs 19.9 µs/iter)`.
///
/// ```
/// let mut report = chapter_common::Report::new("cuda_graphs");
/// report.figure("stream_us_per_iter", 19.9, "us");
/// report.figure("graph_us_per_iter", 12.3, "us");
/// report.figure("speedup", 19.9 / 12.3, "x");
/// assert_eq!(cuda_graphs::headline(&report), "graph 1.62x over stream (12.3 vs 19.9 µs/iter)");
/// ```
pub fn headline(report: &Report) -> String {
    format!(
        "graph {:.2}x over stream ({:.1} vs {:.1} µs/iter)",
        report.figure_or_nan("speedup"),
        report.figure_or_nan("graph_us_per_iter"),
        report.figure_or_nan("stream_us_per_iter")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_quick_are_valid_and_bad_options_are_refused_by_name() {
        assert!(Options::quick().iters < Options::default().iters);
        chapter_common::assert_options_checked::<Program>(&[(
            "threads_per_block",
            Options { threads_per_block: 100, ..Options::quick() },
        )]);
        chapter_common::assert_flags_refused::<Program>(&["--size=0", "--kernels=1", "--iters=0"]);
    }

    #[test]
    fn differences_are_found_and_counted() {
        assert_eq!(first_difference(&[1, 2, 3], &[1, 2, 3]), None);
        assert_eq!(first_difference(&[1, 5, 3], &[1, 2, 4]), Some(1));
        assert_eq!(first_difference(&[1], &[1, 2]), Some(1));
        assert_eq!(count_different(&[1, 5, 3], &[1, 2, 4]), 2);
        assert_eq!(count_different(&[1], &[1, 2]), 1);
    }
}
