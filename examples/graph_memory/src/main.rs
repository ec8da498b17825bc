//! `graph_memory`: a pipeline's scratch memory preallocated, allocated by graph memory nodes,
//! and taken from a stream-ordered pool; times each, reports peak memory and whether memory
//! grows with replays, checks every output against the CPU reference, and prints the report
//! (text or `--json`). Exits non-zero when a check fails or CUDA reports an error.

use std::process::ExitCode;

use chapter_common::{main_with, CommonArgs};
use clap::Parser;
use graph_memory::Program;

/// Graph memory: scratch buffers of a K-stage pipeline preallocated (graph over them), as
/// alloc/free nodes inside the graph (reused across replays, and within the graph), and from a
/// stream-ordered memory pool; peak memory, time per pass, no growth after many replays.
#[derive(Debug, Parser)]
#[command(name = "graph_memory", version)]
struct Cli {
    /// Elements per buffer (default: 4194304, or 65536 with --quick).
    #[arg(long, value_name = "N")]
    size: Option<u32>,
    /// Stages of the pipeline, 2 to 16; it has one scratch buffer fewer (default: 6, or 4 with --quick).
    #[arg(long, value_name = "K")]
    stages: Option<u32>,
    /// Passes (graph replays) per timed run (default: 50, or 5 with --quick).
    #[arg(long, value_name = "N")]
    iters: Option<u32>,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    main_with::<Program>(&cli.common, |options| {
        options.size = cli.size.unwrap_or(options.size);
        options.stages = cli.stages.unwrap_or(options.stages);
        options.iters = cli.iters.unwrap_or(options.iters);
    })
}
