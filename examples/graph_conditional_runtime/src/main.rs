//! `graph_conditional_runtime`: a data-dependent branch per iteration, decided on the host
//! (sync, read the flag, launch the chosen kernel) or by an IF/ELSE conditional node on the
//! device; both checked against a CPU model and timed. Prints the report (text or `--json`);
//! exits non-zero when a check fails or CUDA reports an error.

use std::process::ExitCode;

use chapter_common::{main_with, CommonArgs};
use clap::Parser;
use graph_conditional_runtime::Program;

/// Host-side branching (launch the predicate, copy its flag back, wait, launch the chosen
/// update) vs a graph whose IF/ELSE node decides on the device, per iteration of a loop whose
/// every decision depends on the data the last one produced.
#[derive(Debug, Parser)]
#[command(name = "graph_conditional_runtime", version)]
struct Cli {
    /// Iterations (decisions) per run (default 1000, or 100 with --quick).
    #[arg(long, value_name = "N")]
    iters: Option<u32>,
    /// Elements of the data (default 16384, or 4096 with --quick).
    #[arg(long, value_name = "N")]
    size: Option<u32>,
    /// LCG rounds per element of the heavy branch (default 16).
    #[arg(long, value_name = "N")]
    rounds: Option<u32>,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    main_with::<Program>(&cli.common, |options| {
        options.iters = cli.iters.unwrap_or(options.iters);
        options.size = cli.size.unwrap_or(options.size);
        options.rounds = cli.rounds.unwrap_or(options.rounds);
    })
}
