//! `cuda_graphs`: times a chain of small dependent kernels launched one by one on a stream
//! against the same chain captured once into a CUDA graph and replayed, then changes the
//! graph per node and as a whole; checks every output against the CPU reference and prints
//! the report (text or `--json`). Exits non-zero when a check fails or CUDA reports an error.

use std::process::ExitCode;

use chapter_common::{main_with, CommonArgs};
use clap::Parser;
use cuda_graphs::Program;

/// Stream launches vs graph replay of the same kernel chain, and graph updates
/// (`cudaGraphExecKernelNodeSetParams`, `cudaGraphExecUpdate`).
#[derive(Debug, Parser)]
#[command(name = "cuda_graphs", version)]
struct Cli {
    /// Elements each kernel processes (default: 4096, or 1000 with --quick).
    #[arg(long, value_name = "N")]
    size: Option<u32>,
    /// Kernels in the chain (default: 20, or 6 with --quick).
    #[arg(long, value_name = "K")]
    kernels: Option<u32>,
    /// Iterations of the whole chain per timed run (default: 1000, or 20 with --quick).
    #[arg(long, value_name = "N")]
    iters: Option<u32>,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    main_with::<Program>(&cli.common, |options| {
        options.elements = cli.size.unwrap_or(options.elements);
        options.kernels = cli.kernels.unwrap_or(options.kernels);
        options.iters = cli.iters.unwrap_or(options.iters);
    })
}
