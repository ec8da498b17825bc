//! `kernel_launches`: what a kernel launch costs when the kernel itself costs nothing.
//!
//! One iteration is `kernels` (1000) launches of a tiny kernel (one warp; one thread folds a
//! value into an accumulator). It is issued two ways:
//! 1. **stream**: `kernels` launches (`cudaLaunchKernel` each);
//! 2. **graph**: one launch of a graph holding the same `kernels` kernel nodes in a chain.
//!
//! and, to show how a graph's own launch is amortized, as graphs of fewer nodes (`sweep`, e.g.
//! 1, 10, 100) each launched `kernels / nodes` times per iteration. On sm_90 and later, two more
//! with programmatic dependent launch (`kl_tick_pdl` waits on the device for the
//! kernel before it):
//! 3. **stream, programmatic**: `kernels` launches with programmatic stream serialization;
//! 4. **graph, programmatic edges**: one launch of the same chain joined by programmatic edges.
//!
//! The fold is order-dependent, so the accumulator after a run proves that every launch ran
//! exactly once and in order; it is compared with the CPU model after every run. The figures
//! are medians of `runs` timed runs (CUDA events around `iters` iterations) after one warm-up:
//! microseconds per kernel each way, and their ratio (the headline).

#![warn(missing_docs)]

mod pdl;
mod program;

pub use program::Program;

use std::time::Instant;

use chapter_common::{Book, ExampleError, OptionCheck, Report, Rng, Samples};
use cuda_graph::graph::{Graph, GraphExec, HostLaunch, KernelNode};
use cuda_graph::kernel::{LaunchAttributes, LaunchConfig};
use cuda_graph::{DeviceBuffer, DevicePtr, Event, Stream};
use serde_json::json;

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu); the declarations are private to this crate, whose launches pass counts
// no larger than the buffers they point into.
cuda_graph::kernels! {
    /// `acc[0] = (acc[0] ^ value) * 16777619` by one thread: a tiny kernel.
    pub(crate) unsafe fn kl_tick(acc: DevicePtr<u32>, value: u32);
}

/// The most kernels per iteration (and nodes per graph).
pub const MAX_KERNELS: u32 = 100_000;

/// What to run; the fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Options {
    /// Timed runs after one warm-up run; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the values the kernels fold in.
    #[arg(skip)]
    pub seed: u64,
    /// Kernels per iteration: launches on the stream, nodes of the main graph (default: 1000, or 50
    /// with --quick).
    #[arg(long, value_name = "K")]
    pub kernels: u32,
    /// Iterations per timed run (default: 20, or 4 with --quick).
    #[arg(long, value_name = "N")]
    pub iters: u32,
    /// Smaller graph sizes, each launched `ceil(kernels / size)` times per iteration.
    #[arg(skip)]
    pub sweep: Vec<u32>,
}

impl Default for Options {
    /// Chapter scale: 1000 tiny kernels per iteration, 20 iterations per run (20 000 launches),
    /// graphs of 1, 10, 100 and 1000 nodes, 5 runs.
    fn default() -> Options {
        Options { kernels: 1000, iters: 20, sweep: vec![1, 10, 100], runs: 5, seed: 0x5eed }
    }
}

impl Options {
    /// Small and fast (for tests and `--quick`): 50 kernels, 4 iterations, graphs of 1, 10
    /// and 50 nodes, two runs.
    pub fn quick() -> Options {
        Options { kernels: 50, iters: 4, sweep: vec![1, 10], runs: 2, ..Options::default() }
    }

    /// Refuses what cannot run, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        let bad_size = self.sweep.iter().find(|&&s| s == 0 || s > self.kernels);
        OptionCheck::new("kernel_launches")
            .within("kernels", self.kernels, 1..=MAX_KERNELS)
            .at_least("iters", self.iters, 1)
            .at_least("runs", self.runs, 1)
            .rule("sweep", bad_size.is_none(), || {
                format!(
                    "graph sizes of the sweep must be 1..=kernels ({}), not {}",
                    self.kernels,
                    bad_size.unwrap_or(&0)
                )
            })
            .done()
    }

    /// The graph sizes measured: the sweep and `kernels`, ascending, without repeats.
    pub fn graph_sizes(&self) -> Vec<u32> {
        let mut sizes: Vec<u32> = self.sweep.iter().copied().chain([self.kernels]).collect();
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }
}

/// The chapter's own listing for this program: what `--book` runs, or why it runs nothing
/// (see [`Book`]).
pub fn book() -> Book<Options> {
    Book::NoListing {
        note: "The chapter gives no program for this: its text states a gap of about 3 µs per \
               stream launch and that replacing 300 kernel launches by 100 graph replays made the \
               whole about 25% faster, with no kernels or sizes. The empty kernels and the sweep of \
               graph sizes are the port's.",
    }
}

/// What one launch of the kernel does to the accumulator; `kl_tick` does the same.
///
/// ```
/// assert_eq!(kernel_launches::fold(0, 0), 0);
/// assert_eq!(kernel_launches::fold(1, 0), 0x0100_0193);
/// assert_ne!(kernel_launches::fold(kernel_launches::fold(7, 1), 2), kernel_launches::fold(kernel_launches::fold(7, 2), 1));
/// ```
pub fn fold(acc: u32, value: u32) -> u32 {
    (acc ^ value).wrapping_mul(0x0100_0193)
}

/// The accumulator after `repeats` passes over `values`, starting from `start`.
pub fn expected(start: u32, values: &[u32], repeats: u64) -> u32 {
    (0..repeats).fold(start, |acc, _| values.iter().fold(acc, |acc, &v| fold(acc, v)))
}

/// The one-thread launch every kernel uses: one block of one warp.
fn tiny() -> LaunchConfig {
    LaunchConfig::new(1, 32)
}

/// A graph of `values.len()` kernel nodes in a chain, node j folding in `values[j]`.
fn build_chain(acc: &DeviceBuffer<u32>, values: &[u32]) -> cuda_graph::Result<Graph> {
    let graph = Graph::new()?;
    let mut prev: Option<KernelNode> = None;
    for &value in values {
        let node = match &prev {
            Some(p) => graph.add_kernel(kl_tick(), tiny(), (acc.ptr(), value), &[p])?,
            None => graph.add_kernel(kl_tick(), tiny(), (acc.ptr(), value), &[])?,
        };
        prev = Some(node);
    }
    Ok(graph)
}

/// One way of issuing an iteration.
struct Variant {
    /// "stream", or "graph_<nodes>".
    label: String,
    /// `None` for the stream; else the exec, its node count and launches per iteration.
    graph: Option<(GraphExec<HostLaunch>, u32, u32)>,
    /// Kernels each iteration runs.
    kernels_per_iter: u32,
    /// The accumulator a run must leave.
    want: u32,
    gpu_ms: Samples,
    host_ms: Samples,
    mismatch: Option<String>,
    last: u32,
    /// Programmatic dependent launch: `kl_tick_pdl`, with programmatic serialization on the
    /// stream (a graph's edges are in its exec).
    pdl: bool,
}

impl Variant {
    fn new(
        label: String, graph: Option<(GraphExec<HostLaunch>, u32, u32)>, kernels_per_iter: u32, want: u32,
    ) -> Variant {
        Variant {
            label,
            graph,
            kernels_per_iter,
            want,
            gpu_ms: Samples::default(),
            host_ms: Samples::default(),
            mismatch: None,
            last: 0,
            pdl: false,
        }
    }

    /// The same, with programmatic dependent launch.
    fn programmatic(self) -> Variant {
        Variant { pdl: true, ..self }
    }

    /// Median GPU µs per kernel.
    fn us_per_kernel(&self, iters: u32) -> f64 {
        self.gpu_ms.median() * 1e3 / (f64::from(iters) * f64::from(self.kernels_per_iter))
    }

    /// Median host µs per launch call (a kernel launch, or a graph launch).
    fn host_us_per_call(&self, iters: u32) -> f64 {
        let calls = match &self.graph {
            None => self.kernels_per_iter,
            Some((_, _, launches)) => *launches,
        };
        self.host_ms.median() * 1e3 / (f64::from(iters) * f64::from(calls))
    }
}

/// The stream, the timing events and the accumulator every variant folds into.
struct Bench {
    stream: Stream,
    start: Event,
    end: Event,
    acc: DeviceBuffer<u32>,
    start_value: u32,
}

impl Bench {
    /// One timed run of `variant`: the accumulator reset (untimed), `iters` iterations between
    /// two events, then the accumulator checked against the CPU model.
    fn run(
        &mut self, variant: &mut Variant, values: &[u32], iters: u32, run: usize,
    ) -> cuda_graph::Result<()> {
        self.acc.copy_from_host(&[self.start_value])?;
        self.start.record(&self.stream)?;
        let host = Instant::now();
        for _ in 0..iters {
            match &variant.graph {
                None if variant.pdl => {
                    let attributes = LaunchAttributes::programmatic();
                    for &value in values {
                        pdl::kl_tick_pdl().launch_with(
                            &self.stream,
                            tiny(),
                            &attributes,
                            (self.acc.ptr(), value),
                        )?;
                    }
                }
                None => {
                    for &value in values {
                        kl_tick().launch(&self.stream, tiny(), (self.acc.ptr(), value))?;
                    }
                }
                Some((exec, _, launches)) => {
                    for _ in 0..*launches {
                        exec.launch(&self.stream)?;
                    }
                }
            }
        }
        let host_ms = host.elapsed().as_secs_f64() * 1e3;
        self.end.record(&self.stream)?;
        self.end.synchronize()?;
        let gpu_ms = f64::from(Event::elapsed_ms(&self.start, &self.end)?);
        if run > 0 {
            variant.gpu_ms.push(gpu_ms);
            variant.host_ms.push(host_ms);
        }
        variant.last = self.acc.to_vec()?[0];
        if variant.last != variant.want && variant.mismatch.is_none() {
            variant.mismatch = Some(format!(
                "{} run {run}: {:#010x}, want {:#010x}",
                variant.label, variant.last, variant.want
            ));
        }
        Ok(())
    }
}

/// Runs every variant on device 0 and reports µs per kernel and the checks.
///
/// Errors are CUDA's (no device, a failed launch) or invalid options; a wrong result is not an
/// error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    let (_, properties) = chapter_common::device_zero()?;
    let mut rng = Rng::new(options.seed);
    let values: Vec<u32> = (0..options.kernels).map(|_| rng.next_u64() as u32).collect();
    let start_value = rng.next_u64() as u32 | 1;
    kl_tick().function()?; // the one-off parameter check and module load, before any timing
    let mut bench = Bench {
        stream: Stream::new()?,
        start: Event::new()?,
        end: Event::new()?,
        acc: DeviceBuffer::from_slice(&[start_value])?,
        start_value,
    };
    let mut lineup = Lineup::build(options, &bench, &values, &properties)?;
    // Run 0 is the warm-up; the variants take turns within each run.
    for run in 0..=options.runs {
        for variant in lineup.variants.iter_mut().chain(&mut lineup.programmatic) {
            bench.run(variant, &values, options.iters, run)?;
        }
    }
    let mut report = Report::new("kernel_launches");
    let graph_us = lineup.report_figures(options, &mut report);
    pdl_figures(&mut report, &lineup.programmatic, graph_us, options);
    lineup.report_checks(options, &mut report);
    lineup.report_notes(options, &mut report, &properties);
    Ok(report)
}

/// Every variant timed: the stream, a graph per size, and (where the device has programmatic
/// dependent launch) the stream and main graph with programmatic launches; and the main graph's
/// one-off host costs.
struct Lineup {
    variants: Vec<Variant>,
    programmatic: Vec<Variant>,
    build_us: f64,
    instantiate_us: f64,
}

impl Lineup {
    /// Builds, instantiates and uploads every graph (timing the main one's build and
    /// instantiation) and the stream variants, each with the accumulator its runs must leave.
    fn build(
        options: &Options, bench: &Bench, values: &[u32], properties: &cuda_graph::DeviceProperties,
    ) -> Result<Lineup, ExampleError> {
        let (start_value, iters) = (bench.start_value, u64::from(options.iters));
        let mut variants =
            vec![Variant::new("stream".into(), None, options.kernels, expected(start_value, values, iters))];
        let (mut build_us, mut instantiate_us) = (f64::NAN, f64::NAN);
        for nodes in options.graph_sizes() {
            let t = Instant::now();
            let graph = build_chain(&bench.acc, &values[..nodes as usize])?;
            let built = t.elapsed().as_secs_f64() * 1e6;
            let t = Instant::now();
            let exec = graph.instantiate::<HostLaunch>(Default::default())?;
            let instantiated = t.elapsed().as_secs_f64() * 1e6;
            exec.upload(&bench.stream)?;
            if nodes == options.kernels {
                (build_us, instantiate_us) = (built, instantiated);
            }
            let launches = options.kernels.div_ceil(nodes);
            let want = expected(start_value, &values[..nodes as usize], iters * u64::from(launches));
            variants.push(Variant::new(
                format!("graph_{nodes}"),
                Some((exec, nodes, launches)),
                nodes * launches,
                want,
            ));
        }

        // Programmatic dependent launch, where the device runs it: the stream and the main graph.
        let mut programmatic = Vec::new();
        if pdl::supported(properties) {
            pdl::kl_tick_pdl().function()?;
            let want = expected(start_value, values, iters);
            programmatic.push(Variant::new("stream_pdl".into(), None, options.kernels, want).programmatic());
            let exec =
                pdl::build_chain(&bench.acc, values, tiny())?.instantiate::<HostLaunch>(Default::default())?;
            exec.upload(&bench.stream)?;
            let label = format!("graph_pdl_{}", options.kernels);
            programmatic.push(
                Variant::new(label, Some((exec, options.kernels, 1)), options.kernels, want).programmatic(),
            );
        }

        Ok(Lineup { variants, programmatic, build_us, instantiate_us })
    }

    /// The stream variant and the graph of `options.kernels` nodes.
    fn stream_and_main(&self, options: &Options) -> (&Variant, &Variant) {
        let main = self
            .variants
            .iter()
            .find(|v| matches!(v.graph, Some((_, nodes, _)) if nodes == options.kernels))
            .expect("the main graph is always measured");
        (&self.variants[0], main)
    }

    /// Per-kernel and host times, each graph size's, the main graph's one-off costs and when they
    /// pay back; returns the main graph's µs per kernel.
    fn report_figures(&self, options: &Options, report: &mut Report) -> f64 {
        let (stream, main) = self.stream_and_main(options);
        let (variants, build_us, instantiate_us) = (&self.variants, self.build_us, self.instantiate_us);
        let stream_us = stream.us_per_kernel(options.iters);
        let graph_us = main.us_per_kernel(options.iters);
        report.figure("stream_us_per_kernel", stream_us, "us");
        report.figure("graph_us_per_kernel", graph_us, "us");
        report.figure("stream_over_graph", stream_us / graph_us, "x");
        report.figure("stream_host_us_per_launch", stream.host_us_per_call(options.iters), "us");
        report.figure("graph_host_us_per_launch", main.host_us_per_call(options.iters), "us");
        for v in &variants[1..] {
            if let Some((_, nodes, _)) = v.graph {
                report.figure(&format!("graph_{nodes}_us_per_kernel"), v.us_per_kernel(options.iters), "us");
            }
        }
        report.figure("build_us", build_us, "us");
        report.figure("instantiate_us", instantiate_us, "us");
        // After how many iterations the graph's one-off cost (build + instantiate, host time) is
        // paid back by what each iteration saves.
        let saved_us_per_iter = (stream_us - graph_us) * f64::from(options.kernels);
        report.figure(
            "break_even_iterations",
            if saved_us_per_iter > 0.0 {
                (build_us + instantiate_us) / saved_us_per_iter
            } else {
                f64::INFINITY
            },
            "iterations",
        );
        report.figure("kernels", f64::from(options.kernels), "kernels");

        graph_us
    }

    /// Every launch ran once and in order, on the stream and in each graph, and the two agree.
    fn report_checks(&self, options: &Options, report: &mut Report) {
        let (stream, main) = self.stream_and_main(options);
        let (variants, iters) = (&self.variants, u64::from(options.iters));
        let stream_bad = stream.mismatch.clone();
        report.check(
            "every stream launch ran once, in order",
            stream_bad.is_none(),
            stream_bad.unwrap_or_else(|| {
                format!(
                    "{} runs x {} launches: accumulator {:#010x} as the CPU model",
                    options.runs + 1,
                    u64::from(options.kernels) * iters,
                    stream.want
                )
            }),
        );
        let graph_bad: Vec<&str> = variants[1..].iter().filter_map(|v| v.mismatch.as_deref()).collect();
        report.check(
            "every graph node ran once, in order",
            graph_bad.is_empty(),
            match graph_bad.first() {
                None => {
                    format!("graphs of {:?} nodes, every run equal to the CPU model", options.graph_sizes())
                }
                Some(first) => {
                    format!("{} of {} graphs differ; first: {first}", graph_bad.len(), variants.len() - 1)
                }
            },
        );
        report.check(
            "stream and graph agree",
            stream.last == main.last,
            format!("stream {:#010x}, graph of {} nodes {:#010x}", stream.last, options.kernels, main.last),
        );
    }

    /// The kernel, the units, and every variant's times.
    fn report_notes(
        &self, options: &Options, report: &mut Report, properties: &cuda_graph::DeviceProperties,
    ) {
        let (variants, programmatic) = (&self.variants, &self.programmatic);
        report.note(format!(
            "{}: kl_tick is one warp whose thread 0 does one xor and one multiply; each iteration runs {} \
         of them, {} iterations per timed run",
            properties.name, options.kernels, options.iters
        ));
        report.note(
            "µs per kernel: CUDA-event time of a run over the kernels it ran; host µs per launch: time \
         spent in cudaLaunchKernel (stream) or cudaGraphLaunch (graph) calls",
        );
        report.data(
            "variants",
            json!(variants
                .iter()
                .chain(programmatic)
                .map(|v| {
                    let (min, max) = v.gpu_ms.range();
                    let per_kernel = 1e3 / (f64::from(options.iters) * f64::from(v.kernels_per_iter));
                    json!({
                        "variant": v.label,
                        "programmatic": v.pdl,
                        "nodes": v.graph.as_ref().map(|(_, nodes, _)| *nodes),
                        "launches_per_iter": v.graph.as_ref().map_or(options.kernels, |(_, _, l)| *l),
                        "kernels_per_iter": v.kernels_per_iter,
                        "us_per_kernel": v.us_per_kernel(options.iters),
                        "min_us_per_kernel": min * per_kernel,
                        "max_us_per_kernel": max * per_kernel,
                        "host_us_per_launch": v.host_us_per_call(options.iters),
                    })
                })
                .collect::<Vec<_>>()),
        );
    }
}

/// The programmatic variants' figures and check (none where the device has no PDL, with a note):
/// µs per kernel each, and the gain of programmatic edges over the plain graph (`graph_us`).
fn pdl_figures(report: &mut Report, programmatic: &[Variant], graph_us: f64, options: &Options) {
    let [stream, graph] = programmatic else {
        report.note("programmatic dependent launch needs sm_90 or later: its variants were not run");
        return;
    };
    let graph_pdl_us = graph.us_per_kernel(options.iters);
    report.figure("stream_pdl_us_per_kernel", stream.us_per_kernel(options.iters), "us");
    report.figure("graph_pdl_us_per_kernel", graph_pdl_us, "us");
    report.figure("graph_over_graph_pdl", graph_us / graph_pdl_us, "x");
    let bad: Vec<&str> = programmatic.iter().filter_map(|v| v.mismatch.as_deref()).collect();
    report.check(
        "every programmatic launch and node ran once, in order",
        bad.is_empty(),
        match bad.first() {
            None => format!(
                "stream with programmatic serialization and a {}-node graph with programmatic edges, every \
                 run equal to the CPU model",
                options.kernels
            ),
            Some(first) => format!("{} of 2 differ; first: {first}", bad.len()),
        },
    );
}

/// The one-line summary for the chapter table, e.g.
/// `graph 0.92 vs stream 2.61 µs per kernel (2.84x)`, followed where it was measured by the
/// gain of programmatic edges: `; programmatic edges 0.60 (1.53x over the graph)`.
///
/// ```
/// let mut report = chapter_common::Report::new("kernel_launches");
/// report.figure("stream_us_per_kernel", 2.61, "us");
/// report.figure("graph_us_per_kernel", 0.92, "us");
/// report.figure("stream_over_graph", 2.61 / 0.92, "x");
/// assert_eq!(kernel_launches::headline(&report), "graph 0.92 vs stream 2.61 µs per kernel (2.84x)");
/// report.figure("graph_pdl_us_per_kernel", 0.60, "us");
/// report.figure("graph_over_graph_pdl", 0.92 / 0.60, "x");
/// assert_eq!(
///     kernel_launches::headline(&report),
///     "graph 0.92 vs stream 2.61 µs per kernel (2.84x); programmatic edges 0.60 (1.53x over the graph)"
/// );
/// ```
pub fn headline(report: &Report) -> String {
    let plain = format!(
        "graph {:.2} vs stream {:.2} µs per kernel ({:.2}x)",
        report.figure_or_nan("graph_us_per_kernel"),
        report.figure_or_nan("stream_us_per_kernel"),
        report.figure_or_nan("stream_over_graph")
    );
    match report.figure_value("graph_pdl_us_per_kernel") {
        Some(pdl) => format!(
            "{plain}; programmatic edges {pdl:.2} ({:.2}x over the graph)",
            report.figure_or_nan("graph_over_graph_pdl")
        ),
        None => plain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_quick_are_valid_and_bad_options_are_refused_by_name() {
        assert_eq!(Options::default().graph_sizes(), [1, 10, 100, 1000]);
        assert_eq!(Options { sweep: vec![50, 1, 50], ..Options::quick() }.graph_sizes(), [1, 50]);
        chapter_common::assert_options_checked::<Program>(&[
            ("sweep", Options { sweep: vec![0], ..Options::quick() }),
            ("sweep", Options { sweep: vec![51], ..Options::quick() }),
        ]);
        chapter_common::assert_flags_refused::<Program>(&["--kernels=0", "--iters=0"]);
    }

    #[test]
    fn the_model_sees_order_and_count() {
        let values = [3, 9, 27];
        let once = expected(5, &values, 1);
        assert_eq!(once, fold(fold(fold(5, 3), 9), 27));
        assert_ne!(once, expected(5, &[9, 3, 27], 1), "a reordered launch is caught");
        assert_ne!(expected(5, &values, 2), once, "a missing pass is caught");
        assert_eq!(expected(5, &values, 2), expected(once, &values, 1));
    }
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! { kl_tick }
    }
}
