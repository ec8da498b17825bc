//! `graph_bandwidth`: times device copies and memsets as graph nodes against the same
//! operations queued on a stream, by size; checks the bytes they leave and prints the report
//! (text or `--json`). Exits non-zero when a check fails or CUDA reports an error.
//!
//! Flags: the `#[arg(long)]` fields of [`graph_bandwidth::Options`], and the common ones.

use std::process::ExitCode;

use chapter_common::NoExtraFlags;
use graph_bandwidth::Program;

/// The first line of `--help`.
const ABOUT: &str = "Memcpy and memset nodes in a graph vs the same copies and memsets on a stream: GB/s \
                     by size.";

fn main() -> ExitCode {
    chapter_common::main_with_extra_flags::<Program, NoExtraFlags>(ABOUT, |NoExtraFlags, options| {
        // A run has at least one chain of operations.
        options.max_ops = options.max_ops.max(options.chain);
    })
}
