//! `cuda_graphs_pipeline`: the chapter's six-stage pipeline launched stage by stage (with
//! per-stage stream-ordered allocations) vs replayed as one graph over memory-pool buffers;
//! checks the outputs against each other and the CPU reference, and prints the report (text or
//! `--json`). Exits non-zero when a check fails or CUDA reports an error.
//!
//! Flags: the `#[arg(long)]` fields of [`cuda_graphs_pipeline::Options`], and the common ones.

use std::process::ExitCode;

use cuda_graphs_pipeline::Program;

/// The first line of `--help`.
const ABOUT: &str = "A six-stage pipeline of small kernels: per-stage launches over preallocated buffers \
                     (the like-for-like baseline of the headline), the same launches with per-stage \
                     allocations (an extra baseline), and one captured graph over memory-pool buffers \
                     (the optimized program), in ms per iteration.";

/// The two flags of [`cuda_graphs_pipeline::Options::verify`].
#[derive(Debug, clap::Args)]
struct Verify {
    /// Check the output against the CPU reference (the default; kept for the book's command
    /// line).
    #[arg(long, conflicts_with = "no_verify")]
    verify: bool,
    /// Skip the CPU reference (the three ways are still compared with each other).
    #[arg(long)]
    no_verify: bool,
}

fn main() -> ExitCode {
    chapter_common::main_with_extra_flags::<Program, Verify>(ABOUT, |flags, options| {
        options.verify = flags.verify || !flags.no_verify;
    })
}
