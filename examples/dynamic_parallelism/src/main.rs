//! `dynamic_parallelism`: adaptive refinement with CDP2 (a parent kernel launches children
//! only where the field is steep, then a tail-launched reduction) against host-driven
//! refinement, both checked against a CPU model; then the device graph launch the book's
//! program attempts, done so that it runs and checked by its effect on the data. Prints the
//! report (text or `--json`); exits non-zero when a check fails or CUDA reports an error.
//!
//! Flags: the `#[arg(long)]` fields of [`dynamic_parallelism::Options`], and the common ones.

use std::process::ExitCode;

use dynamic_parallelism::Program;

/// The first line of `--help`.
const ABOUT: &str = "CDP2 adaptive refinement (children launched from the device, counted; tail-launched \
                     reduction) vs the host reading the refinement flags and launching the children \
                     itself; and a post-processing graph launched from the device, correctly.";

fn main() -> ExitCode {
    chapter_common::main_with_flags::<Program>(ABOUT)
}
