//! `moe_router`: routes tokens to experts on the GPU and dispatches each busy expert's graph
//! from the device (fire-and-forget), then the combine (tail launch), against host-driven
//! routing (sync, read the counts, launch each expert, combine); checks both against the CPU
//! model and prints the report (text or `--json`). Exits non-zero when a check fails or CUDA
//! reports an error.

use std::process::ExitCode;

use chapter_common::{main_with, CommonArgs};
use clap::Parser;
use moe_router::Program;

/// Mixture-of-experts routing with device-side dispatch (expert graphs fire-and-forgotten by
/// the router, combine tail-launched) vs host-driven routing.
#[derive(Debug, Parser)]
#[command(name = "moe_router", version)]
struct Cli {
    /// Tokens routed per step (default: 2048, or 256 with --quick).
    #[arg(long, value_name = "N")]
    tokens: Option<u32>,
    /// Features per token (default: 64, or 32 with --quick).
    #[arg(long, value_name = "D")]
    hidden: Option<u32>,
    /// Experts, each its own device graph (default: 8; at most 64).
    #[arg(long, value_name = "E")]
    experts: Option<u32>,
    /// Experts per token, 1 or 2 (default: 2).
    #[arg(long, value_name = "K")]
    top_k: Option<u32>,
    /// Routing steps per timed run (default: 200, or 10 with --quick).
    #[arg(long, value_name = "N")]
    iters: Option<u32>,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    main_with::<Program>(&cli.common, |options| {
        options.tokens = cli.tokens.unwrap_or(options.tokens);
        options.hidden = cli.hidden.unwrap_or(options.hidden);
        options.experts = cli.experts.unwrap_or(options.experts);
        options.top_k = cli.top_k.unwrap_or(options.top_k);
        options.iters = cli.iters.unwrap_or(options.iters);
    })
}
