//! `device_graph_launch`: a work graph of 1 to 64 nodes launched once per iteration from the
//! host (launch + synchronize) or from a self-relaunching scheduler kernel (fire-and-forget,
//! tail, sibling), every iteration checked; then each device-launch limit hit on purpose and
//! reported as an error. Prints the report (text or `--json`); exits non-zero when a check
//! fails or CUDA reports an error.

use std::process::ExitCode;

use chapter_common::{main_with, CommonArgs};
use clap::Parser;
use device_graph_launch::Program;

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
    /// Leave out the modes whose scheduler spin-waits for the work graph (sibling,
    /// fire_and_forget_batched): under compute-sanitizer memcheck they only wait out timeouts.
    #[arg(long)]
    no_spin: bool,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    main_with::<Program>(&cli.common, |options| {
        options.iters = cli.iters.unwrap_or(options.iters);
        if let Some(value) = cli.widths {
            options.widths = value;
        }
        if cli.no_spin {
            *options = options.clone().without_spinning_modes();
        }
    })
}
