//! `atomic_work_queue`: times static vs dynamic (atomic-counter) assignment of irregular work,
//! checks every output against the CPU reference, and prints the report (text or `--json`).
//! Exits non-zero when a check fails or CUDA reports an error.
//!
//! Flags: the `#[arg(long)]` fields of [`atomic_work_queue::Options`], and the common ones.

use std::process::ExitCode;

use atomic_work_queue::Program;

/// The first line of `--help`.
const ABOUT: &str = "Static vs dynamic assignment of irregular work: a global atomic counter per thread, \
                     per warp (leader claims a batch, `__shfl_sync` broadcasts), per block then per \
                     warp, and a batch-size sweep.";

/// The flag that is not a field of the options: it turns the control off, and leaves it as the
/// preset has it otherwise (`--book` runs none).
#[derive(Debug, clap::Args)]
struct Switches {
    /// Skip the uniform-cost control (the same items with heavy factor 1).
    #[arg(long)]
    no_uniform_control: bool,
}

fn main() -> ExitCode {
    chapter_common::main_with_extra_flags::<Program, Switches>(ABOUT, |switches, options| {
        if switches.no_uniform_control {
            options.uniform_control = false;
        }
    })
}
