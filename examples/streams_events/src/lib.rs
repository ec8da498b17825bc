//! `streams_events`: CUDA streams and events, in three experiments on one kernel (`se_work`).
//!
//! 1. **Copy/compute overlap.** The input goes through in chunks: copy in (pinned host to
//!    device), compute, copy out, chunk `c` on stream `c % S`. With `S = 1` that is the
//!    serialized run; with several streams one chunk's copy in, another's kernel and a third's
//!    copy out run at once. The main stream records a start event that every worker stream
//!    waits for (fork) and waits for each worker's done event before recording the end event
//!    (join), so the time covers the whole pipeline. The kernel's work is calibrated so that
//!    computing takes about as long as copying in, where overlap pays most. Headline: serialized
//!    time over overlapped time (`overlap`).
//! 2. **Priorities.** A flood of long kernels on a low-priority stream keeps every SM busy; a
//!    small urgent kernel is submitted meanwhile, once on a stream of the same priority and
//!    once on a stream of the greatest priority, and once on an idle GPU. Its latency
//!    (submission to completion, events on its stream) shows what priority buys.
//! 3. **Work stealing between streams.** Chunks of uneven cost (a seeded hot span) on a few
//!    streams: a static contiguous split vs a host dispatcher that gives the next chunk to
//!    whichever stream's previous chunk has completed (polling its event).
//!
//! Every output of every run is checked against the CPU reference ([`mix`]); figures are
//! medians of `runs` timed runs after a warm-up, timed with CUDA events.

#![warn(missing_docs)]

mod program;

pub use program::Program;

mod overlap;
mod priority;
mod stealing;
mod work;

use chapter_common::{Book, ExampleError, OptionCheck, Report, Rng, Samples};
use serde_json::json;

pub use overlap::{overlap_bound, rounds_to_match, Overlap, StageTimes};
pub use priority::{flood_elements, Mode, Priorities, Trial};
pub use stealing::{Costs, Policy, Stealing};
pub use work::{inputs, mix, Table, THREADS_PER_BLOCK, VALUES};

/// The most rounds of work per element any launch may ask for.
pub const MAX_ROUNDS: u32 = 1 << 16;

/// The most elements any buffer may hold (1 GiB of `u32`).
pub const MAX_ELEMENTS: u64 = 1 << 28;

/// Rounds of the probe launch that calibrates the overlap's kernel.
const PROBE_ROUNDS: u32 = 64;

/// What to run: sizes and parameters of the three experiments.
///
/// The fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Options {
    /// Timed runs of everything after one warm-up; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the inputs, the salt and the hot span.
    #[arg(skip)]
    pub seed: u64,
    /// Overlap: elements copied in, computed and copied out (default: 16777216, or 1048576 with
    /// --quick).
    #[arg(long = "size", value_name = "N")]
    pub elements: u32,
    /// Overlap: chunks the elements are split into (default: 16, or 8 with --quick).
    #[arg(long, value_name = "N")]
    pub chunks: u32,
    /// Overlap: worker streams of the headline figure (default: 4).
    #[arg(long, value_name = "N")]
    pub streams: u32,
    /// Overlap: other stream counts timed too, comma-separated; the headline's is added if missing
    /// (default: 2,3,4,8, or 2 with --quick).
    #[arg(long, value_name = "N,N,...", value_delimiter = ',')]
    pub stream_sweep: Vec<u32>,
    /// Overlap: rounds of work per element (default: calibrated so that the kernels take about as
    /// long as the copies in).
    #[arg(long, value_name = "N")]
    pub rounds: Option<u32>,
    /// Stealing: worker streams (default: 4).
    #[arg(long, value_name = "N")]
    pub steal_streams: u32,
    /// Priorities: kernels in the flood.
    #[arg(skip)]
    pub flood_kernels: u32,
    /// Priorities: full waves of blocks (8 per SM) in each flood kernel.
    #[arg(skip)]
    pub flood_waves: u32,
    /// Priorities: rounds per element of the flood (sets how long a flood block runs).
    #[arg(skip)]
    pub flood_rounds: u32,
    /// Priorities: elements of the urgent job.
    #[arg(skip)]
    pub urgent_elements: u32,
    /// Priorities: rounds per element of the urgent job.
    #[arg(skip)]
    pub urgent_rounds: u32,
    /// Stealing: chunks.
    #[arg(skip)]
    pub steal_chunks: u32,
    /// Stealing: elements per chunk.
    #[arg(skip)]
    pub steal_chunk_len: u32,
    /// Stealing: rounds per element of a light chunk.
    #[arg(skip)]
    pub light_rounds: u32,
    /// Stealing: how many times costlier a hot chunk is.
    #[arg(skip)]
    pub heavy_factor: u32,
    /// Stealing: chunks per span (a span is hot or light as a whole).
    #[arg(skip)]
    pub hot_span: u32,
    /// Stealing: one span in this many is hot (at least one is).
    #[arg(skip)]
    pub hot_one_in: u32,
    /// Stealing: chunks the dispatcher keeps queued per stream.
    #[arg(skip)]
    pub depth: u32,
}

impl Default for Options {
    /// Chapter scale: 64 MiB each way in 16 chunks on 4 streams (and 2, 3, 8); a flood of 8
    /// kernels of 32 waves; 64 stealable chunks of 32 Ki elements on 4 streams, one hot span
    /// of 4 chunks 8x costlier.
    fn default() -> Options {
        Options {
            runs: 5,
            seed: 0x5eed,
            elements: 1 << 24,
            chunks: 16,
            streams: 4,
            stream_sweep: vec![2, 3, 4, 8],
            rounds: None,
            flood_kernels: 8,
            flood_waves: 32,
            flood_rounds: 1024,
            urgent_elements: 2048,
            urgent_rounds: 256,
            steal_streams: 4,
            steal_chunks: 64,
            steal_chunk_len: 1 << 15,
            light_rounds: 2048,
            heavy_factor: 8,
            hot_span: 4,
            hot_one_in: 16,
            depth: 2,
        }
    }
}

impl Options {
    /// Small and fast (for tests and `--quick`): 4 MiB each way in 8 chunks, a short flood,
    /// 16 light stealable chunks, two runs.
    pub fn quick() -> Options {
        Options {
            runs: 2,
            elements: 1 << 20,
            chunks: 8,
            stream_sweep: vec![2],
            flood_kernels: 3,
            flood_waves: 2,
            flood_rounds: 256,
            urgent_rounds: 64,
            steal_chunks: 16,
            steal_chunk_len: 4096,
            light_rounds: 128,
            hot_span: 2,
            hot_one_in: 8,
            ..Options::default()
        }
    }

    /// The overlap's stream counts: the sweep plus the headline's, sorted, without repeats.
    pub fn stream_counts(&self) -> Vec<u32> {
        let mut counts: Vec<u32> = self.stream_sweep.iter().copied().chain([self.streams]).collect();
        counts.sort_unstable();
        counts.dedup();
        counts
    }

    /// Refuses what the experiments cannot run correctly, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        let rounds_ok = |r: u32| (1..=MAX_ROUNDS).contains(&r);
        let max_streams = self.stream_counts().into_iter().max().unwrap_or(1);
        let steal_total = u64::from(self.steal_chunks) * u64::from(self.steal_chunk_len);
        let heavy_ok =
            self.heavy_factor != 0 && rounds_ok(self.light_rounds.saturating_mul(self.heavy_factor));
        OptionCheck::new("streams_events")
            .at_least("runs", self.runs, 1)
            .within("elements", u64::from(self.elements), 1..=MAX_ELEMENTS)
            .rule("streams", self.stream_counts().iter().all(|&s| (1..=32).contains(&s)), || {
                format!("stream counts must be 1..=32, not {:?}", self.stream_counts())
            })
            .rule("chunks", self.chunks >= max_streams && self.chunks <= 4096 && self.chunks <= self.elements, || {
                format!(
                    "chunks must be at least the most streams ({max_streams}), at most 4096 and at most the \
                     elements, not {}",
                    self.chunks
                )
            })
            .rule("rounds", self.rounds.is_none_or(rounds_ok), || format!("rounds must be 1..={MAX_ROUNDS}"))
            .rule("flood_rounds", rounds_ok(self.flood_rounds) && rounds_ok(self.urgent_rounds), || {
                format!("flood and urgent rounds must be 1..={MAX_ROUNDS}")
            })
            .rule("flood_kernels", (1..=64).contains(&self.flood_kernels) && (1..=256).contains(&self.flood_waves), || {
                "flood_kernels must be 1..=64 and flood_waves 1..=256".to_string()
            })
            .within("urgent_elements", self.urgent_elements, 1..=1 << 24)
            .rule("steal_streams", (1..=32).contains(&self.steal_streams) && self.steal_chunks >= self.steal_streams, || {
                "steal_streams must be 1..=32 and steal_chunks at least steal_streams".to_string()
            })
            .rule(
                "steal_chunk_len",
                self.steal_chunk_len != 0 && steal_total <= MAX_ELEMENTS && self.steal_chunks <= 1 << 16,
                || format!("steal_chunks x steal_chunk_len must be 1..={MAX_ELEMENTS} elements (at most 65536 chunks)"),
            )
            .rule("light_rounds", rounds_ok(self.light_rounds) && heavy_ok, || {
                format!("light_rounds and light_rounds x heavy_factor must be 1..={MAX_ROUNDS}")
            })
            .at_least("hot_span", self.hot_span, 1)
            .at_least("hot_one_in", self.hot_one_in, 1)
            .within("depth", self.depth, 1..=16)
            .done()
    }
}

/// The chapter's own listing for this program: what `--book` runs, or why it runs nothing
/// (see [`Book`]).
pub fn book() -> Book<Options> {
    Book::NoListing {
        note: "The chapter's note on streams and events gives API fragments (creating streams, \
               timing with events, cudaStreamWaitEvent dependencies, a persistent-thread queue) \
               without sizes or a program, and quotes NVIDIA's 40-60% for three or more streams. The \
               stages, sizes and the stealing dispatcher are the port's.",
    }
}

/// Median, min and max of some samples, as JSON.
fn stats(samples: &Samples) -> serde_json::Value {
    let (min, max) = samples.range();
    json!({ "median": samples.median(), "min": min, "max": max })
}

/// Keeps the first failure of a check.
#[derive(Default)]
struct FirstFailure {
    failure: Option<String>,
    checked: usize,
}

impl FirstFailure {
    fn record(&mut self, outcome: Option<String>) {
        self.checked += 1;
        if self.failure.is_none() {
            self.failure = outcome;
        }
    }

    fn report(&self, report: &mut Report, name: &str, what: &str) {
        match &self.failure {
            None => report.check(name, true, format!("{} runs, every {what} bit-exact", self.checked)),
            Some(first) => report.check(name, false, format!("first mismatch: {first}")),
        }
    }
}

/// Runs the three experiments on device 0 and reports times, ratios and the checks.
///
/// Errors are CUDA's (no device, a failed launch) or invalid options; a wrong result is not an
/// error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    let (_, properties) = chapter_common::device_zero()?;
    let sms = properties.multiprocessors.max(1) as u32;
    let flood_len = flood_elements(sms, options.flood_waves);
    if u64::from(flood_len) * u64::from(options.flood_kernels) > MAX_ELEMENTS {
        return Err(ExampleError::options(
            "streams_events",
            "flood_waves",
            format!(
                "the flood would need {} elements on this GPU; lower flood_waves or flood_kernels",
                u64::from(flood_len) * u64::from(options.flood_kernels)
            ),
        ));
    }
    let mut rng = Rng::new(options.seed);
    let salt = rng.next_u64() as u32;
    let mut report = Report::new("streams_events");
    let overlap = overlap_phase(options, &mut rng, salt, &mut report)?;
    let priority = priority_phase(options, &mut rng, salt, flood_len, &mut report)?;
    let stealing = stealing_phase(options, &mut rng, salt, &mut report)?;
    report.note(format!(
        "{} ({sms} SMs); stream priorities {} (least) .. {} (greatest)",
        properties.name, priority.least, priority.greatest
    ));
    report.note(overlap.note(options));
    report.note(priority.note(options, flood_len));
    report.note(stealing.note(options));
    report.data("overlap", json!(overlap.data));
    report.data("priority", json!(priority.data));
    report.data("stealing", stealing.data);
    Ok(report)
}

/// What the overlap phase hands the notes: the rounds per element, the stages alone, each
/// stream count's times.
struct OverlapRun {
    rounds: u32,
    stages: StageTimes,
    data: Vec<serde_json::Value>,
}

impl OverlapRun {
    /// The overlap phase's note: sizes, rounds, the stages alone.
    fn note(&self, options: &Options) -> String {
        let bytes = f64::from(options.elements) * 4.0;
        format!(
            "overlap: {} elements ({:.0} MiB each way) in {} chunks; {} rounds per element ({}); stages \
             alone: H2D {:.3} ms, kernel {:.3} ms, D2H {:.3} ms",
            options.elements,
            bytes / (1 << 20) as f64,
            options.chunks,
            self.rounds,
            if options.rounds.is_some() { "as given" } else { "calibrated: kernel time about H2D time" },
            self.stages.h2d_ms,
            self.stages.kernel_ms,
            self.stages.d2h_ms
        )
    }
}

/// What the priority phase hands the notes: the device's priority range, each mode's latency.
struct PriorityRun {
    least: i32,
    greatest: i32,
    data: Vec<serde_json::Value>,
}

impl PriorityRun {
    /// The priority phase's note: the flood and the urgent job.
    fn note(&self, options: &Options, flood_len: u32) -> String {
        format!(
            "priority: flood of {} kernels x {} blocks ({} waves), {} rounds per element; urgent job {} elements \
             x {} rounds; latency = urgent kernel's submission to completion",
            options.flood_kernels,
            flood_len / THREADS_PER_BLOCK,
            options.flood_waves,
            options.flood_rounds,
            options.urgent_elements,
            options.urgent_rounds
        )
    }
}

/// What the stealing phase hands the notes: the static split's imbalance, the hot spans, each
/// policy's times.
struct StealingRun {
    imbalance: f64,
    hot_spans: usize,
    spans: usize,
    data: serde_json::Value,
}

impl StealingRun {
    /// The stealing phase's note: chunks, streams, the skew and the static split's imbalance.
    fn note(&self, options: &Options) -> String {
        format!(
            "stealing: {} chunks x {} elements on {} streams; {} of {} spans of {} chunks hot ({}x {} rounds); \
             static split: costliest stream {:.2}x the mean; dispatcher depth {}",
            options.steal_chunks,
            options.steal_chunk_len,
            options.steal_streams,
            self.hot_spans,
            self.spans,
            options.hot_span,
            options.heavy_factor,
            options.light_rounds,
            self.imbalance,
            options.depth
        )
    }
}

/// Copy/compute overlap: the stages alone (calibrating the rounds when not given), then the
/// chunked pipeline on 1 and more streams, every output checked.
fn overlap_phase(
    options: &Options, rng: &mut Rng, salt: u32, report: &mut Report,
) -> Result<OverlapRun, ExampleError> {
    let counts = options.stream_counts();
    let input = inputs(rng, options.elements as usize);
    let max_streams = counts.iter().copied().max().unwrap_or(1) as usize;
    let mut pipeline = Overlap::new(&input, options.chunks as usize, max_streams, salt)?;
    let rounds = match options.rounds {
        Some(rounds) => rounds,
        None => calibrated_rounds(&mut pipeline)?,
    };
    let table = Table::new(rounds, salt);
    let stages = stage_medians(&mut pipeline, rounds, options.runs)?;
    let mut overlap_checks = FirstFailure::default();
    let mut by_count: Vec<(u32, Samples)> = Vec::new();
    for &streams in std::iter::once(&1).chain(counts.iter().filter(|&&s| s > 1)) {
        let mut samples = Samples::default();
        for run in 0..=options.runs {
            let ms = pipeline.run(streams as usize, rounds)?;
            if run > 0 {
                samples.push(ms);
            }
            let outcome = pipeline.check(&table)?.map(|m| format!("{streams} stream(s), run {run}: {m}"));
            overlap_checks.record(outcome);
        }
        by_count.push((streams, samples));
    }
    let median_at = |s: u32| by_count.iter().find(|(c, _)| *c == s).map_or(f64::NAN, |(_, m)| m.median());
    let serialized_ms = median_at(1);
    let overlapped_ms = median_at(options.streams);
    let bytes = f64::from(options.elements) * 4.0;
    report.figure("serialized_ms", serialized_ms, "ms");
    report.figure("overlapped_ms", overlapped_ms, "ms");
    report.figure("overlap", serialized_ms / overlapped_ms, "x");
    report.figure("overlap_bound", overlap_bound(&stages), "x");
    report.figure("h2d_ms", stages.h2d_ms, "ms");
    report.figure("kernel_ms", stages.kernel_ms, "ms");
    report.figure("d2h_ms", stages.d2h_ms, "ms");
    report.figure("h2d_gbps", bytes / stages.h2d_ms / 1e6, "GB/s");
    report.figure("d2h_gbps", bytes / stages.d2h_ms / 1e6, "GB/s");
    report.figure("rounds", f64::from(rounds), "rounds");
    for (streams, samples) in &by_count {
        if *streams > 1 {
            report.figure(&format!("overlapped_{streams}_streams_ms"), samples.median(), "ms");
            report.figure(&format!("overlap_{streams}_streams"), serialized_ms / samples.median(), "x");
        }
    }
    overlap_checks.report(report, "overlap outputs match CPU reference", "chunk copied back");
    let overlap_data: Vec<serde_json::Value> =
        by_count.iter().map(|(s, samples)| json!({ "streams": s, "ms": stats(samples) })).collect();

    Ok(OverlapRun { rounds, stages, data: overlap_data })
}

/// The rounds per element that make the kernel stage take about as long as the copy in
/// (two probes after a warm-up of the first copies and the module load).
fn calibrated_rounds(pipeline: &mut Overlap) -> Result<u32, ExampleError> {
    pipeline.stage_times(PROBE_ROUNDS)?;
    let probe = pipeline.stage_times(PROBE_ROUNDS)?;
    let first = rounds_to_match(PROBE_ROUNDS, probe.kernel_ms, probe.h2d_ms);
    let second = pipeline.stage_times(first)?;
    Ok(rounds_to_match(first, second.kernel_ms, second.h2d_ms))
}

/// Each stage alone (copy in, kernel, copy out), the median of `runs` timings.
fn stage_medians(pipeline: &mut Overlap, rounds: u32, runs: usize) -> Result<StageTimes, ExampleError> {
    let (mut h2d, mut kernel, mut d2h) = (Samples::default(), Samples::default(), Samples::default());
    for _ in 0..runs {
        let stages = pipeline.stage_times(rounds)?;
        h2d.push(stages.h2d_ms);
        kernel.push(stages.kernel_ms);
        d2h.push(stages.d2h_ms);
    }
    Ok(StageTimes { h2d_ms: h2d.median(), kernel_ms: kernel.median(), d2h_ms: d2h.median() })
}

/// Priorities: an urgent job's latency behind a flood of kernels, on a stream of the same and
/// of the greatest priority, every output checked.
fn priority_phase(
    options: &Options, rng: &mut Rng, salt: u32, flood_len: u32, report: &mut Report,
) -> Result<PriorityRun, ExampleError> {
    let flood_input = inputs(rng, flood_len as usize);
    let urgent_input = inputs(rng, options.urgent_elements as usize);
    let flood_table = Table::new(options.flood_rounds, salt);
    let urgent_table = Table::new(options.urgent_rounds, salt);
    let mut priorities = Priorities::new(&flood_input, options.flood_kernels, &urgent_input, salt)?;
    let (least, greatest) = priorities.range;
    let got = priorities.stream_priorities()?;
    report.check(
        "stream priorities as requested",
        got == (least, least, greatest),
        format!(
            "device range least {least} .. greatest {greatest}; flood {}, urgent same {}, urgent high {}",
            got.0, got.1, got.2
        ),
    );
    let mut priority_checks = FirstFailure::default();
    let mut latency: Vec<(Mode, Samples)> = Vec::new();
    let mut flood_kernel = Samples::default();
    for mode in Mode::ALL {
        let mut samples = Samples::default();
        for run in 0..=options.runs {
            let trial = priorities.trial(mode, options.flood_rounds, options.urgent_rounds)?;
            if run > 0 {
                samples.push(trial.urgent_ms * 1e3);
                if mode != Mode::Idle {
                    flood_kernel.push(trial.flood_kernel_ms);
                }
            }
            let outcome = priorities.check(mode, &flood_input, &flood_table, &urgent_input, &urgent_table)?;
            priority_checks.record(outcome.map(|m| format!("run {run}: {m}")));
        }
        latency.push((mode, samples));
    }
    let us = |mode: Mode| latency.iter().find(|(m, _)| *m == mode).map_or(f64::NAN, |(_, s)| s.median());
    for (mode, samples) in &latency {
        report.figure(&format!("urgent_{}_us", mode.name()), samples.median(), "us");
    }
    report.figure("priority_gain", us(Mode::SamePriority) / us(Mode::HighPriority), "x");
    report.figure("flood_kernel_ms", flood_kernel.median(), "ms");
    priority_checks.report(report, "priority outputs match CPU reference", "urgent and flood output");
    let priority_data: Vec<serde_json::Value> =
        latency.iter().map(|(m, s)| json!({ "mode": m.name(), "urgent_us": stats(s) })).collect();

    Ok(PriorityRun { least, greatest, data: priority_data })
}

/// Work stealing between streams: a static split against dynamic dispatch of chunks of
/// skewed cost, every output checked.
fn stealing_phase(
    options: &Options, rng: &mut Rng, salt: u32, report: &mut Report,
) -> Result<StealingRun, ExampleError> {
    let costs = Costs::build(
        rng,
        options.steal_chunks as usize,
        options.hot_span as usize,
        options.hot_one_in as usize,
        options.light_rounds,
        options.heavy_factor,
    );
    let steal_input = inputs(rng, options.steal_chunks as usize * options.steal_chunk_len as usize);
    let tables: Vec<Table> = costs.distinct().into_iter().map(|r| Table::new(r, salt)).collect();
    let imbalance = costs.static_imbalance(options.steal_streams as usize);
    let mut stealing = Stealing::new(
        &steal_input,
        options.steal_chunk_len as usize,
        costs.clone(),
        options.steal_streams as usize,
        salt,
    )?;
    let mut steal_checks = FirstFailure::default();
    let (policies, dispatch_ok) =
        run_policies(&mut stealing, options, &steal_input, &tables, &mut steal_checks)?;
    let static_ms = policies[0].1.median();
    let dynamic_ms = policies[1].1.median();
    report.figure("static_split_ms", static_ms, "ms");
    report.figure("dynamic_dispatch_ms", dynamic_ms, "ms");
    report.figure("stealing_over_static", static_ms / dynamic_ms, "x");
    report.figure("static_imbalance", imbalance, "x");
    steal_checks.report(report, "work-stealing outputs match CPU reference", "chunk");
    report.check(
        "every chunk dispatched to a stream",
        dispatch_ok,
        format!(
            "{} chunks per run, each queued exactly once on one of {} streams",
            costs.rounds.len(),
            options.steal_streams
        ),
    );

    Ok(StealingRun {
        imbalance,
        hot_spans: costs.hot_spans,
        spans: costs.spans,
        data: policies_json(&policies),
    })
}

/// Runs the static split and dynamic dispatch `runs` times each after a warm-up, every output
/// checked into `checks`: each policy's times and chunks per stream (last run), and whether
/// every chunk went to a stream that exists.
fn run_policies(
    stealing: &mut Stealing, options: &Options, steal_input: &[u32], tables: &[Table],
    steal_checks: &mut FirstFailure,
) -> Result<(Vec<PolicyRun>, bool), ExampleError> {
    let mut dispatch_ok = true;
    let mut policies: Vec<PolicyRun> = Vec::new();
    for policy in [Policy::StaticSplit, Policy::Dynamic { depth: options.depth as usize }] {
        let mut samples = Samples::default();
        let mut chunks_per_stream = Vec::new();
        for run in 0..=options.runs {
            let (ms, owner) = stealing.run(policy)?;
            if run > 0 {
                samples.push(ms);
            }
            dispatch_ok &= owner.iter().all(|&k| k < options.steal_streams as usize);
            chunks_per_stream = count_per_stream(&owner, options.steal_streams as usize);
            let outcome = stealing.check(steal_input, tables)?;
            steal_checks.record(outcome.map(|m| format!("{} run {run}: {m}", policy.name())));
        }
        policies.push((policy, samples, chunks_per_stream));
    }
    Ok((policies, dispatch_ok))
}

/// One stealing policy's times, and the chunks each stream ran in its last run.
type PolicyRun = (Policy, Samples, Vec<usize>);

/// Each stealing policy's times and chunks per stream, as JSON.
fn policies_json(policies: &[PolicyRun]) -> serde_json::Value {
    json!(policies
        .iter()
        .map(|(p, s, per)| json!({ "policy": p.name(), "ms": stats(s), "chunks_per_stream": per }))
        .collect::<Vec<_>>())
}

/// How many chunks each of `streams` streams ran, from each chunk's stream (`owner`); a
/// stream index out of range counts nowhere (the dispatch check reports it).
fn count_per_stream(owner: &[usize], streams: usize) -> Vec<usize> {
    let mut counts = vec![0; streams];
    for &k in owner {
        if let Some(count) = counts.get_mut(k) {
            *count += 1;
        }
    }
    counts
}

/// The one-line summary for the chapter table, e.g.
/// `overlap 2.40x (12.00 vs 5.00 ms); priority 20.0x; stealing 1.50x`: serialized over
/// overlapped time on `streams` streams, urgent latency at the same over the greatest priority,
/// static split over dynamic dispatch.
///
/// ```
/// let mut report = chapter_common::Report::new("streams_events");
/// report.figure("serialized_ms", 12.0, "ms");
/// report.figure("overlapped_ms", 5.0, "ms");
/// report.figure("overlap", 2.4, "x");
/// report.figure("priority_gain", 20.0, "x");
/// report.figure("stealing_over_static", 1.5, "x");
/// assert_eq!(
///     streams_events::headline(&report),
///     "overlap 2.40x (12.00 vs 5.00 ms); priority 20.0x; stealing 1.50x"
/// );
/// ```
pub fn headline(report: &Report) -> String {
    format!(
        "overlap {:.2}x ({:.2} vs {:.2} ms); priority {:.1}x; stealing {:.2}x",
        report.figure_or_nan("overlap"),
        report.figure_or_nan("serialized_ms"),
        report.figure_or_nan("overlapped_ms"),
        report.figure_or_nan("priority_gain"),
        report.figure_or_nan("stealing_over_static"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headline_stream_count_is_always_timed() {
        let options = Options { streams: 5, stream_sweep: vec![8, 2, 2], ..Options::quick() };
        assert_eq!(options.stream_counts(), [2, 5, 8]);
    }

    #[test]
    fn defaults_and_quick_are_valid_and_bad_options_are_refused_by_name() {
        assert!(Options::quick().elements < Options::default().elements);
        chapter_common::assert_options_checked::<Program>(&[
            ("rounds", Options { rounds: Some(0), ..Options::quick() }),
            ("flood_kernels", Options { flood_kernels: 0, ..Options::quick() }),
            ("steal_streams", Options { steal_chunks: 2, steal_streams: 4, ..Options::quick() }),
            ("light_rounds", Options { light_rounds: MAX_ROUNDS, heavy_factor: 2, ..Options::quick() }),
            ("depth", Options { depth: 0, ..Options::quick() }),
        ]);
        chapter_common::assert_flags_refused::<Program>(&["--size=0", "--chunks=1", "--streams=0"]);
    }
}
