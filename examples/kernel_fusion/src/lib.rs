//! `kernel_fusion`: an elementwise chain run unfused, fused, and as a graph of the unfused
//! kernels.
//!
//! The chain is `f(x, y) = sqrt(clamp(x * a + y, lo, hi) + c) * g + b` over float arrays, six
//! operations ([`Chain`]); a pass adds it to the state, `x += f(x, y)`, so every pass starts
//! where the one before ended. It is issued three ways ([`Variant`]):
//! 1. **unfused**: one kernel per operation, launched one by one on a stream; every
//!    intermediate goes to global memory and comes back (56 bytes moved per element);
//! 2. **fused**: one kernel that loads `x[i]` and `y[i]`, applies all six operations in
//!    registers and stores `x[i] + f` (12 bytes per element, the least possible);
//! 3. **graph**: the six unfused kernels as a graph, launched with one call: the launch cost
//!    of a chain, without its memory traffic gain.
//!
//! Each variant runs once to warm up and then `runs` times; a run is `iters` back-to-back
//! passes between two CUDA events, and its time per pass is that span over `iters`. Every
//! run starts from the same state, and its final state must equal the CPU reference for
//! exactly that run's passes bit for bit (see `Chain::apply` for why the floats agree
//! exactly): a skipped or repeated pass fails, not only a wrong last one. The figures are medians at the chapter's size, the effective
//! bandwidth of each variant (the 12 bytes per element that must move, over its time), and
//! the same times for a sweep of smaller sizes, where launch cost dominates.

#![warn(missing_docs)]

mod program;

pub use program::Program;

mod chain;

use chapter_common::{Book, ExampleError, OptionCheck, Report, Rng, Samples};
use cuda_graph::{CudaError, Event};
use serde_json::json;

pub use chain::{
    first_difference, Bench, Chain, Variant, MIN_BYTES_PER_ELEMENT, OPS, UNFUSED_BYTES_PER_ELEMENT,
};

/// The largest array accepted (1 GiB per array of f32).
pub const MAX_ELEMENTS: u32 = 1 << 28;

/// What to run: the array sizes, how many passes a timed run makes, and how many runs.
///
/// The fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Options {
    /// Timed runs of each variant after one warm-up pass; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the inputs and of the chain's constants.
    #[arg(skip)]
    pub seed: u64,
    /// Elements per array at the chapter's scale, the size of the headline figures (default:
    /// 33554432, or 1048576 with --quick).
    #[arg(long, value_name = "N")]
    pub size: u32,
    /// Smaller sizes also timed, where launch cost, not memory, decides; comma-separated (default:
    /// 4096,65536,1048576).
    #[arg(long, value_name = "N,N,...", value_delimiter = ',')]
    pub sweep: Vec<u32>,
    /// Passes of the chain per timed run (default: 20, or 5 with --quick).
    #[arg(long, value_name = "N")]
    pub iters: u32,
    /// Threads per block of every kernel.
    #[arg(skip)]
    pub threads_per_block: u32,
}

impl Default for Options {
    /// Chapter scale: 32 Mi elements (three arrays of 128 MiB, well past the L2 cache), 20
    /// passes per run, and a sweep of 4 Ki, 64 Ki and 1 Mi elements.
    fn default() -> Options {
        Options {
            size: 1 << 25,
            sweep: vec![1 << 12, 1 << 16, 1 << 20],
            iters: 20,
            runs: 5,
            seed: 0x5eed,
            threads_per_block: 256,
        }
    }
}

impl Options {
    /// Small and fast (for tests and `--quick`): 1 Mi elements, a 4 Ki sweep, 5 passes, 2 runs.
    pub fn quick() -> Options {
        Options { size: 1 << 20, sweep: vec![1 << 12], iters: 5, runs: 2, ..Options::default() }
    }

    /// Refuses what the kernels cannot run correctly, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        let bad_size = |n: &u32| *n == 0 || *n > MAX_ELEMENTS;
        let bad_sweep = self.sweep.iter().copied().find(bad_size);
        OptionCheck::new("kernel_fusion")
            .rule("size", !bad_size(&self.size), || {
                format!("sizes must be 1..={MAX_ELEMENTS} elements, not {}", self.size)
            })
            .rule("sweep", bad_sweep.is_none(), || {
                format!("sizes must be 1..={MAX_ELEMENTS} elements, not {}", bad_sweep.unwrap_or(0))
            })
            .within("iters", self.iters, 1..=100_000)
            .at_least("runs", self.runs, 1)
            .threads_per_block(self.threads_per_block)
            .done()
    }
}

/// The chapter's own listing for this program: what `--book` runs, or why it runs nothing
/// (see [`Book`]).
pub fn book() -> Book<Options> {
    Book::NoListing {
        note: "The chapter gives no program for this: its roofline section says in text that \
               fusion raises FLOPs per byte and removes global-memory round trips, and helps \
               memory-bound kernels modestly. The elementwise chain and its sizes are the port's.",
    }
}

/// One variant at one size: time per pass of each timed run, and the first wrong output.
struct Measured {
    variant: Variant,
    samples: Samples,
    mismatch: Option<String>,
}

/// All variants at one size.
struct SizeResult {
    elements: u32,
    variants: Vec<Measured>,
    /// Outputs compared with the reference (every run of every variant, warm-ups included).
    outputs_checked: usize,
}

impl SizeResult {
    fn ms(&self, variant: Variant) -> f64 {
        self.variants.iter().find(|m| m.variant == variant).map_or(f64::NAN, |m| m.samples.median())
    }
}

/// What a run must leave: the state after the warm-up's one pass, and after a timed run's
/// `iters` passes.
struct References {
    warm_up: Vec<f32>,
    timed: Vec<f32>,
}

/// Runs the warm-up and the timed runs of `variant`, checking every run's final state.
fn measure(
    bench: &mut Bench, variant: Variant, options: &Options, references: &References,
) -> Result<Measured, CudaError> {
    let (start, end) = (Event::new()?, Event::new()?);
    let mut samples = Samples::default();
    let mut mismatch = None;
    for run in 0..=options.runs {
        bench.reset()?; // untimed: before the start event
        let passes = if run == 0 { 1 } else { options.iters };
        let reference = if run == 0 { &references.warm_up } else { &references.timed };
        start.record(&bench.stream)?;
        for _ in 0..passes {
            bench.queue_pass(variant)?;
        }
        end.record(&bench.stream)?;
        end.synchronize()?;
        if run > 0 {
            samples.push(f64::from(Event::elapsed_ms(&start, &end)?) / f64::from(passes));
        }
        let out = bench.output()?;
        if mismatch.is_none() {
            mismatch = first_difference(&out, reference).map(|(i, got, want)| {
                format!(
                    "{} at {} elements, run {run} ({passes} passes): element {i} is {got:e} ({:#010x}), \
                     want {want:e} ({:#010x})",
                    variant.name(),
                    reference.len(),
                    got.to_bits(),
                    want.to_bits()
                )
            });
        }
    }
    Ok(Measured { variant, samples, mismatch })
}

/// Seeded inputs for `elements` elements: `x` in [-4, 4), `y` in [-2, 2).
pub fn inputs(seed: u64, elements: u32) -> (Vec<f32>, Vec<f32>) {
    let mut rng = Rng::new(seed ^ (u64::from(elements) << 32));
    let x = rng.vec_f32(elements as usize, -4.0, 4.0);
    let y = rng.vec_f32(elements as usize, -2.0, 2.0);
    (x, y)
}

fn measure_size(chain: Chain, elements: u32, options: &Options) -> Result<SizeResult, CudaError> {
    let (x, y) = inputs(options.seed, elements);
    let references = References {
        warm_up: chain.reference_passes(&x, &y, 1),
        timed: chain.reference_passes(&x, &y, options.iters),
    };
    let mut bench = Bench::new(chain, &x, &y, options.threads_per_block)?;
    let mut variants = Vec::new();
    for variant in Variant::ALL {
        variants.push(measure(&mut bench, variant, options, &references)?);
    }
    Ok(SizeResult { elements, variants, outputs_checked: Variant::ALL.len() * (options.runs + 1) })
}

/// GB/s for `bytes` moved in `ms` milliseconds.
pub fn gbps(bytes: f64, ms: f64) -> f64 {
    bytes / ms / 1e6
}

/// Runs every variant at every size on device 0 and reports times, bandwidths and the checks.
///
/// Errors are CUDA's (no device, a failed launch) or invalid options; a wrong result is not an
/// error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    let (_, properties) = chapter_common::device_zero()?;
    let chain = Chain::random(&mut Rng::new(options.seed));
    let main = measure_size(chain, options.size, options)?;
    let mut sweep = Vec::new();
    for &n in &options.sweep {
        sweep.push(measure_size(chain, n, options)?);
    }
    let all: Vec<&SizeResult> = std::iter::once(&main).chain(&sweep).collect();
    let mut report = Report::new("kernel_fusion");
    report_figures(options, &main, &sweep, &mut report);
    report_check(options, &all, &mut report);
    report.note(format!(
        "{} ({} SMs): {} threads per block, one element per thread",
        properties.name, properties.multiprocessors, options.threads_per_block
    ));
    report.note(format!(
        "chain, per pass: x += sqrt(clamp(x*{:.4} + y, {:.4}, {:.4}) + {:.4}) * {:.4} + {:.4}; bytes per element \
         that must move {MIN_BYTES_PER_ELEMENT}, moved unfused {UNFUSED_BYTES_PER_ELEMENT}",
        chain.a, chain.lo, chain.hi, chain.c, chain.g, chain.b
    ));
    report.note(format!(
        "times are per pass, medians of {} runs of {} passes; *_gbps = {MIN_BYTES_PER_ELEMENT} bytes/element \
         over the time, *_traffic_gbps = the bytes the variant's kernels move",
        options.runs, options.iters
    ));
    report.data("sizes", sizes_json(&all));
    Ok(report)
}

/// The main size's times and bandwidths (useful and moved), the ratios, and the sweep's times.
fn report_figures(options: &Options, main: &SizeResult, sweep: &[SizeResult], report: &mut Report) {
    let n = f64::from(options.size);
    let must_move = n * MIN_BYTES_PER_ELEMENT as f64;
    for variant in Variant::ALL {
        let ms = main.ms(variant);
        report.figure(&format!("{}_ms", variant.name()), ms, "ms");
    }
    for variant in Variant::ALL {
        report.figure(&format!("{}_gbps", variant.name()), gbps(must_move, main.ms(variant)), "GB/s");
    }
    for variant in Variant::ALL {
        let moved = n * variant.bytes_per_element() as f64;
        report.figure(&format!("{}_traffic_gbps", variant.name()), gbps(moved, main.ms(variant)), "GB/s");
    }
    let (unfused, fused, graph) =
        (main.ms(Variant::Unfused), main.ms(Variant::Fused), main.ms(Variant::Graph));
    report.figure("fused_over_unfused", unfused / fused, "x");
    report.figure("fused_over_graph", graph / fused, "x");
    report.figure("graph_over_unfused", unfused / graph, "x");
    report.figure("traffic_ratio", UNFUSED_BYTES_PER_ELEMENT as f64 / MIN_BYTES_PER_ELEMENT as f64, "x");
    report.figure("elements", n, "elements");
    for size in sweep {
        for variant in Variant::ALL {
            report.figure(
                &format!("sweep_{}_{}_us", size.elements, variant.name()),
                size.ms(variant) * 1e3,
                "us",
            );
        }
    }
}

/// Every final state of every variant at every size against the CPU reference.
fn report_check(options: &Options, all: &[&SizeResult], report: &mut Report) {
    let mismatches: Vec<&str> =
        all.iter().flat_map(|s| s.variants.iter().filter_map(|m| m.mismatch.as_deref())).collect();
    let outputs: usize = all.iter().map(|s| s.outputs_checked).sum();
    report.check(
        "all variants match CPU reference",
        mismatches.is_empty(),
        match mismatches.first() {
            None => format!(
                "{outputs} final states (every run of unfused, fused and graph at {} sizes: 1 pass \
                 warm-up, {} accumulated passes timed), bit-exact",
                all.len(),
                options.iters
            ),
            Some(first) => format!("{} variant(s) differ; first: {first}", mismatches.len()),
        },
    );
}

/// Every size's variants: times and bandwidths, as JSON.
fn sizes_json(all: &[&SizeResult]) -> serde_json::Value {
    json!(all
        .iter()
        .map(|s| {
            let per_variant: Vec<serde_json::Value> = s
                .variants
                .iter()
                .map(|m| {
                    let (min, max) = m.samples.range();
                    let elements = f64::from(s.elements);
                    json!({
                        "variant": m.variant.name(),
                        "median_ms": m.samples.median(),
                        "min_ms": min,
                        "max_ms": max,
                        "effective_gbps": gbps(elements * MIN_BYTES_PER_ELEMENT as f64, m.samples.median()),
                        "traffic_gbps": gbps(elements * m.variant.bytes_per_element() as f64, m.samples.median()),
                        "kernels_per_pass": m.variant.kernels_per_pass(),
                    })
                })
                .collect();
            json!({ "elements": s.elements, "variants": per_variant })
        })
        .collect::<Vec<_>>())
}

/// The one-line summary for the chapter table, e.g.
/// `fused 4.20x over unfused (0.139 vs 0.584 ms; 2897 vs 690 GB/s)`.
///
/// ```
/// let mut report = chapter_common::Report::new("kernel_fusion");
/// report.figure("unfused_ms", 0.584, "ms");
/// report.figure("fused_ms", 0.139, "ms");
/// report.figure("unfused_gbps", 690.0, "GB/s");
/// report.figure("fused_gbps", 2897.0, "GB/s");
/// report.figure("fused_over_unfused", 0.584 / 0.139, "x");
/// assert_eq!(
///     kernel_fusion::headline(&report),
///     "fused 4.20x over unfused (0.139 vs 0.584 ms; 2897 vs 690 GB/s)"
/// );
/// ```
pub fn headline(report: &Report) -> String {
    format!(
        "fused {:.2}x over unfused ({:.3} vs {:.3} ms; {:.0} vs {:.0} GB/s)",
        report.figure_or_nan("fused_over_unfused"),
        report.figure_or_nan("fused_ms"),
        report.figure_or_nan("unfused_ms"),
        report.figure_or_nan("fused_gbps"),
        report.figure_or_nan("unfused_gbps"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_quick_are_valid_and_bad_options_are_refused_by_name() {
        assert!(Options::quick().size < Options::default().size);
        chapter_common::assert_options_checked::<Program>(&[
            ("sweep", Options { sweep: vec![16, MAX_ELEMENTS + 1], ..Options::quick() }),
            ("threads_per_block", Options { threads_per_block: 100, ..Options::quick() }),
        ]);
        chapter_common::assert_flags_refused::<Program>(&["--size=0", "--iters=0"]);
    }

    #[test]
    fn inputs_are_seeded_and_not_zero() {
        let (x, y) = inputs(1, 1000);
        assert_eq!((x.clone(), y.clone()), inputs(1, 1000));
        assert_ne!(x, inputs(2, 1000).0);
        assert!(x.iter().any(|&v| v != 0.0) && y.iter().any(|&v| v != 0.0));
        assert!(x.iter().all(|v| (-4.0..4.0).contains(v)));
    }

    #[test]
    fn bandwidth_is_bytes_over_time() {
        assert!((gbps(3e9, 1000.0) - 3.0).abs() < 1e-12);
    }
}
