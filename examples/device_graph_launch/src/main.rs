//! `device_graph_launch`: a work graph of 1 to 64 nodes launched once per iteration from the
//! host (launch + synchronize) or from a self-relaunching scheduler kernel (fire-and-forget,
//! tail, sibling), every iteration checked; then each device-launch limit hit on purpose and
//! reported as an error. Prints the report (text or `--json`); exits non-zero when a check
//! fails or CUDA reports an error.

use std::process::ExitCode;

use chapter_common::CommonArgs;
use clap::Parser;
use device_graph_launch::{run, Options};

/// Device graph launch (fire-and-forget, tail, sibling, self-relaunch) vs host launch with a
/// sync per iteration, by graph width; the 120 fire-and-forget and 255 tail-launch limits and
/// the one-pending-launch rule hit on purpose.
#[derive(Debug, Parser)]
#[command(name = "device_graph_launch", version)]
struct Cli {
    /// Iterations per timed run (default 1000, or 50 with --quick).
    #[arg(long, value_name = "N")]
    iters: Option<u32>,
    /// Work-graph widths, comma-separated (default 1,8,32,64).
    #[arg(long, value_name = "W,...", value_delimiter = ',')]
    widths: Option<Vec<u32>>,
    /// Small sizes: a quick correctness pass, not for figures.
    #[arg(long)]
    quick: bool,
    /// Leave out the modes whose scheduler spin-waits for the work graph (sibling,
    /// fire_and_forget_batched): under compute-sanitizer memcheck they only wait out timeouts.
    #[arg(long)]
    no_spin: bool,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut options = if cli.quick { Options::quick() } else { Options::default() };
    options.iters = cli.iters.unwrap_or(options.iters);
    options.widths = cli.widths.unwrap_or(options.widths);
    options.runs = cli.common.runs;
    options.seed = cli.common.seed;
    if cli.no_spin {
        options = options.without_spinning_modes();
    }
    match run(&options) {
        Ok(report) => report.finish(cli.common.json),
        Err(err) => {
            eprintln!("device_graph_launch: {err}");
            ExitCode::FAILURE
        }
    }
}
