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

fn main() -> ExitCode {
    chapter_common::main_with_flags::<Program>(ABOUT)
}
