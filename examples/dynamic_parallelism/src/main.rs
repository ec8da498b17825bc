//! `dynamic_parallelism`: adaptive refinement with CDP2 (a parent kernel launches children
//! only where the field is steep, then a tail-launched reduction) against host-driven
//! refinement, both checked against a CPU model; then the device graph launch the book's
//! program attempts, done so that it runs and checked by its effect on the data. Prints the
//! report (text or `--json`); exits non-zero when a check fails or CUDA reports an error.

use std::process::ExitCode;

use chapter_common::{main_with, CommonArgs};
use clap::Parser;
use dynamic_parallelism::Program;

/// CDP2 adaptive refinement (children launched from the device, counted; tail-launched
/// reduction) vs the host reading the refinement flags and launching the children itself;
/// and a post-processing graph launched from the device, correctly.
#[derive(Debug, Parser)]
#[command(name = "dynamic_parallelism", version)]
struct Cli {
    /// Passes per timed run (default 200, or 10 with --quick).
    #[arg(long, value_name = "N")]
    iters: Option<u32>,
    /// Cells of the field, at most 2000 (default 1024, or 256 with --quick).
    #[arg(long, value_name = "N")]
    cells: Option<u32>,
    /// Points per cell (default 256, or 128 with --quick).
    #[arg(long, value_name = "N")]
    points: Option<u32>,
    /// Sub-samples per refined point (default 64).
    #[arg(long, value_name = "N")]
    refine: Option<u32>,
    /// A cell is refined when its steepest step exceeds this (default 64).
    #[arg(long, value_name = "N")]
    threshold: Option<u32>,
    /// Percentage of cells that hold a front (default 12).
    #[arg(long, value_name = "PCT")]
    front_percent: Option<u32>,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    main_with::<Program>(&cli.common, |options| {
        options.iters = cli.iters.unwrap_or(options.iters);
        options.cells = cli.cells.unwrap_or(options.cells);
        options.points = cli.points.unwrap_or(options.points);
        options.refine = cli.refine.unwrap_or(options.refine);
        options.threshold = cli.threshold.unwrap_or(options.threshold);
        options.front_percent = cli.front_percent.unwrap_or(options.front_percent);
    })
}
