//! `cuda_graphs_pipeline`: the chapter's six-stage pipeline, baseline vs optimized graph.
//!
//! Each iteration runs six small stages over 16 Ki values (every stage reads the previous
//! stage's output). Three ways ([`bench::Way`]), the same kernel work:
//! 1. **stream**: stage by stage on a stream, each stage allocating its output from a memory
//!    pool in stream order and freeing its input, as an eager framework does (an extra
//!    baseline: it pays for allocations the graph does not make);
//! 2. **stream_prealloc** (the like-for-like baseline, as the chapter's): the same launches over
//!    two buffers allocated once, so it differs from the graph in how the kernels are launched
//!    only;
//! 3. **graph** (the optimized program): `capture_iters` iterations captured once into a graph
//!    over those two pool buffers (fixed addresses, allocated outside the graph), replayed.
//!
//! All three must give the same values bit for bit; with `verify` they must also equal the CPU
//! reference ([`model::reference`]). Figures are medians over `runs` timed runs after one
//! warm-up (CUDA events around the iterations); the headline is preallocated-stream over graph
//! time per iteration (`graph_over_stream_prealloc`), with the allocating stream's ratio
//! (`graph_over_stream`) as an extra.

#![warn(missing_docs)]

mod program;

pub use program::Program;

pub mod bench;
pub mod model;

use chapter_common::{Book, ExampleError, OptionCheck, Preset, Report, Rng, Samples};
use serde_json::json;

use bench::{Bench, Way};

/// What to run; the fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Options {
    /// Timed runs of each way after one warm-up; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the input.
    #[arg(skip)]
    pub seed: u64,
    /// Values each stage maps (default 16384).
    #[arg(long, value_name = "N")]
    pub size: u32,
    /// Pipeline iterations per timed run, a multiple of --capture-iters (default 10000, or 400 with
    /// --quick).
    #[arg(long, value_name = "N")]
    pub iters: u32,
    /// Iterations captured into the graph, `6 x capture_iters` kernel nodes (default 1000, or 100
    /// with --quick).
    #[arg(long, value_name = "N")]
    pub capture_iters: u32,
    /// Threads per block of every stage.
    #[arg(skip)]
    pub threads_per_block: u32,
    /// Check the output against the CPU reference (the three ways are compared regardless).
    #[arg(skip)]
    pub verify: bool,
    /// Also run the extra `stream` way, which allocates each stage's output and frees its
    /// input in stream order (the chapter's programs do not).
    #[arg(skip)]
    pub per_stage_alloc: bool,
}

impl Default for Options {
    /// The chapter's sizes: 16 Ki values, blocks of 128, 1000 iterations per graph; 10 000
    /// iterations per run (the chapter: 20 000), verified.
    fn default() -> Options {
        Options {
            size: 1 << 14,
            iters: 10_000,
            capture_iters: 1000,
            threads_per_block: 128,
            verify: true,
            runs: 5,
            seed: 0x5eed,
            per_stage_alloc: true,
        }
    }
}

impl Options {
    /// Small and fast (for tests and `--quick`): 400 iterations, 100 per graph, two runs.
    pub fn quick() -> Options {
        Options { iters: 400, capture_iters: 100, runs: 2, ..Options::default() }
    }

    /// Refuses what cannot run as asked, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        OptionCheck::new("cuda_graphs_pipeline")
            .within("size", self.size, 1..=1 << 26)
            .within("capture_iters", self.capture_iters, 1..=10_000)
            .rule(
                "iters",
                self.iters != 0 && self.capture_iters != 0 && self.iters.is_multiple_of(self.capture_iters),
                || {
                    format!(
                        "iters must be a positive multiple of capture_iters ({}), not {}",
                        self.capture_iters, self.iters
                    )
                },
            )
            .threads_per_block(self.threads_per_block)
            .at_least("runs", self.runs, 1)
            .done()
    }
}

/// The chapter's own listing for this program: what `--book` runs, or why it runs nothing
/// (see [`Book`]).
pub fn book() -> Book<Options> {
    let options = Options { iters: 20_000, per_stage_alloc: false, ..Options::default() };
    Book::Preset {
        preset: Preset {
            quick: Options { iters: 400, capture_iters: 100, runs: 2, ..options.clone() },
            options,
        },
        note: "baseline_cuda_graphs.cu vs optimized_cuda_graphs.cu: 16 Ki values, six stages per \
               iteration in blocks of 128, 20 000 iterations; the baseline launches the stages one by \
               one over preallocated memory, the optimized program captures 1000 iterations (6000 \
               kernel nodes) and replays them 20 times; CUDA events around the timed loop after one \
               warm-up. Not as listed: a stage is three integer affine passes (the listing: tanhf, \
               __sinf, __cosf), stages alternate between two buffers (the listing: in place), the stream \
               is blocking and capture thread-local (the listing: non-blocking, global), and the figure \
               is a median of runs. The port's default: 10 000 iterations per run, plus a stream way \
               that allocates per stage.",
    }
}

/// The first index where two outputs differ, described.
fn first_difference(got: &[u32], want: &[u32]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} values, want {}", got.len(), want.len()));
    }
    let i = got.iter().zip(want).position(|(a, b)| a != b)?;
    Some(format!("value {i} is {:#010x}, want {:#010x}", got[i], want[i]))
}

/// Runs the three ways on device 0 and reports times, speedups, the checksum and the checks.
///
/// Errors are CUDA's (no device, a failed launch) or invalid options; a wrong result is not an
/// error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    let (_, properties) = chapter_common::device_zero()?;
    let mut rng = Rng::new(options.seed);
    let input: Vec<u32> = (0..options.size).map(|_| rng.next_u64() as u32 | 1).collect();
    let reference = options.verify.then(|| model::reference(&input, u64::from(options.iters)));
    let mut bench = Bench::new(&input, options.threads_per_block, options.capture_iters)?;
    let ways: &[Way] = if options.per_stage_alloc {
        &[Way::StreamAlloc, Way::StreamPrealloc, Way::Graph]
    } else {
        &[Way::StreamPrealloc, Way::Graph]
    };
    let runs = Runs::measure(&mut bench, ways, options, reference.as_deref())?;
    let mut report = Report::new("cuda_graphs_pipeline");
    let checksum = runs.report_figures(options, &mut report);
    runs.report_checks(options, &mut report, reference.as_deref(), checksum);
    runs.report_notes(options, &mut report, &properties);
    Ok(report)
}

/// Every way's runs: times, last outputs, the first disagreement between ways and with the
/// CPU reference, and the per-stage-alloc way's pool high watermark.
struct Runs<'a> {
    ways: &'a [Way],
    samples: Vec<Samples>,
    outputs: Vec<Vec<u32>>,
    disagreement: Option<String>,
    verify_failure: Option<String>,
    baseline_pool_bytes: u64,
}

impl<'a> Runs<'a> {
    /// The ways in turn, `runs` times after a warm-up, each output against the first way's and
    /// (when verifying) the CPU reference.
    fn measure(
        bench: &mut Bench, ways: &'a [Way], options: &Options, reference: Option<&[u32]>,
    ) -> Result<Runs<'a>, ExampleError> {
        let mut samples: Vec<Samples> = ways.iter().map(|_| Samples::default()).collect();
        let mut outputs: Vec<Vec<u32>> = vec![Vec::new(); ways.len()];
        let mut disagreement = None;
        let mut verify_failure = None;
        let mut baseline_pool_bytes = 0;
        for run in 0..=options.runs {
            for (k, &way) in ways.iter().enumerate() {
                let (output, ms) = bench.run(way, options.iters)?;
                if way == Way::StreamAlloc {
                    baseline_pool_bytes = baseline_pool_bytes.max(bench.pool_reserved_bytes()?);
                }
                if run > 0 {
                    samples[k].push(ms);
                }
                if let (None, Some(want)) = (&verify_failure, reference) {
                    verify_failure =
                        first_difference(&output, want).map(|d| format!("{} run {run}: {d}", way.name()));
                }
                if disagreement.is_none() && k > 0 {
                    disagreement = first_difference(&output, &outputs[0])
                        .map(|d| format!("{} vs {} run {run}: {d}", way.name(), ways[0].name()));
                }
                outputs[k] = output;
            }
        }

        Ok(Runs { ways, samples, outputs, disagreement, verify_failure, baseline_pool_bytes })
    }

    /// Per-iteration times, the headline (like for like), the per-stage-alloc way's; returns the
    /// graph's output checksum.
    fn report_figures(&self, options: &Options, report: &mut Report) -> f64 {
        let (ways, samples, outputs, baseline_pool_bytes) =
            (self.ways, &self.samples, &self.outputs, self.baseline_pool_bytes);
        let ms = |way: Way| ways.iter().position(|&w| w == way).map(|k| samples[k].median());
        let (prealloc, graph) =
            (ms(Way::StreamPrealloc).unwrap_or(f64::NAN), ms(Way::Graph).unwrap_or(f64::NAN));
        report.figure("stream_prealloc_ms_per_iter", prealloc, "ms");
        report.figure("graph_ms_per_iter", graph, "ms");
        // The headline: both ways over the same preallocated buffers (like for like).
        report.figure("graph_over_stream_prealloc", prealloc / graph, "x");
        if let Some(stream) = ms(Way::StreamAlloc) {
            report.figure("stream_ms_per_iter", stream, "ms");
            // Extra: against the stream that also allocates and frees at every stage.
            report.figure("graph_over_stream", stream / graph, "x");
            report.figure("prealloc_over_stream", stream / prealloc, "x");
            report.figure(
                "baseline_pool_reserved_mib",
                baseline_pool_bytes as f64 / f64::from(1 << 20),
                "MiB",
            );
        }
        let checksum = outputs.last().map_or(f64::NAN, |graph_output| model::checksum(graph_output));
        report.figure("checksum", checksum, "");
        report.figure("iters", f64::from(options.iters), "iterations");

        checksum
    }

    /// The ways against each other and (when verifying) the CPU reference.
    fn report_checks(
        &self, options: &Options, report: &mut Report, reference: Option<&[u32]>, checksum: f64,
    ) {
        let (ways, disagreement, verify_failure) = (self.ways, &self.disagreement, &self.verify_failure);
        let runs = options.runs + 1;
        // With the CPU reference on, agreement across ways follows from each way matching it.
        let agreement = if reference.is_some() {
            "identical results across ways (implied by the CPU check)"
        } else {
            "identical results across ways"
        };
        report.check(
            agreement,
            disagreement.is_none(),
            disagreement.clone().unwrap_or_else(|| {
                format!(
                    "{runs} runs x {} ways x {} values, bit for bit (checksum {checksum:.6e})",
                    ways.len(),
                    options.size
                )
            }),
        );
        if let Some(reference) = reference {
            report.check(
                "verify: matches the CPU reference",
                verify_failure.is_none(),
                verify_failure.clone().unwrap_or_else(|| {
                    format!(
                        "PASS: {runs} runs x {} ways, all {} values after {} iterations (checksum {:.6e})",
                        ways.len(),
                        options.size,
                        options.iters,
                        model::checksum(reference)
                    )
                }),
            );
        } else {
            report.note("verify skipped (--no-verify): the ways are compared with each other only");
        }
    }

    /// The device, the graph's shape, every way's runs.
    fn report_notes(
        &self, options: &Options, report: &mut Report, properties: &cuda_graph::DeviceProperties,
    ) {
        let (ways, samples) = (self.ways, &self.samples);
        report.note(chapter_common::device_note(properties));
        report.note(format!(
        "{} stages x {} values per iteration, blocks of {}; graph: {} iterations = {} kernel nodes, replayed {} \
         times per run",
        model::STAGES,
        options.size,
        options.threads_per_block,
        options.capture_iters,
        options.capture_iters as usize * model::STAGES,
        options.iters / options.capture_iters
    ));
        report.data(
        "ways",
        json!(ways
            .iter()
            .zip(samples)
            .map(|(way, s)| {
                let (min, max) = s.range();
                json!({"way": way.name(), "median_ms_per_iter": s.median(), "min": min, "max": max, "runs": s.0})
            })
            .collect::<Vec<_>>()),
    );
    }
}

/// The one-line summary for the chapter table: the graph against the like-for-like baseline
/// (stream launches over the same preallocated buffers) first, then, when it ran, against the
/// stream that allocates per stage, e.g.
/// `graph 1.50x over stream, both preallocated (0.0080 vs 0.0120 ms/iter); 3.10x over per-stage alloc`.
///
/// ```
/// let mut report = chapter_common::Report::new("cuda_graphs_pipeline");
/// report.figure("stream_prealloc_ms_per_iter", 0.012, "ms");
/// report.figure("graph_ms_per_iter", 0.008, "ms");
/// report.figure("graph_over_stream_prealloc", 0.012 / 0.008, "x");
/// report.figure("graph_over_stream", 0.0248 / 0.008, "x");
/// assert_eq!(
///     cuda_graphs_pipeline::headline(&report),
///     "graph 1.50x over stream, both preallocated (0.0080 vs 0.0120 ms/iter); 3.10x over per-stage alloc"
/// );
/// ```
pub fn headline(report: &Report) -> String {
    let mut line = format!(
        "graph {:.2}x over stream, both preallocated ({:.4} vs {:.4} ms/iter)",
        report.figure_or_nan("graph_over_stream_prealloc"),
        report.figure_or_nan("graph_ms_per_iter"),
        report.figure_or_nan("stream_prealloc_ms_per_iter"),
    );
    if let Some(over_alloc) = report.figure_value("graph_over_stream") {
        line.push_str(&format!("; {over_alloc:.2}x over per-stage alloc"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_quick_are_valid_and_bad_options_are_refused_by_name() {
        assert!(Options::quick().iters < Options::default().iters);
        assert!(Options::quick().verify && Options::default().verify);
        chapter_common::assert_options_checked::<Program>(&[(
            "threads_per_block",
            Options { threads_per_block: 100, ..Options::quick() },
        )]);
        chapter_common::assert_flags_refused::<Program>(&["--size=0", "--iters=150", "--capture-iters=0"]);
    }

    #[test]
    fn the_headline_leaves_out_the_per_stage_alloc_way_when_it_did_not_run() {
        let mut report = Report::new("cuda_graphs_pipeline");
        let figures = [("stream_prealloc_ms_per_iter", 0.024), ("graph_ms_per_iter", 0.008)];
        for (name, value) in figures.into_iter().chain([("graph_over_stream_prealloc", 3.0)]) {
            report.figure(name, value, "");
        }
        let want = "graph 3.00x over stream, both preallocated (0.0080 vs 0.0240 ms/iter)";
        assert_eq!(headline(&report), want);
    }

    #[test]
    fn first_difference_names_the_value() {
        assert_eq!(first_difference(&[1, 2], &[1, 2]), None);
        assert_eq!(first_difference(&[1, 3], &[1, 2]).unwrap(), "value 1 is 0x00000003, want 0x00000002");
        assert!(first_difference(&[1], &[1, 2]).is_some());
    }
}
