//! `graph_conditional_runtime`: a data-dependent branch per iteration, decided on the host
//! (sync, read the flag, launch the chosen kernel) or by an IF/ELSE conditional node on the
//! device; both checked against a CPU model and timed. Prints the report (text or `--json`);
//! exits non-zero when a check fails or CUDA reports an error.
//!
//! Flags: the `#[arg(long)]` fields of [`graph_conditional_runtime::Options`], and the common ones.

use std::process::ExitCode;

use graph_conditional_runtime::Program;

/// The first line of `--help`.
const ABOUT: &str = "Host-side branching (launch the predicate, copy its flag back, wait, launch the \
                     chosen update) vs a graph whose IF/ELSE node decides on the device, per iteration \
                     of a loop whose every decision depends on the data the last one produced.";

fn main() -> ExitCode {
    chapter_common::main_with_flags::<Program>(ABOUT)
}
