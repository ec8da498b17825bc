//! `kernel_fusion`: times an elementwise chain run unfused, fused and as a graph of the unfused
//! kernels, checks every output against the CPU reference, and prints the report (text or
//! `--json`). Exits non-zero when a check fails or CUDA reports an error.

use std::process::ExitCode;

use chapter_common::{main_with, CommonArgs};
use clap::Parser;
use kernel_fusion::Program;

/// Kernel fusion: each pass `x += sqrt(clamp(x*a + y, lo, hi) + c) * g + b` as six kernels
/// launched one by one, as one fused kernel, and as a graph of the six; time per pass and
/// effective bandwidth of each.
#[derive(Debug, Parser)]
#[command(name = "kernel_fusion", version)]
struct Cli {
    /// Elements per array for the headline figures (default: 33554432, or 1048576 with --quick).
    #[arg(long, value_name = "N")]
    size: Option<u32>,
    /// Passes of the chain per timed run (default: 20, or 5 with --quick).
    #[arg(long, value_name = "N")]
    iters: Option<u32>,
    /// Smaller sizes to time as well, comma-separated (default: 4096,65536,1048576).
    #[arg(long, value_name = "N,N,...", value_delimiter = ',', conflicts_with = "no_sweep")]
    sweep: Option<Vec<u32>>,
    /// Time the headline size only, no sweep.
    #[arg(long)]
    no_sweep: bool,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    main_with::<Program>(&cli.common, |options| {
        options.size = cli.size.unwrap_or(options.size);
        options.iters = cli.iters.unwrap_or(options.iters);
        if let Some(sweep) = cli.sweep {
            options.sweep = sweep;
        }
        if cli.no_sweep {
            options.sweep.clear();
        }
    })
}
