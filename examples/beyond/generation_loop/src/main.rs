//! `generation_loop`: greedy generation with a small GRU decoder, batched, every sequence
//! stopping at its own end token, run four ways (host loop of launches, host loop of one graph
//! per step, one graph launch with a WHILE node, the same with programmatic edges), each
//! checked token for token against a CPU reference; prints the report (text or `--json`). With
//! `--out DIR` it also writes what the PyTorch twin reads; `--redraw DIR` draws the chart and
//! the table from a run's outputs, without a GPU. Exits non-zero when a check fails or CUDA
//! reports an error.
//!
//! Flags: the `#[arg(long)]` fields of [`generation_loop::Options`], `--redraw`, and the common
//! ones.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use generation_loop::Program;

/// The first line of `--help`.
const ABOUT: &str = "Greedy generation with a small GRU decoder: a host loop of launches, a host loop \
                     of one graph per step, one WHILE graph launch, and the same with programmatic \
                     edges, each checked token for token against a CPU reference, with a profile of \
                     where a step's time goes.";

/// The flag that runs nothing but the drawing.
#[derive(Debug, clap::Args)]
struct Redraw {
    /// Run nothing: draw DIR/generation_loop.png and write DIR/README.md from
    /// DIR/generation.json and DIR/torch.json (no GPU needed).
    #[arg(long, value_name = "DIR")]
    redraw: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let Some(dir) = chapter_common::flag_value(&args, "--redraw") else {
        // Without --redraw the flag is only listed by --help.
        return chapter_common::main_with_extra_flags::<Program, Redraw>(ABOUT, |_, _| {});
    };
    match generation_loop::redraw::redraw(&dir) {
        Ok(summary) => {
            print!("{summary}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("generation_loop: {err}");
            ExitCode::FAILURE
        }
    }
}
