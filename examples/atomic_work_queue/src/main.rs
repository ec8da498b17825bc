//! `atomic_work_queue`: times static vs dynamic (atomic-counter) assignment of irregular work,
//! checks every output against the CPU reference, and prints the report (text or `--json`).
//! Exits non-zero when a check fails or CUDA reports an error.

use std::process::ExitCode;

use atomic_work_queue::Program;
use chapter_common::{main_with, CommonArgs};
use clap::Parser;

/// Static vs dynamic assignment of irregular work: a global atomic counter per thread, per warp
/// (leader claims a batch, `__shfl_sync` broadcasts), per block then per warp, and a batch-size
/// sweep.
#[derive(Debug, Parser)]
#[command(name = "atomic_work_queue", version)]
struct Cli {
    /// Work items (default: 4194304, or 65536 with --quick).
    #[arg(long, value_name = "N")]
    items: Option<u32>,
    /// How many times costlier the items of a hot span are (1: uniform work).
    #[arg(long, value_name = "X")]
    heavy_factor: Option<u32>,
    /// Skip the uniform-cost control (the same items with heavy factor 1).
    #[arg(long)]
    no_uniform_control: bool,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    main_with::<Program>(&cli.common, |options| {
        options.items = cli.items.unwrap_or(options.items);
        options.heavy_factor = cli.heavy_factor.unwrap_or(options.heavy_factor);
        if cli.no_uniform_control {
            options.uniform_control = false;
        }
    })
}
