//! `graph_memory`: a pipeline's scratch memory preallocated, allocated by graph memory nodes,
//! and taken from a stream-ordered pool; times each, reports peak memory and whether memory
//! grows with replays, checks every output against the CPU reference, and prints the report
//! (text or `--json`). Exits non-zero when a check fails or CUDA reports an error.
//!
//! Flags: the `#[arg(long)]` fields of [`graph_memory::Options`], and the common ones.

use std::process::ExitCode;

use graph_memory::Program;

/// The first line of `--help`.
const ABOUT: &str = "Graph memory: scratch buffers of a K-stage pipeline preallocated (graph over them), \
                     as alloc/free nodes inside the graph (reused across replays, and within the graph), \
                     and from a stream-ordered memory pool; peak memory, time per pass, no growth after \
                     many replays.";

fn main() -> ExitCode {
    chapter_common::main_with_flags::<Program>(ABOUT)
}
