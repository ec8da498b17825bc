//! `cuda_graphs_conditional`: routes inputs through IF, IF/ELSE (with a nested IF) and SWITCH
//! nodes whose conditions kernels set, runs a WHILE loop on the device against host-driven
//! loops, checks everything against a CPU model, and prints the report (text or `--json`).
//! Exits non-zero when a check fails or CUDA reports an error.

use std::process::ExitCode;

use chapter_common::{main_with, CommonArgs};
use clap::Parser;
use cuda_graphs_conditional::Program;

/// Conditional graph nodes with device-set conditions: IF, IF/ELSE, nested IF and SWITCH
/// routing checked against a CPU model, and a WHILE loop until convergence timed per step
/// against a host loop that launches, syncs and reads a flag the kernel wrote into mapped host
/// memory every step (and one that copies the flag back).
#[derive(Debug, Parser)]
#[command(name = "cuda_graphs_conditional", version)]
struct Cli {
    /// Inputs routed through the IF / IF-ELSE / SWITCH graph (default 4096, or 256 with --quick).
    #[arg(long, value_name = "N")]
    inputs: Option<u32>,
    /// Unknowns of the system the WHILE loop relaxes, 1..=1024 (default 256).
    #[arg(long, value_name = "N")]
    size: Option<u32>,
    /// Stop the loop when no value changes by more than this (default 1e-4, or 1e-3 with --quick).
    #[arg(long, value_name = "TOL")]
    tolerance: Option<f32>,
    /// The system's diagonal, above 2: closer to 2, more steps (default 2.05).
    #[arg(long, value_name = "D")]
    diagonal: Option<f32>,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    main_with::<Program>(&cli.common, |options| {
        options.inputs = cli.inputs.unwrap_or(options.inputs);
        options.size = cli.size.unwrap_or(options.size);
        options.tolerance = cli.tolerance.unwrap_or(options.tolerance);
        options.diagonal = cli.diagonal.unwrap_or(options.diagonal);
    })
}
