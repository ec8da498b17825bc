//! `generation_loop`: greedy generation with a small GRU decoder, batched, every sequence
//! stopping at its own end token, run four ways (host loop of launches, host loop of one graph
//! per step, one graph launch with a WHILE node; programmatic edges to come), each checked token
//! for token against a CPU reference; prints the report (text or `--json`). With `--out DIR` it
//! also writes what the PyTorch twin reads; `--redraw DIR` draws the chart and the table from
//! a run's outputs, without a GPU. Exits non-zero when a check fails or CUDA reports an error.

use std::path::PathBuf;
use std::process::ExitCode;

use chapter_common::{main_with, CommonArgs};
use clap::Parser;
use generation_loop::Program;

/// A generation loop four ways: host launches, one graph per step, one WHILE graph launch.
#[derive(Debug, Parser)]
#[command(name = "generation_loop", version)]
struct Cli {
    /// Batch sizes, comma-separated, each 1..=64 (default 1,4,16,64, or 1,4 with --quick).
    #[arg(long, value_name = "B,B,...", value_delimiter = ',')]
    batches: Option<Vec<u32>>,
    /// The most tokens a sequence generates (default 256, or 64 with --quick).
    #[arg(long, value_name = "N")]
    max_len: Option<u32>,
    /// The end token's extra bias in units of 1/1024; larger stops sooner (default 240).
    #[arg(long, value_name = "UNITS", allow_hyphen_values = true)]
    end_bias: Option<i32>,
    /// Write the weights, the expected tokens and the report (JSON) here, for torch_twin.py.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Run nothing: draw DIR/generation_loop.png and DIR/README.md from DIR/generation.json and
    /// DIR/torch.json (no GPU needed).
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    redraw: Option<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(dir) = &cli.redraw {
        return match generation_loop::redraw::redraw(dir) {
            Ok(summary) => {
                print!("{summary}");
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("generation_loop: {err}");
                ExitCode::FAILURE
            }
        };
    }
    main_with::<Program>(&cli.common, |options| {
        options.batches = cli.batches.clone().unwrap_or(options.batches.clone());
        options.max_len = cli.max_len.unwrap_or(options.max_len);
        options.end_bias = cli.end_bias.unwrap_or(options.end_bias);
        options.out = cli.out.clone();
    })
}
