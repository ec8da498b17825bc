//! `streams_events`: copy/compute overlap on several streams vs one, stream priorities under a
//! flood, and work stealing between streams; checks every output against the CPU reference and
//! prints the report (text or `--json`). Exits non-zero when a check fails or CUDA reports an
//! error.

use std::process::ExitCode;

use chapter_common::{main_with, CommonArgs};
use clap::Parser;
use streams_events::Program;

/// Streams and events: chunked H2D/kernel/D2H on N streams vs one (fork/join with events),
/// the latency of urgent work on a high- vs a low-priority stream during a flood, and a host
/// dispatcher handing chunks of uneven cost to whichever stream finished first.
#[derive(Debug, Parser)]
#[command(name = "streams_events", version)]
struct Cli {
    /// Elements copied in, computed and copied out (default: 16777216, or 1048576 with --quick).
    #[arg(long, value_name = "N")]
    size: Option<u32>,
    /// Chunks the elements are split into (default: 16, or 8 with --quick).
    #[arg(long, value_name = "N")]
    chunks: Option<u32>,
    /// Worker streams of the headline overlap figure (default: 4).
    #[arg(long, value_name = "N")]
    streams: Option<u32>,
    /// Other stream counts to time, comma-separated (default: 2,3,4,8, or 2 with --quick).
    #[arg(long, value_name = "N,N,...", value_delimiter = ',')]
    stream_sweep: Option<Vec<u32>>,
    /// Rounds of work per element in the overlap (default: calibrated so that the kernels take
    /// about as long as the copies in).
    #[arg(long, value_name = "N")]
    rounds: Option<u32>,
    /// Streams of the work-stealing experiment (default: 4).
    #[arg(long, value_name = "N")]
    steal_streams: Option<u32>,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    main_with::<Program>(&cli.common, |options| {
        options.elements = cli.size.unwrap_or(options.elements);
        options.chunks = cli.chunks.unwrap_or(options.chunks);
        options.streams = cli.streams.unwrap_or(options.streams);
        if let Some(sweep) = cli.stream_sweep {
            options.stream_sweep = sweep;
        }
        options.rounds = cli.rounds.or(options.rounds);
        options.steal_streams = cli.steal_streams.unwrap_or(options.steal_streams);
    })
}
