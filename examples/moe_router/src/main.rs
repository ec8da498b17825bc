//! `moe_router`: routes tokens to experts on the GPU and dispatches each busy expert's graph
//! from the device (fire-and-forget), then the combine (tail launch), against host-driven
//! routing (sync, read the counts, launch each expert, combine); checks both against the CPU
//! model and prints the report (text or `--json`). Exits non-zero when a check fails or CUDA
//! reports an error.
//!
//! Flags: the `#[arg(long)]` fields of [`moe_router::Options`], and the common ones.

use std::process::ExitCode;

use moe_router::Program;

/// The first line of `--help`.
const ABOUT: &str = "Mixture-of-experts routing with device-side dispatch (expert graphs \
                     fire-and-forgotten by the router, combine tail-launched) vs host-driven routing.";

fn main() -> ExitCode {
    chapter_common::main_with_flags::<Program>(ABOUT)
}
