//! `streams_events`: copy/compute overlap on several streams vs one, stream priorities under a
//! flood, and work stealing between streams; checks every output against the CPU reference and
//! prints the report (text or `--json`). Exits non-zero when a check fails or CUDA reports an
//! error.
//!
//! Flags: the `#[arg(long)]` fields of [`streams_events::Options`], and the common ones.

use std::process::ExitCode;

use streams_events::Program;

/// The first line of `--help`.
const ABOUT: &str = "Streams and events: chunked H2D/kernel/D2H on N streams vs one (fork/join with \
                     events), the latency of urgent work on a high- vs a low-priority stream during a \
                     flood, and a host dispatcher handing chunks of uneven cost to whichever stream \
                     finished first.";

fn main() -> ExitCode {
    chapter_common::main_with_flags::<Program>(ABOUT)
}
