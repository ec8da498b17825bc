//! `persistent_scheduler`: queues and graphs together. A scheduler kernel that lives on the GPU
//! drains an atomic work queue by launching the device graph that matches each item.
//!
//! `items` small work items (a kind each and a slice of `width` elements) are pushed onto a
//! [`WorkQueue`] in a shuffled order. Each kind has its own graph (one `ps_item` kernel: a
//! block that transforms the item's slice with the kind's constants, counts the item in a
//! per-item counter and reports it done to the queue). Two ways to process the queue:
//! - **persistent scheduler**: one host launch of the scheduler's graph
//!   ([`device_launch::Launcher`]). Each run of `ps_scheduler` claims up to `batch` (at most
//!   120) items with one atomic (`dl_queue_pop_block`), fire-and-forgets one graph per item
//!   and relaunches itself (`DL_RELAUNCH_SELF`, a tail launch: it waits for the run's graphs)
//!   while the queue holds more. CUDA refuses to launch an exec again while its previous launch
//!   is pending, so every kind has `batch` replicas of its graph (separate execs) and a run
//!   launches each replica at most once.
//! - **host-driven loops**: the host walks the same items in queue order and launches the
//!   graph of each item's kind (`cudaGraphLaunch`, instantiated for host launch), one launch
//!   per item, synchronizing once at the end; on one stream (every launch waits for the one
//!   before), and round-robin over `host_streams` (8) streams with a copy of every kind's graph
//!   per stream, so that up to that many item graphs run at once, as the scheduler's do.
//!
//! All must process every item exactly once (per-item counters, checked on the host), leave
//! the CPU model's output bit for bit ([`model`]) and make one graph launch per item;
//! device-side launch failures are read from an [`ErrorSlot`]. Figures are medians of `runs`
//! timed runs after one warm-up (CUDA events around a whole drain of the queue); the
//! headline is the faster host loop's time per item over the scheduler's (`speedup`).

#![warn(missing_docs)]

mod program;

pub use program::Program;

mod checks;
mod host_loop;
mod kernels;
pub mod model;

use std::time::Instant;

use chapter_common::{Book, ExampleError, OptionCheck, Report};
use checks::{Expected, Way};
use cuda_graph::graph::Graph;
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DeviceBuffer, DevicePtr, Event, Stream};
use device_launch::limits::FIRE_AND_FORGET_LIMIT;
use device_launch::{
    instantiate_for_device, DeviceExec, DeviceExecTable, DeviceExecTableArg, ErrorSlot, Launcher,
    RawErrorSlot, Uploaded, WorkQueue, WorkQueueArg,
};
use kernels::{ps_item, ps_scheduler};
use serde_json::json;

/// The most kinds (`PS_MAX_KINDS`).
pub const MAX_KINDS: u32 = 16;
/// The most items per scheduler run (`PS_MAX_BATCH`): one fire-and-forget launch each,
/// within CUDA's limit per launching kernel.
pub const MAX_BATCH: u32 = 120;
/// The most items.
pub const MAX_ITEMS: u32 = 1 << 20;
/// The most elements per item (one block of that many threads).
pub const MAX_WIDTH: u32 = 1024;
/// The most rounds of work per element.
pub const MAX_ROUNDS: u32 = 4096;
/// The most streams of the multi-stream host loop.
pub const MAX_HOST_STREAMS: u32 = 64;

/// The layout of the `counters` array (the `PS_*` defines of `kernels/scheduler.cu`).
mod counters {
    use super::MAX_KINDS;
    /// `[k]`: list entries of kind `k` taken by item graphs.
    pub const SEQ: usize = 0;
    /// `[k]`: list entries of kind `k` written.
    pub const TAIL: usize = MAX_KINDS as usize;
    /// Item graphs fire-and-forgotten by the scheduler (accepted launches).
    pub const LAUNCHED: usize = 2 * MAX_KINDS as usize;
    /// Scheduler runs that claimed items.
    pub const RUNS: usize = LAUNCHED + 1;
    /// Length of the array.
    pub const LEN: usize = LAUNCHED + 2;
}

/// What to run; the fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Options {
    /// Timed runs of each way after one warm-up; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the items.
    #[arg(skip)]
    pub seed: u64,
    /// Work items pushed onto the queue (default: 10000, or 1000 with --quick).
    #[arg(long, value_name = "N")]
    pub items: u32,
    /// Kinds of item, each its own graph (default: 4; at most 16).
    #[arg(long, value_name = "K")]
    pub kinds: u32,
    /// Elements per item, the threads of its one block (default: 128).
    #[arg(long, value_name = "W")]
    pub width: u32,
    /// Rounds of work per element (default: 16).
    #[arg(long, value_name = "R")]
    pub rounds: u32,
    /// Items per scheduler run, at most 120; also the replicas of each kind's graph (default: 120,
    /// or 32 with --quick).
    #[arg(long, value_name = "B")]
    pub batch: u32,
    /// Scheduler threads that make the launches: 0 for one per item (default), 1 for one thread
    /// launching them all in order.
    #[arg(long, value_name = "T")]
    pub launch_threads: u32,
    /// Streams of the multi-stream host loop, round-robin, one copy of each kind's graph per stream
    /// (default: 8, CUDA's default number of hardware work queues; at most 64).
    #[arg(long, value_name = "N")]
    pub host_streams: u32,
}

impl Default for Options {
    /// Chapter scale: 10000 small items (a block of 128 threads, 16 rounds per element: a
    /// few microseconds of GPU work, launch-bound), 4 kinds, batches of 120, 5 runs; the
    /// multi-stream host loop on 8 streams: CUDA maps streams onto 8 hardware work queues by
    /// default (`CUDA_DEVICE_MAX_CONNECTIONS`), so more streams would share queues.
    fn default() -> Options {
        Options {
            items: 10_000,
            kinds: 4,
            width: 128,
            rounds: 16,
            batch: 120,
            launch_threads: 0,
            host_streams: 8,
            runs: 5,
            seed: 0x5eed,
        }
    }
}

impl Options {
    /// Small and fast (for tests and `--quick`): 1000 items in batches of 32, two runs.
    pub fn quick() -> Options {
        Options { items: 1000, batch: 32, runs: 2, ..Options::default() }
    }

    /// Refuses what cannot run, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        OptionCheck::new("persistent_scheduler")
            .within("items", self.items, 1..=MAX_ITEMS)
            .within("kinds", self.kinds, 1..=MAX_KINDS)
            .within("width", self.width, 1..=MAX_WIDTH)
            .within("rounds", self.rounds, 0..=MAX_ROUNDS)
            .rule("batch", (1..=MAX_BATCH).contains(&self.batch), || {
                format!(
                    "batch must be 1..={MAX_BATCH} (one fire-and-forget launch per item; CUDA allows \
                     {FIRE_AND_FORGET_LIMIT} per launching kernel), not {}",
                    self.batch
                )
            })
            .rule("launch_threads", self.launch_threads <= self.batch, || {
                format!(
                    "launch_threads must be 0 (one per item) or 1..={}, not {}",
                    self.batch, self.launch_threads
                )
            })
            .within("host_streams", self.host_streams, 1..=MAX_HOST_STREAMS)
            .at_least("runs", self.runs, 1)
            .done()
    }

    /// The number of scheduler threads that launch.
    fn launchers(&self) -> u32 {
        if self.launch_threads == 0 {
            self.batch
        } else {
            self.launch_threads
        }
    }
}

/// The chapter's own listing for this program: what `--book` runs, or why it runs nothing
/// (see [`Book`]).
pub fn book() -> Book<Options> {
    Book::NoListing {
        note: "The chapter describes this program without listing it: a persistent kernel \
               that pulls work from a queue, and a scheduler sketch that fire-and-forgets one graph \
               and tail-launches itself while should_continue(state), with no sizes or timing; its \
               \"up to ~3x\" is the summary of queues and graphs combined. Items, kinds and batches \
               are the port's.",
    }
}

/// The argument list of `ps_item`.
type ItemArgs = (
    DevicePtr<u32>,
    DevicePtr<u32>,
    u32,
    u32,
    u32,
    DevicePtr<u32>,
    u32,
    DevicePtr<u32>,
    DevicePtr<u32>,
    WorkQueueArg,
);

/// The argument list of `ps_scheduler`.
type SchedulerArgs = (
    WorkQueueArg,
    DevicePtr<u32>,
    DevicePtr<u32>,
    u32,
    DevicePtr<u32>,
    DeviceExecTableArg,
    u32,
    u32,
    DevicePtr<RawErrorSlot>,
);

/// The queue, the item data and bookkeeping, and the stream and events that time a drain.
struct Bench {
    stream: Stream,
    start: Event,
    end: Event,
    queue: WorkQueue,
    kinds: DeviceBuffer<u32>,
    input: DeviceBuffer<u32>,
    output: DeviceBuffer<u32>,
    /// `lists[k * items + n]`: the `n`-th item handed to a graph of kind `k`.
    lists: DeviceBuffer<u32>,
    /// The host loop's lists, in the same layout.
    host_lists: Vec<u32>,
    /// The host loop's counters: every list written (tail = items of the kind), none taken.
    host_counters: Vec<u32>,
    counters: DeviceBuffer<u32>,
    hits: DeviceBuffer<u32>,
    slot: ErrorSlot,
    items: model::Items,
    options: Options,
}

/// What one drain of the queue left.
struct Outcome {
    ms: f64,
    output: Vec<u32>,
    hits: Vec<u32>,
    counters: Vec<u32>,
    processed: u32,
    /// Item graphs launched: counted by the scheduler, or set by the host loops (one per item
    /// by construction: implied, not evidence; the per-kind graph runs are counted on the device).
    launched: u64,
    refused: Option<String>,
}

/// The scheduler's graph and the item graphs it launches.
struct SchedulerWay {
    /// `kinds x batch` uploaded execs (also held by the table in the scheduler's arguments).
    _replicas: Vec<DeviceExec<Uploaded>>,
    scheduler: Launcher<SchedulerArgs>,
}

impl Bench {
    fn new(items: model::Items, options: &Options) -> Result<Bench, ExampleError> {
        let n = options.items as usize;
        let lists = items.lists_in_queue_order(options.kinds);
        let mut host_lists = vec![0u32; options.kinds as usize * n];
        let mut host_counters = vec![0u32; counters::LEN];
        for (k, list) in lists.iter().enumerate() {
            host_lists[k * n..k * n + list.len()].copy_from_slice(list);
            host_counters[counters::TAIL + k] = list.len() as u32;
        }
        Ok(Bench {
            stream: Stream::new()?,
            start: Event::new()?,
            end: Event::new()?,
            queue: WorkQueue::with_capacity(options.items)?,
            kinds: DeviceBuffer::from_slice(&items.kinds)?,
            input: DeviceBuffer::from_slice(&items.input)?,
            output: DeviceBuffer::zeroed(items.input.len())?,
            lists: DeviceBuffer::zeroed(host_lists.len())?,
            host_lists,
            host_counters,
            counters: DeviceBuffer::zeroed(counters::LEN)?,
            hits: DeviceBuffer::zeroed(n)?,
            slot: ErrorSlot::new()?,
            items,
            options: options.clone(),
        })
    }

    fn item_config(&self) -> LaunchConfig {
        LaunchConfig::new(1, self.options.width)
    }

    fn item_args(&self, kind: u32) -> ItemArgs {
        let Options { items, width, rounds, .. } = self.options;
        (
            self.input.ptr(),
            self.output.ptr(),
            width,
            rounds,
            kind,
            self.lists.ptr(),
            items,
            self.counters.ptr(),
            self.hits.ptr(),
            self.queue.arg(),
        )
    }

    /// `batch` replicas of every kind's graph, instantiated for device launch and uploaded,
    /// and the scheduler's graph that launches them.
    fn scheduler_way(&self) -> Result<SchedulerWay, ExampleError> {
        let Options { items, kinds, batch, .. } = self.options;
        let mut replicas = Vec::with_capacity((kinds * batch) as usize);
        for kind in 0..kinds {
            let graph = Graph::new()?;
            graph.add_kernel(ps_item(), self.item_config(), self.item_args(kind), &[])?;
            for _ in 0..batch {
                replicas.push(instantiate_for_device(&graph)?.upload(&self.stream)?);
            }
        }
        let handles: Vec<_> = replicas.iter().map(DeviceExec::handle).collect();
        let table = DeviceExecTable::new(&handles)?;
        let args = (
            self.queue.arg(),
            self.kinds.ptr(),
            self.lists.ptr(),
            items,
            self.counters.ptr(),
            table.arg(),
            batch,
            self.options.launchers(),
            self.slot.ptr(),
        );
        let scheduler = Launcher::new(ps_scheduler(), LaunchConfig::new(1, batch), args)?;
        Ok(SchedulerWay { _replicas: replicas, scheduler })
    }

    /// Clears what a drain writes.
    fn reset(&mut self) -> Result<(), ExampleError> {
        self.output.memset_async(0, &self.stream)?;
        self.hits.memset_async(0, &self.stream)?;
        self.stream.synchronize()?;
        Ok(self.queue.reset()?)
    }

    /// Drains the queue with the persistent scheduler: one host launch.
    fn run_scheduler(&mut self, way: &SchedulerWay) -> Result<Outcome, ExampleError> {
        self.reset()?;
        self.queue.push_all(&self.items.order)?;
        self.counters.memset_async(0, &self.stream)?;
        self.start.record(&self.stream)?;
        way.scheduler.launch(&self.stream)?;
        self.end.record(&self.stream)?;
        let mut outcome = self.finish()?;
        outcome.launched = u64::from(outcome.counters[counters::LAUNCHED]);
        Ok(outcome)
    }

    /// Waits for the drain and reads what it left.
    fn finish(&mut self) -> Result<Outcome, ExampleError> {
        self.end.synchronize()?;
        self.stream.synchronize()?;
        let ms = f64::from(Event::elapsed_ms(&self.start, &self.end)?);
        Ok(Outcome {
            ms,
            output: self.output.to_vec()?,
            hits: self.hits.to_vec()?,
            counters: self.counters.to_vec()?,
            processed: self.queue.processed()?,
            launched: 0,
            refused: self.slot.take()?.err().map(|err| err.to_string()),
        })
    }
}

/// Runs the scheduler and both host loops on device 0 and reports times and checks.
///
/// Errors are CUDA's (no device, a failed launch) or invalid options; a wrong result is not an
/// error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    let (_, properties) = chapter_common::device_zero()?;
    let items = model::Items::new(options.seed, options.items, options.kinds, options.width, options.rounds);
    let want = Expected {
        output: items.expected_output(),
        width: options.width as usize,
        per_kind: items.per_kind(options.kinds),
        scheduler_runs: options.items.div_ceil(options.batch),
    };
    let mut bench = Bench::new(items, options)?;
    // The kernel's one-off parameter check and module load happen before the setup is timed.
    ps_item().function()?;
    let t = Instant::now();
    let way = bench.scheduler_way()?;
    bench.stream.synchronize()?;
    let setup_ms = t.elapsed().as_secs_f64() * 1e3;
    let host_graphs = bench.host_graphs()?;

    // Alternating; run 0 is the warm-up (it also uploads the scheduler's graph).
    let (mut on_device, mut on_host, mut on_streams) = (Way::default(), Way::default(), Way::default());
    for run in 0..=options.runs {
        let outcome = bench.run_scheduler(&way)?;
        on_device.record(run, outcome, &want, true);
        let outcome = bench.run_host(&host_graphs, false)?;
        on_host.record(run, outcome, &want, false);
        let outcome = bench.run_host(&host_graphs, true)?;
        on_streams.record(run, outcome, &want, false);
    }
    let ways = Ways { options, want: &want, on_device, on_host, on_streams };
    let mut report = Report::new("persistent_scheduler");
    ways.report_figures(&mut report, setup_ms);
    ways.report_checks(&mut report);
    ways.report_notes(&mut report, &properties);
    Ok(report)
}

/// The scheduler's and the two host loops' drains, for the report.
struct Ways<'a> {
    options: &'a Options,
    want: &'a Expected,
    on_device: Way,
    on_host: Way,
    on_streams: Way,
}

impl Ways<'_> {
    /// Per-item times, the headline against the faster host loop, the scheduler's runs and the
    /// setup.
    fn report_figures(&self, report: &mut Report, setup_ms: f64) {
        let (options, want) = (self.options, self.want);
        let (on_device, on_host, on_streams) = (&self.on_device, &self.on_host, &self.on_streams);
        let n = f64::from(options.items);
        let device_us = on_device.ms.median() * 1e3 / n;
        let one_stream_us = on_host.ms.median() * 1e3 / n;
        let streams_us = on_streams.ms.median() * 1e3 / n;
        // The headline's baseline: the faster host loop.
        let (host_us, host_ms, baseline_streams) = if streams_us < one_stream_us {
            (streams_us, on_streams.ms.median(), options.host_streams)
        } else {
            (one_stream_us, on_host.ms.median(), 1)
        };
        let runs_per_drain = f64::from(want.scheduler_runs);
        report.figure("scheduler_us_per_item", device_us, "us");
        report.figure("host_loop_us_per_item", host_us, "us");
        report.figure("speedup", host_us / device_us, "x");
        report.figure("host_loop_streams", f64::from(baseline_streams), "streams");
        report.figure("host_one_stream_us_per_item", one_stream_us, "us");
        report.figure("host_streams_us_per_item", streams_us, "us");
        report.figure("speedup_over_one_stream", one_stream_us / device_us, "x");
        report.figure("speedup_over_streams", streams_us / device_us, "x");
        report.figure("host_streams", f64::from(options.host_streams), "streams");
        report.figure("scheduler_ms_per_drain", on_device.ms.median(), "ms");
        report.figure("host_loop_ms_per_drain", host_ms, "ms");
        report.figure("us_per_scheduler_run", on_device.ms.median() * 1e3 / runs_per_drain, "us");
        report.figure("scheduler_runs", f64::from(on_device.scheduler_runs), "runs");
        report.figure("graph_execs", f64::from(options.kinds * options.batch), "execs");
        report.figure("setup_ms", setup_ms, "ms");
        report.figure("items", n, "items");
        report.figure("kinds", f64::from(options.kinds), "kinds");
        report.figure("batch", f64::from(options.batch), "items");
    }

    /// Each way: every item processed once, the output against the CPU model, one graph launch
    /// per item.
    fn report_checks(&self, report: &mut Report) {
        let (options, want) = (self.options, self.want);
        let (on_device, on_host, on_streams) = (&self.on_device, &self.on_host, &self.on_streams);
        let drains = options.runs + 1;
        let streams_label = format!("host loop over {} streams", options.host_streams);
        for (label, way) in [
            ("persistent scheduler", &on_device),
            ("host loop", &on_host),
            (streams_label.as_str(), &on_streams),
        ] {
            report.check(
                &format!("{label}: every item processed exactly once"),
                way.once.is_none(),
                way.once.clone().unwrap_or_else(|| {
                    format!(
                        "{drains} drains of {} items: every per-item counter 1, the queue counted all",
                        options.items
                    )
                }),
            );
            report.check(
                &format!("{label}: output equals the CPU model"),
                way.output.is_none(),
                way.output.clone().unwrap_or_else(|| {
                    format!("{} items x {} elements, bit-exact, every drain", options.items, options.width)
                }),
            );
            report.check(
                &format!("{label}: one graph launch per item"),
                way.launches.is_none(),
                way.launches.clone().unwrap_or_else(|| {
                    if label == "persistent scheduler" {
                        format!(
                            "{} launches accepted per drain, graph runs per kind {:?}, none refused",
                            options.items, want.per_kind
                        )
                    } else {
                        format!(
                            "graph runs per kind {:?} (counted on the device); one launch per item by \
                         construction (implied)",
                            want.per_kind
                        )
                    }
                }),
            );
        }
    }

    /// The device and workload, how times are taken, and every drain's per-item time.
    fn report_notes(&self, report: &mut Report, properties: &cuda_graph::DeviceProperties) {
        let (options, want, n) = (self.options, self.want, f64::from(self.options.items));
        let (on_device, on_host, on_streams) = (&self.on_device, &self.on_host, &self.on_streams);
        report.note(format!(
        "{} ({} SMs): {} items of {} elements x {} rounds, {} kinds; the scheduler claims {} items per run \
         ({} runs per drain) and launches them from {} thread(s); {} device-launch execs ({} replicas per kind)",
        properties.name,
        properties.multiprocessors,
        options.items,
        options.width,
        options.rounds,
        options.kinds,
        options.batch,
        want.scheduler_runs,
        options.launchers(),
        options.kinds * options.batch,
        options.batch
    ));
        report.note(format!(
            "times are CUDA-event times around a whole drain of the queue (one host launch for the \
         scheduler; one host graph launch per item for the host loops, on one stream or round-robin \
         over {} streams joined at the end), divided by the items; the headline is against the faster \
         host loop; the host loops' launch count is one per item by construction (implied)",
            options.host_streams
        ));
        let per_item = |w: &Way| json!(w.ms.0.iter().map(|ms| ms * 1e3 / n).collect::<Vec<_>>());
        report.data(
            "runs_us_per_item",
            json!({
                "scheduler": per_item(on_device),
                "host_loop": per_item(on_host),
                "host_loop_streams": per_item(on_streams),
            }),
        );
        report.data("items_per_kind", json!(want.per_kind));
    }
}

/// The one-line summary for the chapter table, e.g.
/// `persistent scheduler 3.10x over the faster host loop, 8 streams (0.71 vs 2.20 µs/item; 1 stream 2.90)`
/// (figures made up for the example).
///
/// ```
/// let mut report = chapter_common::Report::new("persistent_scheduler");
/// report.figure("scheduler_us_per_item", 0.71, "us");
/// report.figure("host_loop_us_per_item", 2.2, "us");
/// report.figure("speedup", 2.2 / 0.71, "x");
/// report.figure("host_loop_streams", 8.0, "streams");
/// report.figure("host_one_stream_us_per_item", 2.9, "us");
/// assert_eq!(
///     persistent_scheduler::headline(&report),
///     "persistent scheduler 3.10x over the faster host loop, 8 streams (0.71 vs 2.20 µs/item; 1 stream 2.90)"
/// );
/// ```
pub fn headline(report: &Report) -> String {
    format!(
        "persistent scheduler {:.2}x over the faster host loop, {:.0} stream{} ({:.2} vs {:.2} µs/item; 1 stream {:.2})",
        report.figure_or_nan("speedup"),
        report.figure_or_nan("host_loop_streams"),
        if report.figure_or_nan("host_loop_streams") == 1.0 { "" } else { "s" },
        report.figure_or_nan("scheduler_us_per_item"),
        report.figure_or_nan("host_loop_us_per_item"),
        report.figure_or_nan("host_one_stream_us_per_item")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_quick_are_valid_and_bad_options_are_refused_by_name() {
        assert!(Options::quick().items < Options::default().items);
        assert_eq!(Options::default().launchers(), 120);
        assert_eq!(Options { launch_threads: 1, ..Options::default() }.launchers(), 1);
        chapter_common::assert_options_checked::<Program>(&[
            ("kinds", Options { kinds: MAX_KINDS + 1, ..Options::quick() }),
            ("rounds", Options { rounds: MAX_ROUNDS + 1, ..Options::quick() }),
            ("host_streams", Options { host_streams: MAX_HOST_STREAMS + 1, ..Options::quick() }),
        ]);
        chapter_common::assert_flags_refused::<Program>(&[
            "--items=0",
            "--width=0",
            "--batch=121",
            "--launch-threads=33",
            "--host-streams=0",
        ]);
    }

    #[test]
    fn the_limits_and_counter_layout_match_the_kernels() {
        let source = include_str!("../kernels/scheduler.cu");
        assert!(source.contains(&format!("#define PS_MAX_KINDS {MAX_KINDS}u")));
        assert!(source.contains(&format!("#define PS_MAX_BATCH {MAX_BATCH}u")));
        assert_eq!(MAX_BATCH, FIRE_AND_FORGET_LIMIT);
        assert_eq!((counters::TAIL, counters::LAUNCHED, counters::RUNS, counters::LEN), (16, 32, 33, 34));
    }
}
