//! `persistent_scheduler`: drains an atomic work queue with a scheduler kernel that launches
//! one device graph per item (by the item's kind) and relaunches itself until the queue is
//! empty, against host loops that launch the same graphs item by item (on one stream, and
//! round-robin over several); checks that every
//! item was processed exactly once and matches the CPU model, and prints the report (text or
//! `--json`). Exits non-zero when a check fails or CUDA reports an error.
//!
//! Flags: the `#[arg(long)]` fields of [`persistent_scheduler::Options`], and the common ones.

use std::process::ExitCode;

use persistent_scheduler::Program;

/// The first line of `--help`.
const ABOUT: &str = "A persistent, self-relaunching scheduler kernel that pops items from an atomic \
                     queue and fire-and-forgets each item's graph, vs host-driven loops of graph \
                     launches (one stream, and round-robin over several).";

fn main() -> ExitCode {
    chapter_common::main_with_flags::<Program>(ABOUT)
}
