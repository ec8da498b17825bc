//! `cuda_graphs_pipeline`: the chapter's six-stage pipeline launched stage by stage (with
//! per-stage stream-ordered allocations) vs replayed as one graph over memory-pool buffers;
//! checks the outputs against each other and the CPU reference, and prints the report (text or
//! `--json`). Exits non-zero when a check fails or CUDA reports an error.

use std::process::ExitCode;

use chapter_common::{main_with, CommonArgs};
use clap::Parser;
use cuda_graphs_pipeline::Program;

/// A six-stage pipeline of small kernels: per-stage launches over preallocated buffers (the
/// like-for-like baseline of the headline), the same launches with per-stage allocations (an
/// extra baseline), and one captured graph over memory-pool buffers (the optimized program), in
/// ms per iteration.
#[derive(Debug, Parser)]
#[command(name = "cuda_graphs_pipeline", version)]
struct Cli {
    /// Pipeline iterations per timed run, a multiple of --capture-iters (default 10000, or 400
    /// with --quick).
    #[arg(long, value_name = "N")]
    iters: Option<u32>,
    /// Values each stage maps (default 16384).
    #[arg(long, value_name = "N")]
    size: Option<u32>,
    /// Iterations captured into the graph (default 1000, or 100 with --quick).
    #[arg(long, value_name = "N")]
    capture_iters: Option<u32>,
    /// Check the output against the CPU reference (the default; kept for the book's command
    /// line).
    #[arg(long, conflicts_with = "no_verify")]
    verify: bool,
    /// Skip the CPU reference (the three ways are still compared with each other).
    #[arg(long)]
    no_verify: bool,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    main_with::<Program>(&cli.common, |options| {
        options.iters = cli.iters.unwrap_or(options.iters);
        options.size = cli.size.unwrap_or(options.size);
        options.capture_iters = cli.capture_iters.unwrap_or(options.capture_iters);
        options.verify = cli.verify || !cli.no_verify;
    })
}
