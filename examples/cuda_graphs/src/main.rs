//! `cuda_graphs`: times a chain of small dependent kernels launched one by one on a stream
//! against the same chain captured once into a CUDA graph and replayed, then changes the
//! graph per node and as a whole; checks every output against the CPU reference and prints
//! the report (text or `--json`). Exits non-zero when a check fails or CUDA reports an error.
//!
//! Flags: the `#[arg(long)]` fields of [`cuda_graphs::Options`], and the common ones.

use std::process::ExitCode;

use cuda_graphs::Program;

/// The first line of `--help`.
const ABOUT: &str = "Stream launches vs graph replay of the same kernel chain, and graph updates \
                     (`cudaGraphExecKernelNodeSetParams`, `cudaGraphExecUpdate`).";

fn main() -> ExitCode {
    chapter_common::main_with_flags::<Program>(ABOUT)
}
