//! `llama_decode`: a Llama-3.2-1B-shaped model's greedy decode loop at batch 1, four ways
//! (stream launches, one graph per step, one WHILE graph launch, the same with programmatic
//! edges), with a profile; each kernel checked against a CPU reference, every way's tokens
//! against the others'. Prints the report (text or `--json`); exits non-zero when a check
//! fails or CUDA reports an error.
//!
//! Flags: the `#[arg(long)]` fields of [`llama_decode::Options`] and the common ones
//! (`--quick`: the tiny model, `--runs`, `--seed`, `--json`).

use std::process::ExitCode;

use llama_decode::Program;

/// The first line of `--help`.
const ABOUT: &str =
    "A Llama-3.2-1B-shaped model's greedy decode loop at batch 1: stream launches, one graph \
                     per step, one WHILE graph launch, and the same with programmatic edges, each kernel \
                     checked against a CPU reference, with a profile of where a step's time goes.";

fn main() -> ExitCode {
    chapter_common::main_with_extra_flags::<Program, chapter_common::NoExtraFlags>(ABOUT, |_, _| {})
}
