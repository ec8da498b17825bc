//! `generation_loop`: autoregressive generation with a small decoder, where every step decides
//! on the GPU whether each sequence is done, run four ways.
//!
//! The decoder ([`model`]): an embedding, two GRU layers of 128 units and an output layer over
//! 512 tokens, greedy (the first largest logit), its weights generated from the seed on grids
//! that make every sum exact, so that the CUDA kernels, the CPU reference ([`reference`](mod@reference)) and
//! the PyTorch twin (`torch_twin.py`) produce the same tokens. A batch of 1 to 64 sequences
//! starts from seeded tokens; each stops when it emits the end token or reaches `max_len`
//! tokens, and the end token's bias makes them stop at different steps. Finished sequences are
//! masked inside the kernels.
//!
//! A step is four small kernels (`kernels/decoder.cu`): GRU layer 0, GRU layer 1, logits, pick.
//! The ways ([`ways`]): (a) a host loop of stream launches that reads a flag back each step;
//! (b) a host loop that replays one graph per step; (c) the whole generation as one graph
//! launch, the step as a WHILE body whose last kernel ends the loop; (d) as (c), with
//! programmatic edges between the step's kernels: each kernel loads its weights, then waits for
//! the one before (`cuda_graph::pdl::wait_upstream()`), so its launch and those loads overlap
//! the end of the kernel before.
//!
//! A profile ([`profile`]) runs beside the ways: every step unrolled into one graph (the steps'
//! GPU time alone, with plain and with programmatic edges), a WHILE loop of empty kernels (loop
//! control alone), and (c) and (d) with 4 steps per WHILE iteration.
//!
//! Every way's tokens of every run must equal the CPU reference's, token for token, and each
//! token's softmax probability must be within 1e-4 (relative) of the reference's. Figures are
//! medians over `runs` timed runs after one warm-up, by batch size: µs per step (event time
//! over the steps of the longest sequence) and tokens per second.

#![warn(missing_docs)]

mod program;

pub use program::Program;

pub mod chart;
pub mod device;
pub mod export;
pub mod graphs;
pub mod measure;
pub mod model;
pub mod profile;
pub mod redraw;
pub mod reference;
pub mod results;
pub mod ways;

use std::path::PathBuf;

use chapter_common::{Book, ExampleError, OptionCheck, Report};
use serde_json::json;

use device::DeviceModel;
use model::{Model, MAX_BATCH};
use reference::Generation;
use ways::Way;

/// The program's name.
pub const NAME: &str = "generation_loop";

/// The relative tolerance on each token's probability (the softmax's `expf` differs in its
/// last bits between libraries; the tokens do not).
pub const PROB_TOLERANCE: f32 = 1e-4;

/// What to run; the fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct Options {
    /// Batch sizes, comma-separated, each 1..=64; batch b is the first b sequences (default
    /// 1,4,16,64, or 1,4 with --quick).
    #[arg(long, value_name = "B,B,...", value_delimiter = ',')]
    pub batches: Vec<u32>,
    /// The most tokens a sequence generates (default 256, or 64 with --quick).
    #[arg(long, value_name = "N")]
    pub max_len: u32,
    /// Added to the end token's output bias, in units of 1/1024: the larger, the sooner
    /// sequences stop (default 240).
    #[arg(long, value_name = "UNITS", allow_hyphen_values = true)]
    pub end_bias: i32,
    /// Timed runs after one warm-up; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the weights and the start tokens.
    #[arg(skip)]
    pub seed: u64,
    /// Write the weights, the expected tokens and the report (JSON) here, for torch_twin.py.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

impl Default for Options {
    /// Batches 1, 4, 16 and 64 of sequences of at most 256 tokens, end bias 240: with the
    /// default seed the 64 sequences stop after 1 to 256 steps (205 for the first), so a
    /// generation runs a few hundred steps, each a few microseconds of GPU work.
    fn default() -> Options {
        Options { batches: vec![1, 4, 16, 64], max_len: 256, end_bias: 240, runs: 5, seed: 0x5eed, out: None }
    }
}

impl Options {
    /// Small and fast (for tests and `--quick`): batches 1 and 4, 64 tokens at most, two runs.
    pub fn quick() -> Options {
        Options { batches: vec![1, 4], max_len: 64, runs: 2, ..Options::default() }
    }

    /// Refuses what the kernels cannot run, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        OptionCheck::new(NAME)
            .rule(
                "batches",
                !self.batches.is_empty() && self.batches.iter().all(|b| (1..=MAX_BATCH as u32).contains(b)),
                || {
                    format!(
                        "batches must be a non-empty list of sizes 1..={MAX_BATCH}, not {:?}",
                        self.batches
                    )
                },
            )
            .within("max_len", self.max_len, 1..=4096)
            .within("end_bias", self.end_bias, -8192..=8192)
            .at_least("runs", self.runs, 1)
            .done()
    }

    fn largest_batch(&self) -> usize {
        self.batches.iter().copied().max().unwrap_or(1) as usize
    }
}

/// The reference generation of `starts`, the sequences shared among the available cores.
fn reference_generation(model: &Model, starts: &[u32], max_len: u32) -> Generation {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(starts.len()).max(1);
    let chunk = starts.len().div_ceil(threads);
    let parts: Vec<Generation> = std::thread::scope(|scope| {
        let handles: Vec<_> = starts
            .chunks(chunk)
            .map(|part| scope.spawn(move || reference::generate(model, part, max_len)))
            .collect();
        handles.into_iter().map(|h| h.join().expect("the reference does not panic")).collect()
    });
    let mut all = Generation { tokens: Vec::new(), probs: Vec::new() };
    for part in parts {
        all.tokens.extend(part.tokens);
        all.probs.extend(part.probs);
    }
    all
}

fn write_out(options: &Options, name: &str, bytes: &[u8]) -> Result<(), ExampleError> {
    match &options.out {
        Some(dir) => export::write(dir, name, bytes).map_err(|problem| ExampleError::check(NAME, problem)),
        None => Ok(()),
    }
}

/// Runs every batch size every way on device 0, checks each generation against the CPU
/// reference, and reports the medians, the checks and the goals.
///
/// Errors are CUDA's, invalid options, or a failed write of `out`; a wrong token is not an
/// error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    let model = Model::generate(options.seed, options.end_bias);
    let margin = model.exactness_margin();
    let starts = Model::start_tokens(options.largest_batch(), options.seed);
    let reference = reference_generation(&model, &starts, options.max_len);
    if options.out.is_some() {
        let (bytes, header) = export::weights(&model, options.seed, options.end_bias);
        write_out(options, export::WEIGHTS_FILE, &bytes)?;
        write_out(options, export::MODEL_FILE, header.to_string().as_bytes())?;
        let expected = export::expected(&starts, &reference, &options.batches, options.max_len);
        write_out(options, export::EXPECTED_FILE, expected.to_string().as_bytes())?;
    }
    let (_device, properties) = chapter_common::device_zero()?;
    let device_model = DeviceModel::new(&model)?;
    // Programmatic dependent launch runs on sm_90 and later; below, (d) and its probes are left out.
    let plan = ways::Plan::new(properties.major >= 9);
    let measured = measure::measure(
        &device_model,
        &plan,
        &starts,
        &reference,
        &options.batches,
        options.max_len,
        options.runs,
    )?;
    let mut report = Report::new(NAME);
    let goals = report_figures(options, &measured.rows, &mut report);
    report_checks(options, &measured, margin, &mut report);
    report_notes(&plan, &goals, &properties, &mut report);
    report_data(options, &measured, &reference, margin, &properties, &mut report);
    if options.out.is_some() {
        let text = serde_json::to_string_pretty(&report.to_json()).unwrap_or_default();
        write_out(options, redraw::REPORT_FILE, text.as_bytes())?;
    }
    Ok(report)
}

/// Every way's time per step and tokens per second at every batch, and the goals' headline;
/// returns the goals, judged at the smallest batch.
fn report_figures(options: &Options, rows: &[results::Row], report: &mut Report) -> Vec<results::Goal> {
    for row in rows {
        report.figure(&format!("b{}_{}_us_per_step", row.batch, row.way), row.us_per_step, "us");
        report.figure(&format!("b{}_{}_tokens_per_s", row.batch, row.way), row.tokens_per_s, "tokens/s");
    }
    let smallest = options.batches.iter().copied().min().unwrap_or(1);
    let goals = results::goals(rows, smallest);
    if let Some(ratio) = goals[0].measured {
        report.figure("while_over_graph_per_step", ratio, "x");
    }
    report.figure("smallest_batch", f64::from(smallest), "sequences");
    goals
}

/// The arithmetic's exactness, and every way and probe against the CPU reference.
fn report_checks(options: &Options, measured: &measure::Measured, margin: f64, report: &mut Report) {
    report.check(
        "the arithmetic is exact",
        margin > 1.0,
        format!("every sum fits f32 exactly {margin:.2} times over (see model.rs)"),
    );
    let ways = measured.ways.iter().map(|(w, record)| (w.label(), true, record));
    let probes = measured.probes.iter().map(|(p, record)| (p.label(), p.generates(), record));
    for (label, tokens, record) in ways.chain(probes) {
        let (name, checked) = if tokens {
            (
                format!("{label} equals the CPU reference token for token"),
                format!(
                    "every token, the step count, and each token's probability within {PROB_TOLERANCE:e}"
                ),
            )
        } else {
            (format!("{label} runs the generation's steps"), "the step count".to_string())
        };
        report.check(
            &name,
            record.mismatch.is_none(),
            record.mismatch.clone().unwrap_or_else(|| {
                format!("{} generations (batches {:?}): {checked}", record.generations, options.batches)
            }),
        );
    }
}

/// The device, the goals' verdicts, what did not run, where PyTorch's figures come from.
fn report_notes(
    plan: &ways::Plan, goals: &[results::Goal], properties: &cuda_graph::DeviceProperties,
    report: &mut Report,
) {
    report.note(chapter_common::device_note(properties));
    for goal in goals {
        report.note(goal.line());
    }
    if !plan.ways.contains(&Way::WhilePdl) {
        report.note(format!(
            "(d) and the profile's programmatic chains not run: the device is sm_{}{}, programmatic dependent \
             launch needs sm_90",
            properties.major, properties.minor
        ));
    }
    report.note("PyTorch's figures come from torch_twin.py, run right after (see README.md)");
}

/// The rows with every run, the profile, the model's shape and the sequences' lengths.
fn report_data(
    options: &Options, measured: &measure::Measured, reference: &Generation, margin: f64,
    properties: &cuda_graph::DeviceProperties, report: &mut Report,
) {
    let lengths: Vec<usize> = reference.tokens.iter().map(Vec::len).collect();
    report.data("device", json!(properties.name));
    report.data("rows", json!(measured.row_json));
    report.data("profile", json!(measured.profile));
    report.data(
        "model",
        json!({
            "hidden": model::HIDDEN, "vocab": model::VOCAB, "layers": model::LAYERS,
            "end_bias": options.end_bias, "max_len": options.max_len, "seed": options.seed,
            "exactness_margin": margin,
        }),
    );
    report.data("sequence_lengths", json!(lengths));
}

/// Not a chapter program: the chapter has no generation loop to run.
pub fn book() -> Book<Options> {
    Book::NoListing {
        note: "not a chapter program: the chapter has no generation loop; this example applies its \
               WHILE node and programmatic edges to one",
    }
}

/// The one-line summary, e.g.
/// `WHILE 2.40x per step over the faster host loop of one graph per step at batch 1 (9.50 vs 22.80 us/step)`:
/// (c) against the faster of (b) and (b′).
///
/// ```
/// let mut report = chapter_common::Report::new("generation_loop");
/// report.figure("smallest_batch", 1.0, "sequences");
/// report.figure("b1_while_graph_us_per_step", 9.5, "us");
/// report.figure("b1_graph_per_step_us_per_step", 24.0, "us");
/// report.figure("b1_graph_per_step_mapped_us_per_step", 22.8, "us");
/// report.figure("while_over_graph_per_step", 22.8 / 9.5, "x");
/// assert_eq!(
///     generation_loop::headline(&report),
///     "WHILE 2.40x per step over the faster host loop of one graph per step at batch 1 (9.50 vs 22.80 us/step)"
/// );
/// ```
pub fn headline(report: &Report) -> String {
    let figure = |name: &str| report.figure_value(name).unwrap_or(f64::NAN);
    let batch = figure("smallest_batch");
    let host = [
        format!("b{batch}_graph_per_step_us_per_step"),
        format!("b{batch}_graph_per_step_mapped_us_per_step"),
    ]
    .iter()
    .filter_map(|name| report.figure_value(name))
    .fold(f64::NAN, f64::min);
    format!(
        "WHILE {:.2}x per step over the faster host loop of one graph per step at batch {batch} ({:.2} vs {host:.2} \
         us/step)",
        figure("while_over_graph_per_step"),
        figure(&format!("b{batch}_while_graph_us_per_step")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_quick_are_valid_and_bad_options_are_refused_by_name() {
        assert!(Options::quick().max_len < Options::default().max_len);
        chapter_common::assert_options_checked::<Program>(&[
            ("batches", Options { batches: vec![], ..Options::quick() }),
            ("batches", Options { batches: vec![1, 65], ..Options::quick() }),
            ("max_len", Options { max_len: 0, ..Options::quick() }),
            ("end_bias", Options { end_bias: 100_000, ..Options::quick() }),
            ("runs", Options { runs: 0, ..Options::quick() }),
        ]);
    }

    #[test]
    fn quick_sequences_stop_both_ways_and_batches_are_prefixes() {
        let options = Options::quick();
        let model = Model::generate(options.seed, options.end_bias);
        let starts = Model::start_tokens(4, options.seed);
        let all = reference_generation(&model, &starts, options.max_len);
        // Threads split the work; the result is the sequential one.
        assert_eq!(all, reference::generate(&model, &starts, options.max_len));
        let lengths: Vec<usize> = all.tokens.iter().map(Vec::len).collect();
        assert!(lengths.contains(&(options.max_len as usize)), "{lengths:?}");
        assert!(
            all.tokens.iter().any(|t| t.len() < options.max_len as usize && t.last() == Some(&model::END)),
            "{lengths:?}"
        );
        assert_eq!(Model::start_tokens(1, options.seed)[0], starts[0]);
    }
}
