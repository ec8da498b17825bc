//! `atomic_work_queue`: static vs dynamic assignment of irregular work on the GPU.
//!
//! Every item `i` runs `costs[i]` rounds of its work: the port's integer rounds ([`item_work`])
//! or the chapter listing's `sinf(x) * cosf(x)` rounds ([`listing_item_work`]), as
//! [`Arithmetic`] says; a few contiguous spans of items are many times costlier than the rest. Three static splits and three dynamic kernels hand
//! out the items (all but one on the same persistent grid of `SMs x blocks_per_sm` blocks):
//! 1. **static** (three ways, no atomics): `static`, block b takes the b-th contiguous tile;
//!    `static_grid_stride`, thread t of T takes items t, t + T, ...; `static_per_item`, the
//!    chapter's kernel, one thread per item over a full grid, where the block scheduler still
//!    hands blocks to SMs as others retire;
//! 2. **dynamic per thread**: each thread claims the next item with `atomicAdd` on a global
//!    counter;
//! 3. **dynamic warp** (the chapter's kernel): lane 0 claims a batch of 32 with one `atomicAdd`
//!    and broadcasts it with `__shfl_sync`;
//! 4. **hierarchical**: a block claims a chunk into shared memory, its warps claim from that;
//! 5. a sweep of variant 3 over the batch size.
//!
//! Each variant runs once to warm up and then `runs` times; every run's output must equal the
//! CPU reference bit for bit (for the listing's work, the CPU's rounds of the GPU's own `sinf`
//! and `cosf` values, which must be within [`SINCOS_MAX_ULPS`] of the CPU's sine and cosine). The figures are median GPU times (events) and the speedup of
//! the dynamic warp kernel over the fastest static split of the same run
//! (`dynamic_over_static`, the headline; `best_static` names it), with each static split's own
//! ratio as extras. The uniform-cost control (every item light) runs the static splits and the
//! dynamic warp kernel again: `uniform_dynamic_over_static`.

#![warn(missing_docs)]

mod program;

pub use program::Program;

mod variants;
mod workload;

pub use chapter_common::Arithmetic;
use chapter_common::{Book, ExampleError, ListingNote, OptionCheck, Preset, Report, Samples};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::CudaError;
use serde_json::json;

pub use variants::{Lineup, Variant};
pub use workload::{
    cpu_sin_cos, item_work, listing_item_work, listing_x, Costs, SinCosAgreement, SinCosTable, Workload,
    SINCOS_MAX_ULPS,
};

use variants::Bench;

/// The largest item count accepted: claims may run past it without wrapping a `u32`, and the
/// buffers stay under 8 GiB.
pub const MAX_ITEMS: u32 = 1 << 30;

/// What a round of `arithmetic` computes, in words (for the report).
pub fn describe_arithmetic(arithmetic: Arithmetic) -> &'static str {
    match arithmetic {
        Arithmetic::Port => "the port's integer rounds (an LCG step and an xorshift), checked bit for bit",
        Arithmetic::Listing => {
            "the listing's float rounds, result += sinf(x) * cosf(x) with x = i / n (one fused \
             multiply-add a round, as nvcc compiles the listing's statement), checked bit for bit \
             against the CPU's rounds of the GPU's own sinf(x) and cosf(x), which are checked within 2 \
             ulps of the CPU's"
        }
    }
}

/// What to run: the workload, the grid, and the variants' parameters.
///
/// The fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Options {
    /// Timed runs of each variant after one warm-up; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the costs (and of the salt mixed into every result).
    #[arg(skip)]
    pub seed: u64,
    /// Work items (default: 4194304, or 65536 with --quick).
    #[arg(long, value_name = "N")]
    pub items: u32,
    /// How many times costlier every item of a hot span is (1: uniform work).
    #[arg(long, value_name = "X")]
    pub heavy_factor: u32,
    /// Iterations of a light item; each item gets up to a quarter more at random.
    #[arg(skip)]
    pub light_cost: u32,
    /// Items per span; a span is hot or light as a whole.
    #[arg(skip)]
    pub span: u32,
    /// One span in this many is hot.
    #[arg(skip)]
    pub hot_one_in: u32,
    /// Threads per block, a multiple of 32.
    #[arg(skip)]
    pub threads_per_block: u32,
    /// Blocks per SM in the persistent grid all variants share.
    #[arg(skip)]
    pub blocks_per_sm: u32,
    /// Items per claim of the warp-leader kernel (variant 3), a power of two.
    #[arg(skip)]
    pub batch: u32,
    /// Items a block claims at once in the hierarchical kernel, a multiple of 32.
    #[arg(skip)]
    pub block_chunk: u32,
    /// Batch sizes of the sweep (powers of two).
    #[arg(skip)]
    pub sweep: Vec<u32>,
    /// Also run the uniform-cost control (the same items with `heavy_factor` 1) and report the
    /// dynamic warp kernel against the best static variant there (skipped when `heavy_factor`
    /// is already 1, and with [`Lineup::Listing`] or [`Costs::Sawtooth`]).
    #[arg(skip)]
    pub uniform_control: bool,
    /// How the costs are drawn: the port's hot spans, or the listing's sawtooth.
    #[arg(skip = Costs::HotSpans)]
    pub costs: Costs,
    /// Which kernels run on which grid: the port's six and the sweep, or the listing's two.
    #[arg(skip = Lineup::Port)]
    pub lineup: Lineup,
    /// What a round of an item's work computes: `port` (an integer LCG step and xorshift; the
    /// default) or `listing` (the chapter listing's sinf(x) * cosf(x); the default with --book).
    #[arg(long, value_enum, value_name = "KIND")]
    pub arithmetic: Arithmetic,
}

impl Default for Options {
    /// Chapter scale: 4 Mi items; 1 span of 8192 items in 16 is hot, 16x costlier (half of the
    /// work sits in 6% of the items); about 2.3e9 iterations in all.
    fn default() -> Options {
        Options {
            items: 1 << 22,
            runs: 5,
            seed: 0x5eed,
            light_cost: 256,
            heavy_factor: 16,
            span: 8192,
            hot_one_in: 16,
            threads_per_block: 256,
            blocks_per_sm: 4,
            batch: 32,
            block_chunk: 512,
            sweep: vec![1, 2, 4, 8, 16, 32, 64],
            uniform_control: true,
            costs: Costs::HotSpans,
            lineup: Lineup::Port,
            arithmetic: Arithmetic::Port,
        }
    }
}

impl Options {
    /// Small and fast (for tests and `--quick`): 64 Ki items of light cost 16, two runs.
    pub fn quick() -> Options {
        Options { items: 1 << 16, runs: 2, light_cost: 16, span: 1024, ..Options::default() }
    }

    /// The chapter listing's workload (`atomic_work_queue.cu`): 1 Mi items, item `i` does
    /// `i & 255` rounds of the listing's `sinf(x) * cosf(x)`, its static kernel and its
    /// warp-batched dynamic kernel (batches of 32) each over 4096 blocks of 256 threads, one
    /// thread per item.
    pub fn listing() -> Options {
        Options {
            items: 1 << 20,
            threads_per_block: 256,
            batch: 32,
            sweep: Vec::new(),
            uniform_control: false,
            costs: Costs::Sawtooth,
            lineup: Lineup::Listing,
            arithmetic: Arithmetic::Listing,
            ..Options::default()
        }
    }

    /// Refuses what the kernels cannot run correctly, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        OptionCheck::new("atomic_work_queue")
            .within("items", self.items, 1..=MAX_ITEMS)
            .at_least("runs", self.runs, 1)
            .within("light_cost", self.light_cost, 1..=1 << 16)
            .within("heavy_factor", self.heavy_factor, 1..=1 << 10)
            .at_least("span", self.span, 1)
            .at_least("hot_one_in", self.hot_one_in, 1)
            .at_least("blocks_per_sm", self.blocks_per_sm, 1)
            .threads_per_block(self.threads_per_block)
            .rule("batch", self.bad_batch().is_none(), || {
                format!("batch sizes must be powers of two up to 4096, not {}", self.bad_batch().unwrap_or(0))
            })
            .rule(
                "block_chunk",
                self.block_chunk.is_multiple_of(32) && (32..=1 << 20).contains(&self.block_chunk),
                || format!("block_chunk must be a multiple of 32 up to 2^20, not {}", self.block_chunk),
            )
            .done()
    }

    /// The first batch size (of `batch` and `sweep`) that is not a power of two up to 4096.
    fn bad_batch(&self) -> Option<u32> {
        std::iter::once(self.batch)
            .chain(self.sweep.iter().copied())
            .find(|b| !b.is_power_of_two() || *b > 4096)
    }
}

/// The chapter's own listing for this program: what `--book` runs, or why it runs nothing
/// (see [`Book`]).
pub fn book() -> Book<Options> {
    let options = Options::listing();
    Book::Preset {
        preset: Preset { quick: Options { items: 1 << 16, runs: 2, ..options.clone() }, options },
        note: "atomic_work_queue.cu: 1 Mi items, item i does i & 255 rounds of result += sinf(x) * cosf(x) \
               with x = i / N; the static kernel and the warp-batched dynamic kernel (32 per claim) each \
               over 4096 blocks of 256, one thread per item. The same arithmetic here, checked against \
               the CPU (the listing checks nothing). Not as listed: each item's cost is loaded from an \
               array and x computed (the listing computes idx % 256 and loads x); the output is filled \
               before each run (a NaN, so an item not written shows); the counter is zeroed with a \
               memset (the listing: cudaMemcpyToSymbol); the broadcast uses the full warp mask (the \
               listing: __activemask()); the figure is the median of timed runs after a warm-up (the \
               listing times each kernel once, static first, cold). The port's default: 4 Mi items \
               with hot spans on a persistent grid, six kernels, integer rounds.",
    }
}

/// One variant's timings and what its outputs looked like.
struct Measured {
    variant: Variant,
    samples: Samples,
    /// The first run whose output differed from the CPU reference, and where.
    mismatch: Option<String>,
    /// The output of the last run.
    last: Vec<u32>,
    /// The untimed warm-up's own time: the variant's first run in this process (ms).
    first_ms: f64,
}

/// Runs `variant` once untimed and `runs` times timed, checking every output against
/// `reference` (results of `arithmetic`).
fn measure(
    bench: &mut Bench, variant: Variant, runs: usize, reference: &[u32], arithmetic: Arithmetic,
) -> Result<Measured, CudaError> {
    let mut samples = Samples::default();
    let mut mismatch = None;
    let mut last = Vec::new();
    let mut first_ms = f64::NAN;
    for run in 0..=runs {
        let ms = bench.run_once(variant)?;
        if run > 0 {
            samples.push(ms);
        } else {
            first_ms = ms;
        }
        last = bench.output()?;
        if mismatch.is_none() {
            mismatch = first_difference(&last, reference).map(|(i, got, want)| {
                let (got, want) = (show(got, arithmetic), show(want, arithmetic));
                format!("{} run {run}: item {i} is {got}, want {want}", variant.name())
            });
        }
    }
    Ok(Measured { variant, samples, mismatch, last, first_ms })
}

/// An output value as its arithmetic makes it: hex for the port's integers, the float and its
/// bits for the listing's.
fn show(value: u32, arithmetic: Arithmetic) -> String {
    match arithmetic {
        Arithmetic::Port => format!("{value:#x}"),
        Arithmetic::Listing => format!("{:e} ({value:#010x})", f32::from_bits(value)),
    }
}

/// The CPU reference of `workload`'s items: the port's rounds, or with `table` (the GPU's
/// `sinf`/`cosf` values) the listing's.
fn reference_of(workload: &Workload, table: Option<&SinCosTable>) -> Vec<u32> {
    match table {
        None => workload.reference(),
        Some(table) => workload.listing_reference(table),
    }
}

/// Where a run of `options` with the listing's lineup does what the listing does and where it
/// does not: sizes and launch shape, work, and how it is timed and checked.
fn listing_note(options: &Options) -> String {
    let mut note = ListingNote::default();
    note.put(options.items == 1 << 20, "1 Mi items", format!("{} items (the listing: 1 Mi)", options.items));
    note.put(
        options.costs == Costs::Sawtooth,
        "item i does i % 256 rounds",
        "seeded hot spans of costs (the listing: item i does i % 256 rounds)",
    );
    note.put(
        options.arithmetic == Arithmetic::Listing,
        "a round is result += sinf(x) * cosf(x), x = i / n",
        "a round is the port's integer LCG step and xorshift (the listing: result += sinf(x) * cosf(x))",
    );
    note.put(
        options.threads_per_block == 256,
        "both kernels over one thread per item in blocks of 256",
        format!("blocks of {} (the listing: 256)", options.threads_per_block),
    );
    note.put(
        options.batch == 32,
        "32 items per claim",
        format!("{} items per claim (the listing: 32)", options.batch),
    );
    note.differs("each item's cost is loaded and x computed (the listing computes idx % 256 and loads x)");
    note.differs(format!(
        "timed as the median of {} runs after a warm-up, each run's output checked (the listing: one cold \
         run each, static first, nothing checked)",
        options.runs
    ));
    note.differs(
        "the output is filled before each run and the counter zeroed with a memset (the listing: \
         cudaMemcpyToSymbol); the claim is broadcast with the full warp mask (the listing: __activemask())",
    );
    note.differs("the listing's 128-per-claim and block-batched kernels are not run");
    note.finish()
}

/// The first index where `a` and `b` differ, with both values (a length difference counts).
fn first_difference(a: &[u32], b: &[u32]) -> Option<(usize, u32, u32)> {
    if a.len() != b.len() {
        return Some((a.len().min(b.len()), a.len() as u32, b.len() as u32));
    }
    a.iter().zip(b).position(|(x, y)| x != y).map(|i| (i, a[i], b[i]))
}

/// Runs every variant on device 0 and reports times, speedups and the checks.
///
/// Errors are CUDA's (no device, a failed launch) or invalid options; a wrong result is not an
/// error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    let (_, properties) = chapter_common::device_zero()?;
    let workload = Workload::build(options);
    let listing = options.lineup == Lineup::Listing;
    let blocks = if listing {
        options.items.div_ceil(options.threads_per_block)
    } else {
        (properties.multiprocessors.max(1) as u32).saturating_mul(options.blocks_per_sm)
    };
    let config = LaunchConfig::new(blocks, options.threads_per_block);
    let runs = Runs::measure(options, &workload, config)?;

    let mut report = Report::new("atomic_work_queue");
    runs.report_figures(options, &mut report);
    if !listing {
        report.figure("static_tile_imbalance", workload.tile_imbalance(blocks), "x");
    }
    report.figure("items", f64::from(options.items), "items");
    runs.report_checks(options, &mut report);
    report_notes(options, &mut report, &properties, &workload, blocks);
    report.data("variants", variants_json(runs.all()));
    report.data("uniform_variants", variants_json(runs.control.iter()));
    Ok(report)
}

/// Every variant measured: the lineup's (by label), the batch sweep's, the uniform control's;
/// and the GPU's sine and cosine table when the listing's arithmetic runs.
struct Runs {
    main: Vec<(&'static str, Measured)>,
    sweep: Vec<Measured>,
    control: Vec<Measured>,
    ran_control: bool,
    table: Option<SinCosTable>,
}

impl Runs {
    /// Measures the lineup's variants, the sweep and the uniform-cost control (the same items
    /// and grid, every item light), each run checked against its CPU reference.
    fn measure(options: &Options, workload: &Workload, config: LaunchConfig) -> Result<Runs, ExampleError> {
        let listing = options.lineup == Lineup::Listing;
        let mut bench = Bench::new(workload, config, options.arithmetic)?;
        // The listing's work: the CPU reference takes the GPU's own sinf and cosf of every x,
        // which are checked against the CPU's in the report.
        let table = match options.arithmetic {
            Arithmetic::Port => None,
            Arithmetic::Listing => Some(bench.sincos_table()?),
        };
        let reference = reference_of(workload, table.as_ref());
        let lineup: &[(&'static str, Variant)] = if listing {
            &[
                ("static_per_item", Variant::StaticPerItem),
                ("dynamic_warp", Variant::WarpBatched(options.batch)),
            ]
        } else {
            &[
                ("static", Variant::Static),
                ("static_per_item", Variant::StaticPerItem),
                ("static_grid_stride", Variant::StaticGridStride),
                ("dynamic_per_thread", Variant::DynamicPerThread),
                ("dynamic_warp", Variant::WarpBatched(options.batch)),
                ("hierarchical", Variant::Hierarchical(options.block_chunk)),
            ]
        };
        let mut main = Vec::new();
        for &(label, variant) in lineup {
            main.push((label, measure(&mut bench, variant, options.runs, &reference, options.arithmetic)?));
        }
        let mut sweep = Vec::new();
        for &batch in if listing { &[][..] } else { &options.sweep[..] } {
            let variant = Variant::WarpBatched(batch);
            sweep.push(measure(&mut bench, variant, options.runs, &reference, options.arithmetic)?);
        }
        drop(bench);
        let mut control = Vec::new();
        let ran_control = options.uniform_control
            && options.heavy_factor > 1
            && !listing
            && options.costs == Costs::HotSpans;
        if ran_control {
            let uniform = Workload::build(&Options { heavy_factor: 1, ..options.clone() });
            let uniform_reference = reference_of(&uniform, table.as_ref());
            let mut bench = Bench::new(&uniform, config, options.arithmetic)?;
            for variant in STATIC_VARIANTS.into_iter().chain([Variant::WarpBatched(options.batch)]) {
                control.push(measure(
                    &mut bench,
                    variant,
                    options.runs,
                    &uniform_reference,
                    options.arithmetic,
                )?);
            }
        }
        Ok(Runs { main, sweep, control, ran_control, table })
    }

    /// The lineup's and the sweep's variants, in report order.
    fn all(&self) -> impl Iterator<Item = &Measured> {
        self.main.iter().map(|(_, m)| m).chain(&self.sweep)
    }

    /// The median time of the lineup's variant `label` (NaN if it did not run).
    fn ms(&self, label: &str) -> f64 {
        self.main.iter().find(|(l, _)| *l == label).map_or(f64::NAN, |(_, m)| m.samples.median())
    }

    /// The times, the headline ratios against the fastest static variant, the listing's own
    /// timing (listing lineup), the uniform control's and the sweep's best batch.
    fn report_figures(&self, options: &Options, report: &mut Report) {
        let listing = options.lineup == Lineup::Listing;
        let ms = |label: &str| self.ms(label);
        for (label, m) in &self.main {
            report.figure(&format!("{label}_ms"), m.samples.median(), "ms");
        }
        for m in &self.sweep {
            if let Variant::WarpBatched(batch) = m.variant {
                report.figure(&format!("sweep_batch_{batch}_ms"), m.samples.median(), "ms");
            }
        }
        let (best_variant, best_static_ms) = fastest_static(self.main.iter().map(|(_, m)| m));
        report.figure("best_static_ms", best_static_ms, "ms");
        report.data("best_static", json!(best_variant.name()));
        report.figure("best_static_variant", static_index(best_variant), "index");
        report.figure("dynamic_over_static", best_static_ms / ms("dynamic_warp"), "x");
        report.figure("dynamic_over_static_per_item", ms("static_per_item") / ms("dynamic_warp"), "x");
        if listing {
            self.report_first_runs(report);
        } else {
            report.figure("per_thread_over_static", best_static_ms / ms("dynamic_per_thread"), "x");
            report.figure("hierarchical_over_static", best_static_ms / ms("hierarchical"), "x");
            report.figure("dynamic_over_static_tiles", ms("static") / ms("dynamic_warp"), "x");
            report.figure(
                "dynamic_over_static_grid_stride",
                ms("static_grid_stride") / ms("dynamic_warp"),
                "x",
            );
        }
        self.report_control(report);
        if !listing {
            report.note(format!(
                "headline against the fastest static variant of this run: {} ({:.3} ms); tiles {:.3}, \
                 per item {:.3}, grid-stride {:.3} ms",
                best_variant.name(),
                best_static_ms,
                ms("static"),
                ms("static_per_item"),
                ms("static_grid_stride")
            ));
        }
        let best = self.sweep.iter().min_by(|a, b| a.samples.median().total_cmp(&b.samples.median()));
        if let Some(Measured { variant: Variant::WarpBatched(batch), samples, .. }) = best {
            report.figure("best_batch", f64::from(*batch), "items");
            report.figure("best_batch_ms", samples.median(), "ms");
        }
    }

    /// The listing's own timing: each kernel's first run, static first, no warm-up.
    fn report_first_runs(&self, report: &mut Report) {
        let first =
            |label: &str| self.main.iter().find(|(l, _)| *l == label).map_or(f64::NAN, |(_, m)| m.first_ms);
        let (first_static, first_dynamic) = (first("static_per_item"), first("dynamic_warp"));
        report.figure("first_run_static_ms", first_static, "ms");
        report.figure("first_run_dynamic_ms", first_dynamic, "ms");
        report.figure("first_run_dynamic_over_static", first_static / first_dynamic, "x");
        report.note(format!(
            "timed as the listing times (each kernel's first run in this process, static first, no \
             warm-up): dynamic {:.2}x over static ({:.3} vs {:.3} ms); the medians after a warm-up: {:.2}x. \
             The listing's first launch also loads its module, which the port did before timing",
            first_static / first_dynamic,
            first_dynamic,
            first_static,
            self.ms("static_per_item") / self.ms("dynamic_warp")
        ));
    }

    /// The uniform-cost control's figures, when it ran.
    fn report_control(&self, report: &mut Report) {
        let Some(dynamic) = self.control.iter().find(|m| matches!(m.variant, Variant::WarpBatched(_))) else {
            return;
        };
        let (uniform_best, uniform_best_ms) = fastest_static(self.control.iter());
        report.figure("uniform_best_static_ms", uniform_best_ms, "ms");
        report.data("uniform_best_static", json!(uniform_best.name()));
        report.figure("uniform_best_static_variant", static_index(uniform_best), "index");
        report.figure("uniform_dynamic_warp_ms", dynamic.samples.median(), "ms");
        report.figure("uniform_dynamic_over_static", uniform_best_ms / dynamic.samples.median(), "x");
        report.note(format!(
            "uniform-cost control (heavy_factor 1): dynamic warp {:.3} ms vs best static ({}) {:.3} ms",
            dynamic.samples.median(),
            uniform_best.name(),
            uniform_best_ms
        ));
    }

    /// Every output against its CPU reference, the GPU's sine and cosine against the CPU's
    /// (listing's arithmetic), and the variants against one another.
    fn report_checks(&self, options: &Options, report: &mut Report) {
        let all: Vec<&Measured> = self.all().collect();
        let control_mismatch = self.control.iter().find_map(|m| m.mismatch.as_deref());
        if self.ran_control {
            report.check(
                "uniform control matches its CPU reference",
                control_mismatch.is_none(),
                match control_mismatch {
                    None => format!("{} variants x {} runs, bit-exact", self.control.len(), options.runs + 1),
                    Some(first) => first.to_string(),
                },
            );
        }
        if let Some(table) = &self.table {
            let agreement = table.agreement();
            report.figure("sincos_max_ulps", f64::from(agreement.max_ulps), "ulps");
            report.check(
                SINCOS_CHECK,
                agreement.max_ulps <= SINCOS_MAX_ULPS,
                sincos_detail(&agreement, table.sines.len()),
            );
        }
        let launches = all.len() * (options.runs + 1);
        let mismatches: Vec<&str> = all.iter().filter_map(|m| m.mismatch.as_deref()).collect();
        let exact = match options.arithmetic {
            Arithmetic::Port => "bit-exact",
            Arithmetic::Listing => "bit-exact against the CPU's rounds of the GPU's sinf(x) and cosf(x)",
        };
        report.check(
            "matches CPU reference",
            mismatches.is_empty(),
            match mismatches.first() {
                None => format!("{launches} launches x {} items, {exact}", options.items),
                Some(first) => {
                    format!("{} of {} variants differ; first: {first}", mismatches.len(), all.len())
                }
            },
        );
        let static_out = &self.main[0].1.last;
        let differing: Vec<String> =
            all.iter().filter(|m| m.last != *static_out).map(|m| m.variant.name()).collect();
        // Implied by "matches CPU reference" (every variant is compared with the same
        // reference); kept as a labelled cross-check, not as separate evidence.
        report.check(
            "identical results across variants (implied by the CPU check)",
            differing.is_empty(),
            if differing.is_empty() {
                format!("{} variants agree on all {} items", all.len(), options.items)
            } else {
                format!("differ from static: {}", differing.join(", "))
            },
        );
    }
}

/// The report's notes: the arithmetic, what differs from the listing, the device and grid, the
/// workload's costs.
fn report_notes(
    options: &Options, report: &mut Report, properties: &cuda_graph::DeviceProperties, workload: &Workload,
    blocks: u32,
) {
    let listing = options.lineup == Lineup::Listing;
    report.note(format!("arithmetic: {}", describe_arithmetic(options.arithmetic)));
    if listing {
        report.note(listing_note(options));
    }
    report.data("arithmetic", json!(options.arithmetic.name()));
    report.note(format!(
        "{} ({} SMs): {}",
        properties.name,
        properties.multiprocessors,
        if listing {
            format!(
                "the listing's two kernels, each over {blocks} x {} threads, one thread per item",
                options.threads_per_block
            )
        } else {
            format!(
                "grid {blocks} x {} threads for every variant but static_per_item (one thread per \
                 item: {} blocks)",
                options.threads_per_block,
                options.items.div_ceil(options.threads_per_block)
            )
        }
    ));
    report.note(match options.costs {
        Costs::Sawtooth => format!(
            "{} items, item i costs i % 256 rounds (the listing's sawtooth), {:.3e} iterations",
            options.items,
            workload.total_cost() as f64
        ),
        Costs::HotSpans => format!(
            "{} items, {} of {} spans of {} hot ({}x costlier, {:.0}% of {:.3e} iterations); \
             static tiles: costliest {:.2}x the mean",
            options.items,
            workload.hot_spans,
            workload.spans,
            options.span,
            options.heavy_factor,
            100.0 * workload.hot_share(options),
            workload.total_cost() as f64,
            workload.tile_imbalance(blocks),
        ),
    });
}

/// The check of the GPU's `sinf`/`cosf` values against the CPU's (listing's work only).
pub const SINCOS_CHECK: &str = "GPU sinf/cosf within 2 ulps of the CPU's sine and cosine";

/// The detail of [`SINCOS_CHECK`]: what differs, by how much, and the bound.
fn sincos_detail(agreement: &SinCosAgreement, items: usize) -> String {
    format!(
        "{} of {} values (sinf and cosf of {items} items' x) differ from the CPU's f64 sine and cosine rounded \
         to f32, by at most {} ulps (item {}); allowed: {SINCOS_MAX_ULPS}, CUDA's documented bound",
        agreement.differing, agreement.values, agreement.max_ulps, agreement.worst_item
    )
}

/// Each variant's median/min/max and atomics per item, as JSON.
fn variants_json<'a>(measured: impl Iterator<Item = &'a Measured>) -> serde_json::Value {
    json!(measured
        .map(|m| {
            let (min, max) = m.samples.range();
            json!({
                "variant": m.variant.name(),
                "median_ms": m.samples.median(),
                "min_ms": min,
                "max_ms": max,
                "global_atomics_per_item": m.variant.global_atomics_per_item(),
            })
        })
        .collect::<Vec<_>>())
}

/// The static variants, in the order `best_static_variant` numbers them (0, 1, 2).
const STATIC_VARIANTS: [Variant; 3] = [Variant::Static, Variant::StaticPerItem, Variant::StaticGridStride];

/// The position of `variant` in [`STATIC_VARIANTS`] (as a figure), NaN if it is not static.
fn static_index(variant: Variant) -> f64 {
    STATIC_VARIANTS.iter().position(|&v| v == variant).map_or(f64::NAN, |i| i as f64)
}

/// The static variant with the lowest median among `measured`, and that median (the tiled
/// variant with NaN when none is static).
fn fastest_static<'a>(measured: impl Iterator<Item = &'a Measured>) -> (Variant, f64) {
    measured
        .filter(|m| STATIC_VARIANTS.contains(&m.variant))
        .map(|m| (m.variant, m.samples.median()))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((Variant::Static, f64::NAN))
}

/// The one-line summary for the chapter table: the dynamic warp kernel against the fastest
/// static variant of the run (named), and the uniform-cost control when it ran, e.g.
/// `dynamic 1.40x over best static (static_per_item) (0.40 vs 0.56 ms); uniform 0.98x`.
///
/// ```
/// let mut report = chapter_common::Report::new("atomic_work_queue");
/// report.figure("best_static_ms", 0.56, "ms");
/// report.figure("best_static_variant", 1.0, "index");
/// report.figure("dynamic_warp_ms", 0.40, "ms");
/// report.figure("dynamic_over_static", 0.56 / 0.40, "x");
/// assert_eq!(
///     atomic_work_queue::headline(&report),
///     "dynamic 1.40x over best static (static_per_item) (0.40 vs 0.56 ms)"
/// );
/// report.figure("uniform_dynamic_over_static", 0.98, "x");
/// assert!(atomic_work_queue::headline(&report).ends_with("; uniform 0.98x"));
/// ```
pub fn headline(report: &Report) -> String {
    let best = report.figure_or_nan("best_static_variant");
    let name = STATIC_VARIANTS
        .iter()
        .enumerate()
        .find(|(i, _)| *i as f64 == best)
        .map_or_else(|| "?".to_string(), |(_, v)| v.name());
    let mut line = format!(
        "dynamic {:.2}x over best static ({name}) ({:.2} vs {:.2} ms)",
        report.figure_or_nan("dynamic_over_static"),
        report.figure_or_nan("dynamic_warp_ms"),
        report.figure_or_nan("best_static_ms")
    );
    if let Some(uniform) = report.figure_value("uniform_dynamic_over_static") {
        line.push_str(&format!("; uniform {uniform:.2}x"));
    }
    line
}

#[cfg(test)]
mod tests {
    use chapter_common::ChapterProgram;

    use super::*;

    #[test]
    fn defaults_and_quick_are_valid_and_bad_options_are_refused_by_name() {
        assert!(Options::quick().items < Options::default().items);
        chapter_common::assert_options_checked::<Program>(&[
            ("threads_per_block", Options { threads_per_block: 100, ..Options::quick() }),
            ("batch", Options { sweep: vec![1, 3], ..Options::quick() }),
            ("block_chunk", Options { block_chunk: 48, ..Options::quick() }),
            ("light_cost", Options { light_cost: 0, ..Options::quick() }),
        ]);
        chapter_common::assert_flags_refused::<Program>(&["--items=0"]);
    }

    #[test]
    fn the_book_preset_runs_the_listings_arithmetic_and_says_what_differs() {
        let book = Program::book_options(false).expect("a --book preset");
        assert_eq!(
            (book.arithmetic, book.costs, book.lineup, book.items),
            (Arithmetic::Listing, Costs::Sawtooth, Lineup::Listing, 1 << 20)
        );
        assert_eq!(Options::default().arithmetic, Arithmetic::Port);
        let note = listing_note(&book);
        assert!(
            note.starts_with(
                "as the listing: 1 Mi items, item i does i % 256 rounds, a round is result += sinf(x) * cosf(x)"
            ),
            "{note}"
        );
        assert!(!note.contains("the port's integer"), "{note}");
        for differs in ["median of 5 runs after a warm-up", "one cold run each", "are not run"] {
            assert!(note.contains(differs), "{differs}: {note}");
        }
        let integer = listing_note(&Options { arithmetic: Arithmetic::Port, items: 1 << 16, ..book });
        assert!(integer.contains("the port's integer LCG step"), "{integer}");
        assert!(integer.contains("65536 items (the listing: 1 Mi)"), "{integer}");
        assert!(describe_arithmetic(Arithmetic::Listing).contains("sinf(x) * cosf(x)"));
        assert!(describe_arithmetic(Arithmetic::Port).contains("integer"));
    }

    #[test]
    fn the_arithmetic_is_a_flag() {
        use clap::{Args, FromArgMatches};
        for (flag, want) in
            [("--arithmetic=listing", Arithmetic::Listing), ("--arithmetic=port", Arithmetic::Port)]
        {
            let command = Options::augment_args_for_update(clap::Command::new("atomic_work_queue"));
            let matches = command.try_get_matches_from(["atomic_work_queue", flag]).expect(flag);
            let mut options = Program::book_options(true).expect("a --book preset");
            options.update_from_arg_matches(&matches).expect(flag);
            assert_eq!(options.arithmetic, want, "{flag}");
            assert_eq!(want.name(), flag.trim_start_matches("--arithmetic="));
        }
    }

    #[test]
    fn values_show_as_their_arithmetic_makes_them() {
        assert_eq!(show(255, Arithmetic::Port), "0xff");
        assert_eq!(show(1.5f32.to_bits(), Arithmetic::Listing), "1.5e0 (0x3fc00000)");
        let agreement = SinCosAgreement { values: 8, differing: 1, max_ulps: 1, worst_item: 3 };
        let detail = sincos_detail(&agreement, 4);
        assert!(detail.starts_with("1 of 8 values (sinf and cosf of 4 items' x)"), "{detail}");
        assert!(detail.contains("by at most 1 ulps (item 3); allowed: 2"), "{detail}");
    }

    fn measured(variant: Variant, ms: &[f64]) -> Measured {
        let mut samples = Samples::default();
        for &m in ms {
            samples.push(m);
        }
        Measured { variant, samples, mismatch: None, last: Vec::new(), first_ms: f64::NAN }
    }

    #[test]
    fn the_headline_takes_the_fastest_static_variant() {
        let all = [
            measured(Variant::Static, &[3.0, 3.0]),
            measured(Variant::StaticPerItem, &[2.5, 2.5]),
            measured(Variant::StaticGridStride, &[2.0, 2.0]),
            // Faster, but dynamic: never the baseline.
            measured(Variant::WarpBatched(32), &[1.0, 1.0]),
        ];
        assert_eq!(fastest_static(all.iter()), (Variant::StaticGridStride, 2.0));
        assert_eq!(fastest_static(all[..2].iter()), (Variant::StaticPerItem, 2.5));
        assert_eq!(static_index(Variant::StaticGridStride), 2.0);
        assert!(static_index(Variant::WarpBatched(32)).is_nan());
        let (variant, ms) = fastest_static(all[3..].iter());
        assert_eq!(variant, Variant::Static);
        assert!(ms.is_nan());
    }

    #[test]
    fn the_headline_names_the_baseline_and_the_control() {
        let mut report = Report::new("atomic_work_queue");
        report.figure("best_static_ms", 2.0, "ms");
        report.figure("best_static_variant", 2.0, "index");
        report.figure("dynamic_warp_ms", 1.0, "ms");
        report.figure("dynamic_over_static", 2.0, "x");
        assert_eq!(
            headline(&report),
            "dynamic 2.00x over best static (static_grid_stride) (1.00 vs 2.00 ms)"
        );
        report.figure("uniform_dynamic_over_static", 1.01, "x");
        assert!(headline(&report).ends_with("; uniform 1.01x"), "{}", headline(&report));
    }

    #[test]
    fn first_difference_finds_the_first_mismatch() {
        assert_eq!(first_difference(&[1, 2, 3], &[1, 2, 3]), None);
        assert_eq!(first_difference(&[1, 5, 3], &[1, 2, 4]), Some((1, 5, 2)));
        assert!(first_difference(&[1], &[1, 2]).is_some());
    }

    #[test]
    fn variant_names_are_distinct() {
        let names: Vec<String> = [
            Variant::Static,
            Variant::StaticPerItem,
            Variant::StaticGridStride,
            Variant::DynamicPerThread,
            Variant::WarpBatched(32),
            Variant::Hierarchical(512),
        ]
        .iter()
        .map(|v| v.name())
        .collect();
        assert_eq!(first_duplicate(&names), None, "{names:?}");
    }

    /// The first value (in sorted order) that occurs more than once in `items`, wherever the
    /// copies are: sorted first, so equal values are neighbours.
    fn first_duplicate<T: Ord + Clone>(items: &[T]) -> Option<T> {
        let mut sorted = items.to_vec();
        sorted.sort();
        sorted.windows(2).find(|pair| pair[0] == pair[1]).map(|pair| pair[0].clone())
    }

    #[test]
    fn the_duplicate_check_finds_copies_that_are_not_neighbours() {
        // `dedup` alone would miss this one: the two "b"s are not adjacent.
        assert_eq!(first_duplicate(&["b", "a", "b"]), Some("b"));
        assert_eq!(first_duplicate(&["c", "a", "b", "a", "c"]), Some("a"));
        assert_eq!(first_duplicate(&["a", "a"]), Some("a"));
        assert_eq!(first_duplicate(&["b", "a", "c"]), None);
        assert_eq!(first_duplicate::<&str>(&[]), None);
    }
}
