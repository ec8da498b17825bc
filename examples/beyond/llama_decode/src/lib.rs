//! `llama_decode`: a Llama-3.2-1B-shaped model's greedy decode loop at batch 1, on the crates.
//!
//! The model ([`config`]): hidden 2048, 16 layers, 32 query and 8 key/value heads of 64, a
//! SwiGLU MLP of 8192, a vocabulary of 128,256, RMSNorm, RoPE (θ = 500,000, Llama 3's
//! frequency scaling), the embedding tied to the LM head. Its bf16 weights are generated on the
//! GPU from the seed by an integer hash ([`weights`]) that the CPU reference
//! ([`reference`](mod@reference)) and the PyTorch twin (`torch_twin.py`) reproduce bit for
//! bit. Activations and sums are fp32, the KV cache bf16.
//!
//! A step is 82 kernels of `kernels/llama.cu` (five per layer, the LM head, the pick); the
//! position, the next token and the step count live on the device, so one graph serves every
//! step. The prompt is fed one token at a time through the same step (untimed), then N decode
//! steps are timed four ways ([`ways`]): (a) stream launches from a host loop, (b) one graph per
//! step from a host loop, (c) the whole generation as one graph launch (a WHILE node), (d) as
//! (c) with programmatic edges. Figures are event time / N, medians over `runs`. A profile
//! ([`profile`]) splits a step into the kernels' own time, the gaps and the loop's control.
//!
//! Checks: the GPU's weights against the CPU hash; each kernel against the CPU reference on the
//! GPU's own inputs ([`checks`]); every way's tokens equal to the others'; at the tiny size
//! (`--quick`), the tokens and first-step logits against the CPU reference model.

#![warn(missing_docs)]

mod program;

pub use program::Program;

pub mod chart;
pub mod checks;
pub mod config;
pub mod device;
pub mod graphs;
pub mod output;
pub mod profile;
pub mod reference;
pub mod ways;
pub mod weights;

use std::path::PathBuf;

use chapter_common::{Book, ExampleError, OptionCheck, Report, Samples};
use serde_json::json;

use config::Config;
use device::DeviceModel;
use reference::{Reference, Weights, LOGIT_TOLERANCE};
use ways::Runner;

/// The program's name.
pub const NAME: &str = "llama_decode";

/// Tokens of the prompt.
pub const PROMPT_LEN: usize = 8;

/// The most blocks per SM `--blocks-per-sm` and `--lm-head-blocks-per-sm` take (an SM holds at
/// most 32 blocks).
pub const MAX_BLOCKS_PER_SM: usize = 32;

/// Steps per WHILE iteration in (c) and (d) by default: the most, so that the loop's cost per
/// iteration (a few µs) is paid once per 16 steps.
pub const STEPS_PER_ITERATION: usize = 16;

/// Steps per WHILE iteration at most (a body of 16 steps is 1,312 kernel nodes).
pub const MAX_STEPS_PER_ITERATION: usize = 16;

/// Launches per kernel in the profile's kernels-alone timing.
pub const PROFILE_REPEATS: usize = 20;

/// What to run; the fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct Options {
    /// Tokens to generate after the prompt (the decode steps timed; default 256, 32 with --quick).
    #[arg(long, value_name = "N")]
    pub tokens: usize,
    /// Run the tiny model (hidden 256, 2 layers) instead of Llama-3.2-1B's shapes: what
    /// `--quick` runs (not a flag of its own: a flag's default would undo `--quick`'s choice).
    #[arg(skip)]
    pub tiny: bool,
    /// Write the report (JSON), the table (CSV, markdown) and the dump for the twin into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write the prompt, the generated tokens and the first step's logits (JSON) to FILE, for
    /// torch_twin.py (default: DIR/dump.json with --out).
    #[arg(long, value_name = "FILE")]
    pub dump: Option<PathBuf>,
    /// The GPU's peak memory bandwidth in GB/s for the "% of peak" column (default: 4800 on an
    /// H200, 3350 on an H100, none otherwise).
    #[arg(long, value_name = "GB/S")]
    pub peak_gbs: Option<f64>,
    /// Blocks per SM at most of the gate/up, down and O projection GEMVs (1 to 32, default 2):
    /// more than fit an SM at once run as a second wave.
    #[arg(long, value_name = "N")]
    pub blocks_per_sm: usize,
    /// Blocks per SM at most of the LM head (1 to 32, default 4).
    #[arg(long, value_name = "N")]
    pub lm_head_blocks_per_sm: usize,
    /// 1 (default): gate/up and down as the pipelined kernels (a warp's next row in flight while
    /// it computes on the current one); 0: the plain ones (the next row's loads after the dot
    /// product).
    #[arg(long, value_name = "0|1")]
    pub pipelined_gemv: usize,
    /// Steps per WHILE iteration in (c) and (d) (1 to 16, default 16): the body is that many
    /// steps in one chain, and a loop of one step runs what is left over.
    #[arg(long, value_name = "N")]
    pub steps_per_iteration: usize,
    /// Timed runs after one warm-up; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the weights and the prompt.
    #[arg(skip)]
    pub seed: u64,
}

impl Default for Options {
    /// Llama-3.2-1B's shapes, 256 tokens, 5 runs.
    fn default() -> Options {
        Options {
            tokens: 256,
            tiny: false,
            out: None,
            dump: None,
            peak_gbs: None,
            blocks_per_sm: device::BLOCKS_PER_SM,
            lm_head_blocks_per_sm: device::LM_HEAD_BLOCKS_PER_SM,
            pipelined_gemv: 1,
            steps_per_iteration: STEPS_PER_ITERATION,
            runs: 5,
            seed: 0x5eed,
        }
    }
}

impl Options {
    /// The tiny model, 32 tokens, two runs (for tests and `--quick`).
    pub fn quick() -> Options {
        Options { tokens: 32, tiny: true, runs: 2, ..Options::default() }
    }

    /// The model's shape.
    pub fn config(&self) -> Config {
        if self.tiny {
            Config::tiny()
        } else {
            Config::llama_3_2_1b()
        }
    }

    /// The GEMVs' grids on a device of `sms` SMs.
    pub fn grid(&self, sms: usize) -> device::Grid {
        device::Grid {
            sms,
            blocks_per_sm: self.blocks_per_sm,
            lm_head_blocks_per_sm: self.lm_head_blocks_per_sm,
            pipelined: self.pipelined_gemv == 1,
        }
    }

    /// Refuses what the kernels cannot run, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        let config = self.config();
        let room = config.max_seq - PROMPT_LEN;
        OptionCheck::new(NAME)
            .within("tokens", self.tokens, 1..=room)
            .at_least("runs", self.runs, 1)
            .within("blocks_per_sm", self.blocks_per_sm, 1..=MAX_BLOCKS_PER_SM)
            .within("lm_head_blocks_per_sm", self.lm_head_blocks_per_sm, 1..=MAX_BLOCKS_PER_SM)
            .within("pipelined_gemv", self.pipelined_gemv, 0..=1)
            .within("steps_per_iteration", self.steps_per_iteration, 1..=MAX_STEPS_PER_ITERATION)
            .rule("peak_gbs", self.peak_gbs.is_none_or(|p| p > 0.0), || {
                "peak_gbs must be positive".to_string()
            })
            .done()
    }
}

/// The prompt: [`PROMPT_LEN`] tokens from the seed's hash (tensor id 3).
///
/// ```
/// let config = llama_decode::config::Config::tiny();
/// let prompt = llama_decode::prompt(&config, 0x5eed);
/// assert_eq!(prompt.len(), llama_decode::PROMPT_LEN);
/// assert!(prompt.iter().all(|&t| (t as usize) < config.vocab));
/// ```
pub fn prompt(config: &Config, seed: u64) -> Vec<u32> {
    let s = weights::seed32(seed);
    (0..PROMPT_LEN as u32).map(|i| weights::hash(s, 3, i) % config.vocab as u32).collect()
}

/// The peak bandwidth in GB/s of a GPU by name, where known.
///
/// ```
/// assert_eq!(llama_decode::peak_gbs("NVIDIA H200"), Some(4800.0));
/// assert_eq!(llama_decode::peak_gbs("NVIDIA GeForce RTX 4090"), None);
/// ```
pub fn peak_gbs(name: &str) -> Option<f64> {
    if name.contains("H200") {
        Some(4800.0)
    } else if name.contains("H100") {
        Some(3350.0)
    } else {
        None
    }
}

/// How the generated tokens compare with the CPU reference's: equal up to a step, then (if
/// they differ) whether the reference's own margin there was within the logit tolerance.
fn against_reference(got: &[u32], want: &reference::Generated) -> (bool, String) {
    match got.iter().zip(&want.tokens).position(|(g, w)| g != w) {
        None if got.len() == want.tokens.len() => (true, format!("all {} tokens equal", got.len())),
        None => (false, format!("{} tokens, want {}", got.len(), want.tokens.len())),
        Some(step) => {
            let logits = &want.logits[step];
            let gap = logits[want.tokens[step] as usize] - logits[got[step] as usize];
            let held = gap <= LOGIT_TOLERANCE;
            (
                held,
                format!(
                    "equal for {step} steps; at step {step} token {} vs the reference's {} whose logits differ by \
                     {gap:.2e} (a near tie: {})",
                    got[step],
                    want.tokens[step],
                    if held { "within the tolerance, allowed" } else { "NOT within the tolerance" }
                ),
            )
        }
    }
}

/// Runs the checks, the four ways and the profile on device 0, and reports them.
///
/// Errors are CUDA's, invalid options, or a failed write of `out`; a failed comparison is not
/// an error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    let config = options.config();
    let prompt = prompt(&config, options.seed);
    let (_device, properties) = chapter_common::device_zero()?;
    let programmatic = properties.major >= 9;
    let grid = options.grid(properties.multiprocessors.max(1) as usize);
    let model = DeviceModel::new(&config, options.seed)?;
    let mut report = Report::new(NAME);

    // The weights and each kernel against the CPU.
    let weights = checks::check_weights(&model, options.seed)?;
    report.check(&weights.name, weights.held, weights.detail);
    let mut runner =
        Runner::new(&model, grid, &prompt, options.tokens, options.steps_per_iteration as u32, programmatic)?;
    let stream = cuda_graph::Stream::new()?;
    let mut probe = device::Decoder::new(&config, grid, &prompt, options.tokens)?;
    for check in checks::check_kernels(&model, &mut probe, &stream)? {
        report.check(&check.name, check.held, check.detail);
    }
    let ties = checks::check_argmax_ties(&model, &mut probe, &stream)?;
    report.check(&ties.name, ties.held, ties.detail);
    drop(probe);

    // The first step's logits (for the twin, and the reference at the tiny size).
    runner.time_after_prefill(&model, |r| {
        r.decoder().step(&model, device::Pick::Host, &mut device::OnStream(r.stream()))
    })?;
    let first_logits = runner.decoder().logits()?;

    // The ways in rounds, one run of each a round: in the plan's order in even rounds and the
    // reverse in odd ones, so that no way always runs first and run i of two ways is a pair.
    let plan = ways::plan(programmatic);
    let mut us = vec![Samples::default(); plan.len()];
    let mut tokens: Vec<Option<Vec<u32>>> = vec![None; plan.len()];
    let mut mismatches: Vec<Option<String>> = vec![None; plan.len()];
    for run in 0..=options.runs {
        for index in round_order(plan.len(), run) {
            let way = plan[index];
            let timed = runner.run(&model, way)?;
            if run > 0 {
                us[index].push(timed.ms * 1e3 / options.tokens as f64);
            }
            let problem = if timed.steps as usize != options.tokens || timed.tokens.len() != options.tokens {
                Some(format!(
                    "run {run}: {} steps and {} tokens, want {}",
                    timed.steps,
                    timed.tokens.len(),
                    options.tokens
                ))
            } else if let Some(first) = tokens[0].as_ref().filter(|_| index > 0) {
                first.iter().zip(&timed.tokens).position(|(a, b)| a != b).map(|step| {
                    format!(
                        "run {run}: token {step} is {} where (a) generated {}",
                        timed.tokens[step], first[step]
                    )
                })
            } else {
                None
            };
            if mismatches[index].is_none() {
                mismatches[index] = problem;
            }
            tokens[index].get_or_insert(timed.tokens);
        }
    }
    for (index, &way) in plan.iter().enumerate() {
        let name = if index == 0 {
            format!("{} generates {} tokens in {} steps", way.label(), options.tokens, options.tokens)
        } else {
            format!("{} generates the same tokens as (a)", way.label())
        };
        let detail =
            mismatches[index].clone().unwrap_or_else(|| format!("{} runs, every token", options.runs + 1));
        report.check(&name, mismatches[index].is_none(), detail);
    }
    let generated = tokens[0].clone().unwrap_or_default();

    // The CPU reference model at the tiny size.
    if options.tiny {
        let want = Reference::new(Weights::generate(&config, options.seed)).generate(&prompt, options.tokens);
        let (held, detail) = against_reference(&generated, &want);
        report.check("the tokens equal the CPU reference model's", held, detail);
        let gap = first_logits.iter().zip(&want.logits[0]).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        report.check(
            "the first step's logits are within the tolerance of the CPU reference's",
            gap <= LOGIT_TOLERANCE,
            format!(
                "largest difference {gap:.3e}, tolerance {LOGIT_TOLERANCE:e} (fp32 sums in other orders)"
            ),
        );
    }

    // The profile.
    let profile =
        profile::measure(&model, &mut runner, options.tokens, programmatic, options.runs, PROFILE_REPEATS)?;
    report.check(
        "the profile's empty WHILE loop runs the generation's steps",
        profile.empty_while_counted as usize == options.tokens,
        format!("{} iterations, want {}", profile.empty_while_counted, options.tokens),
    );

    // Figures, table, notes.
    let peak = options.peak_gbs.or_else(|| peak_gbs(&properties.name));
    let rows = output::rows(&config, &plan, &us, options.tokens, peak);
    for row in &rows {
        report.figure(&format!("{}_us_per_step", row.way), row.us_per_step, "us");
        report.figure(&format!("{}_tokens_per_s", row.way), row.tokens_per_s, "tokens/s");
        report.figure(&format!("{}_gb_per_s", row.way), row.gb_per_s, "GB/s");
        if let Some(pct) = row.pct_peak {
            report.figure(&format!("{}_pct_of_peak", row.way), pct, "%");
        }
    }
    report.figure("kernels_us_per_step", profile.kernels_us, "us");
    report.figure("kernels_first_position_us_per_step", profile.kernels_first_us, "us");
    report.figure("empty_while_us_per_iteration", profile.empty_while_us, "us");
    report.figure("chain_plain_us_per_step", profile.chain_us, "us");
    if let Some(us) = profile.chain_pdl_us {
        report.figure("chain_pdl_us_per_step", us, "us");
    }
    report.note(chapter_common::device_note(&properties));
    for line in output::goal_lines(&rows) {
        report.note(line);
    }
    if !programmatic {
        report.note(format!(
            "(d) not run and (b)'s step graph has plain edges: the device is sm_{}{}, programmatic dependent launch needs sm_90",
            properties.major, properties.minor
        ));
    }
    report.note("PyTorch's figures and the agreement with it come from torch_twin.py, run right after (see README.md)");
    let table = output::markdown(&rows, &profile, &properties.name, peak, grid, options.steps_per_iteration);
    report.note(format!("table:\n{table}"));
    report.data("device", json!(properties.name));
    report.data("config", output::config_json(&config, options));
    report.data("rows", json!(rows.iter().map(output::Row::to_json).collect::<Vec<_>>()));
    report.data("us_runs", json!(us.iter().map(|s| s.0.clone()).collect::<Vec<_>>()));
    report.data("profile", profile.to_json());
    report.data("tokens", json!(generated));

    let dump = json!({
        "config": output::config_json(&config, options),
        "prompt": prompt,
        "tokens": generated,
        "first_logits": first_logits,
    });
    let dump_path =
        options.dump.clone().or_else(|| options.out.as_ref().map(|dir| dir.join(output::DUMP_FILE)));
    if let Some(path) = dump_path {
        output::write(&path, dump.to_string().as_bytes()).map_err(|p| ExampleError::check(NAME, p))?;
    }
    if let Some(dir) = &options.out {
        output::write_results(dir, &report, &rows, &table).map_err(|p| ExampleError::check(NAME, p))?;
    }
    Ok(report)
}

/// The order of the ways' indices in round `run`: `0..ways` in even rounds, reversed in odd.
///
/// ```
/// assert_eq!(llama_decode::round_order(4, 0), [0, 1, 2, 3]);
/// assert_eq!(llama_decode::round_order(4, 1), [3, 2, 1, 0]);
/// ```
pub fn round_order(ways: usize, run: usize) -> Vec<usize> {
    if run.is_multiple_of(2) {
        (0..ways).collect()
    } else {
        (0..ways).rev().collect()
    }
}

/// Not a chapter program.
pub fn book() -> Book<Options> {
    Book::NoListing { note: "not a chapter program: a real model's decode loop on the crates" }
}

/// The one-line summary, e.g. `(d) 700.0 us/step (1428.6 tokens/s), 1.10x faster than (b)`.
///
/// ```
/// let mut report = chapter_common::Report::new("llama_decode");
/// report.figure("while_pdl_us_per_step", 700.0, "us");
/// report.figure("while_pdl_tokens_per_s", 1e6 / 700.0, "tokens/s");
/// report.figure("graph_per_step_us_per_step", 770.0, "us");
/// assert_eq!(llama_decode::headline(&report), "(d) 700.0 us/step (1428.6 tokens/s), 1.10x faster than (b)");
/// ```
pub fn headline(report: &Report) -> String {
    let f = |name: &str| report.figure_value(name);
    match (f("while_pdl_us_per_step"), f("while_graph_us_per_step")) {
        (Some(d), _) => format!(
            "(d) {d:.1} us/step ({:.1} tokens/s), {:.2}x faster than (b)",
            f("while_pdl_tokens_per_s").unwrap_or(f64::NAN),
            f("graph_per_step_us_per_step").unwrap_or(f64::NAN) / d
        ),
        (None, Some(c)) => format!("(c) {c:.1} us/step, (d) not run"),
        _ => "no figures".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked() {
        chapter_common::assert_options_checked::<Program>(&[
            ("tokens", Options { tokens: 0, ..Options::quick() }),
            ("tokens", Options { tokens: 57, ..Options::quick() }),
            ("tokens", Options { tokens: 505, ..Options::default() }),
            ("peak_gbs", Options { peak_gbs: Some(0.0), ..Options::quick() }),
            ("blocks_per_sm", Options { blocks_per_sm: 0, ..Options::quick() }),
            ("lm_head_blocks_per_sm", Options { lm_head_blocks_per_sm: 33, ..Options::quick() }),
            ("pipelined_gemv", Options { pipelined_gemv: 2, ..Options::quick() }),
            ("steps_per_iteration", Options { steps_per_iteration: 0, ..Options::quick() }),
            ("steps_per_iteration", Options { steps_per_iteration: 17, ..Options::quick() }),
        ]);
    }

    #[test]
    fn flags_out_of_range_are_refused() {
        chapter_common::assert_flags_refused::<Program>(&[
            "--tokens=0",
            "--tokens=57",
            "--peak-gbs=0",
            "--blocks-per-sm=0",
            "--lm-head-blocks-per-sm=33",
            "--pipelined-gemv=2",
            "--steps-per-iteration=0",
            "--steps-per-iteration=17",
        ]);
    }

    #[test]
    fn a_near_tie_is_allowed_and_a_clear_difference_is_not() {
        let want = reference::Generated {
            tokens: vec![1, 2],
            logits: vec![vec![0.0, 1.0, 0.5], vec![0.0, 1.0, 2.0]],
        };
        assert!(against_reference(&[1, 2], &want).0);
        assert!(!against_reference(&[1, 1], &want).0);
        let tie = reference::Generated { tokens: vec![1], logits: vec![vec![1.0 - 1e-4, 1.0]] };
        assert!(against_reference(&[0], &tie).0);
    }
}
