//! `cuda_graphs_conditional`: routes inputs through IF, IF/ELSE (with a nested IF) and SWITCH
//! nodes whose conditions kernels set, runs a WHILE loop on the device against host-driven
//! loops, checks everything against a CPU model, and prints the report (text or `--json`).
//! Exits non-zero when a check fails or CUDA reports an error.
//!
//! Flags: the `#[arg(long)]` fields of [`cuda_graphs_conditional::Options`], and the common ones.

use std::process::ExitCode;

use cuda_graphs_conditional::Program;

/// The first line of `--help`.
const ABOUT: &str = "Conditional graph nodes with device-set conditions: IF, IF/ELSE, nested IF and \
                     SWITCH routing checked against a CPU model, and a WHILE loop until convergence \
                     timed per sweep and per WHILE iteration (K sweeps) against a host loop that \
                     launches K sweeps, syncs and reads a flag the kernel wrote into mapped host \
                     memory every round (and one that copies the flag back).";

fn main() -> ExitCode {
    chapter_common::main_with_flags::<Program>(ABOUT)
}
