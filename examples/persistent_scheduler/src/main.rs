//! `persistent_scheduler`: drains an atomic work queue with a scheduler kernel that launches
//! one device graph per item (by the item's kind) and relaunches itself until the queue is
//! empty, against host loops that launch the same graphs item by item (on one stream, and
//! round-robin over several); checks that every
//! item was processed exactly once and matches the CPU model, and prints the report (text or
//! `--json`). Exits non-zero when a check fails or CUDA reports an error.

use std::process::ExitCode;

use chapter_common::{main_with, CommonArgs};
use clap::Parser;
use persistent_scheduler::Program;

/// A persistent, self-relaunching scheduler kernel that pops items from an atomic queue and
/// fire-and-forgets each item's graph, vs host-driven loops of graph launches (one stream, and
/// round-robin over several).
#[derive(Debug, Parser)]
#[command(name = "persistent_scheduler", version)]
struct Cli {
    /// Work items pushed onto the queue (default: 10000, or 1000 with --quick).
    #[arg(long, value_name = "N")]
    items: Option<u32>,
    /// Kinds of item, each its own graph (default: 4; at most 16).
    #[arg(long, value_name = "K")]
    kinds: Option<u32>,
    /// Elements per item, one thread each (default: 128).
    #[arg(long, value_name = "W")]
    width: Option<u32>,
    /// Rounds of work per element (default: 16).
    #[arg(long, value_name = "R")]
    rounds: Option<u32>,
    /// Items per scheduler run, at most 120; also the replicas of each kind's graph (default:
    /// 120, or 32 with --quick).
    #[arg(long, value_name = "B")]
    batch: Option<u32>,
    /// Scheduler threads that make the launches: 0 for one per item (default), 1 for one
    /// thread launching them all in order.
    #[arg(long, value_name = "T")]
    launch_threads: Option<u32>,
    /// Streams of the multi-stream host loop, round-robin (default: 8, CUDA's default number
    /// of hardware work queues; at most 64).
    #[arg(long, value_name = "N")]
    host_streams: Option<u32>,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    main_with::<Program>(&cli.common, |options| {
        options.items = cli.items.unwrap_or(options.items);
        options.kinds = cli.kinds.unwrap_or(options.kinds);
        options.width = cli.width.unwrap_or(options.width);
        options.rounds = cli.rounds.unwrap_or(options.rounds);
        options.batch = cli.batch.unwrap_or(options.batch);
        options.launch_threads = cli.launch_threads.unwrap_or(options.launch_threads);
        options.host_streams = cli.host_streams.unwrap_or(options.host_streams);
    })
}
