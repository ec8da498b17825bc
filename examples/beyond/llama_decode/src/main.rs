//! `llama_decode`: a Llama-3.2-1B-shaped model's greedy decode loop at batch 1, four ways
//! (stream launches, one graph per step, one WHILE graph launch, the same with programmatic
//! edges), with a profile; each kernel checked against a CPU reference, every way's tokens
//! against the others'. Prints the report (text or `--json`); exits non-zero when a check
//! fails or CUDA reports an error.
//!
//! `--chart DIR` runs nothing and draws `DIR/llama_decode.png` from a run's outputs (no GPU).
//!
//! Flags: the `#[arg(long)]` fields of [`llama_decode::Options`], `--chart`, and the common ones
//! (`--quick`: the tiny model, `--runs`, `--seed`, `--json`).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use llama_decode::Program;

/// The first line of `--help`.
const ABOUT: &str =
    "A Llama-3.2-1B-shaped model's greedy decode loop at batch 1: stream launches, one graph \
                     per step, one WHILE graph launch, and the same with programmatic edges, each kernel \
                     checked against a CPU reference, with a profile of where a step's time goes.";

/// The flag that runs nothing but the drawing.
#[derive(Debug, clap::Args)]
struct Chart {
    /// Run nothing: draw DIR/llama_decode.png from DIR/llama_decode.json and DIR/torch.json (no
    /// GPU needed).
    #[arg(long, value_name = "DIR")]
    chart: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let Some(dir) = chapter_common::flag_value(&args, "--chart") else {
        // Without --chart the flag is only listed by --help.
        return chapter_common::main_with_extra_flags::<Program, Chart>(ABOUT, |_, _| {});
    };
    match llama_decode::chart::chart(&dir) {
        Ok(drawn) => {
            print!("{drawn}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("llama_decode: {err}");
            ExitCode::FAILURE
        }
    }
}
