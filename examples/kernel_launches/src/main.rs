//! `kernel_launches`: times many tiny kernel launches on a stream against one graph of the
//! same kernels (and graphs of fewer nodes launched more often), checks that every launch ran
//! once and in order, and prints the report (text or `--json`). Exits non-zero when a check
//! fails or CUDA reports an error.

use std::process::ExitCode;

use chapter_common::{main_with, CommonArgs};
use clap::Parser;
use kernel_launches::Program;

/// Many tiny launches vs one graph of the same kernels: µs per kernel each way, and by graph
/// size.
#[derive(Debug, Parser)]
#[command(name = "kernel_launches", version)]
struct Cli {
    /// Tiny kernels per iteration, and nodes of the main graph (default: 1000, or 50 with
    /// --quick).
    #[arg(long, value_name = "K")]
    kernels: Option<u32>,
    /// Iterations per timed run (default: 20, or 4 with --quick).
    #[arg(long, value_name = "N")]
    iters: Option<u32>,
    /// Smaller graph sizes to compare, comma-separated (default: 1,10,100, or 1,10 with --quick).
    #[arg(long, value_name = "SIZES", value_delimiter = ',')]
    sweep: Option<Vec<u32>>,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    main_with::<Program>(&cli.common, |options| {
        options.kernels = cli.kernels.unwrap_or(options.kernels);
        options.iters = cli.iters.unwrap_or(options.iters);
        if let Some(sweep) = cli.sweep {
            options.sweep = sweep;
        } else {
            // Keep the default sweep valid when --kernels is smaller than some of its sizes.
            let kernels = options.kernels;
            options.sweep.retain(|&size| size <= kernels);
        }
    })
}
