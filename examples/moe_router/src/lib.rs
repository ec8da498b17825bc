//! `moe_router`: the device-launch guide's mixture-of-experts example, with the dispatch on
//! the GPU.
//!
//! Every step routes `tokens` tokens to `experts` experts (each token to its `top_k` best by
//! a seeded integer gate), runs each expert (a small `hidden x hidden` integer transform) on
//! the tokens routed to it, and combines every token's expert outputs weighted by its gate
//! scores. Two ways to run a step:
//! - **device**: one host launch of the router's graph ([`device_launch::Launcher`]). The
//!   router kernel scores the tokens and builds a token list per expert; its last block to
//!   finish fire-and-forgets the device graph of every expert that received tokens (one
//!   launch per expert graph per step) and tail-launches the combine graph, which runs after
//!   the router and every expert graph. No host round trip.
//! - **host-driven**: the router kernel without launches, a copy of the per-expert counts to
//!   the host and a wait (the round trip), one host launch per busy expert (sized by its
//!   count), then the combine.
//!
//! Both must leave the CPU model's combined output bit for bit ([`model`]), route exactly the
//! model's number of tokens to every expert (counted by the router and, separately, by the
//! experts themselves) and launch exactly one expert per busy expert per step; device-side
//! launch failures are read from an [`ErrorSlot`]. Figures are medians of `runs` timed runs
//! after one warm-up (CUDA events around `iters` steps); the headline is host-driven time over
//! device time per step (`speedup`).

#![warn(missing_docs)]

mod program;

pub use program::Program;

mod kernels;
pub mod model;

use chapter_common::{Book, ExampleError, OptionCheck, Report, Samples};
use cuda_graph::graph::Graph;
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{CudaError, DeviceBuffer, DevicePtr, Event, PinnedBuffer, Stream};
use device_launch::{
    instantiate_for_device, DeviceExec, DeviceExecArg, DeviceExecTable, DeviceExecTableArg, ErrorSlot,
    Launcher, RawErrorSlot, Uploaded,
};
use kernels::{moe_combine, moe_expert, moe_finalize, moe_route, moe_route_dispatch};
use serde_json::json;

/// Threads per block of the routers, a token each (`MOE_ROUTE_THREADS`).
pub const ROUTE_THREADS: u32 = 128;
/// The most experts (`MOE_MAX_EXPERTS`): one fire-and-forget launch each per step, within
/// CUDA's 120 per launching kernel (and one `moe_finalize` thread each).
pub const MAX_EXPERTS: u32 = 64;
/// The most tokens.
pub const MAX_TOKENS: u32 = 1 << 20;
/// The most features per token.
pub const MAX_HIDDEN: u32 = 256;
/// Threads per block of the expert and combine kernels.
const WORK_THREADS: u32 = 256;
/// The most blocks of a grid-stride kernel.
const MAX_BLOCKS: u32 = 4096;

/// The layout of the `counters` array (the `MOE_*` defines of `kernels/moe.cu`).
mod counters {
    use super::MAX_EXPERTS;
    /// `[e]`: pairs routed to expert `e` this step.
    pub const COUNTS: usize = 0;
    /// `[e]`: the sum of the counts of all finished steps.
    pub const TOTALS: usize = MAX_EXPERTS as usize;
    /// `[e]`: pairs expert `e`'s kernel processed.
    pub const PROCESSED: usize = 2 * MAX_EXPERTS as usize;
    /// Blocks of the router that finished this step.
    pub const TICKET: usize = 3 * MAX_EXPERTS as usize;
    /// Expert graphs fire-and-forgotten by the device router (accepted launches).
    pub const LAUNCHED: usize = TICKET + 1;
    /// Steps whose combine finished.
    pub const STEPS: usize = TICKET + 2;
    /// Length of the array.
    pub const LEN: usize = TICKET + 3;
}

/// What to run; the fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Options {
    /// Timed runs of each way after one warm-up; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the tokens and weights.
    #[arg(skip)]
    pub seed: u64,
    /// Tokens routed per step (default: 2048, or 256 with --quick).
    #[arg(long, value_name = "N")]
    pub tokens: u32,
    /// Features per token; each expert is a `hidden x hidden` transform (default: 64, or 32 with
    /// --quick).
    #[arg(long, value_name = "D")]
    pub hidden: u32,
    /// Experts, each its own device graph (default: 8; at most 64).
    #[arg(long, value_name = "E")]
    pub experts: u32,
    /// Experts per token, 1 or 2 (default: 2).
    #[arg(long, value_name = "K")]
    pub top_k: u32,
    /// Routing steps per timed run (default: 200, or 10 with --quick).
    #[arg(long, value_name = "N")]
    pub iters: u32,
}

impl Default for Options {
    /// Chapter scale: 2048 tokens of 64 features, 8 experts, top-2 (a few microseconds of GPU
    /// work per expert: the dispatch is what costs), 200 steps per run, 5 runs.
    fn default() -> Options {
        Options { tokens: 2048, hidden: 64, experts: 8, top_k: 2, iters: 200, runs: 5, seed: 0x5eed }
    }
}

impl Options {
    /// Small and fast (for tests and `--quick`): 256 tokens of 32 features, 10 steps, two runs.
    pub fn quick() -> Options {
        Options { tokens: 256, hidden: 32, iters: 10, runs: 2, ..Options::default() }
    }

    /// Refuses what cannot run, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        OptionCheck::new("moe_router")
            .within("tokens", self.tokens, 1..=MAX_TOKENS)
            .within("hidden", self.hidden, 1..=MAX_HIDDEN)
            .rule("experts", (2..=MAX_EXPERTS).contains(&self.experts), || {
                format!(
                    "experts must be 2..={MAX_EXPERTS} (one fire-and-forget launch each per step), not {}",
                    self.experts
                )
            })
            .rule("top_k", (1..=2).contains(&self.top_k), || {
                format!("top_k must be 1 or 2, not {}", self.top_k)
            })
            .at_least("iters", self.iters, 1)
            .at_least("runs", self.runs, 1)
            .done()
    }
}

/// The chapter's own listing for this program: what `--book` runs, or why it runs nothing
/// (see [`Book`]).
pub fn book() -> Book<Options> {
    Book::NoListing {
        note: "The device-launch guide's sketch (route: from thread 0 of block 0, a \
               fire-and-forget process_expert grid of 256-thread blocks sized (count + 255) / 256 per \
               expert with tokens, then a 1 x 256 reduce_results tail launch) states no token, expert \
               or hidden sizes and times nothing. The sizes, expert graphs and host-driven way are \
               the port's.",
    }
}

/// Blocks of `threads` threads covering `work` items, capped (the kernels grid-stride).
fn blocks(work: u32, threads: u32) -> u32 {
    work.div_ceil(threads).clamp(1, MAX_BLOCKS)
}

/// The buffers a step uses and the stream and events that time it.
struct Bench {
    stream: Stream,
    start: Event,
    end: Event,
    x: DeviceBuffer<u32>,
    /// Gate weights, then biases.
    gate: DeviceBuffer<u32>,
    w: DeviceBuffer<u32>,
    lists: DeviceBuffer<u32>,
    gates: DeviceBuffer<u32>,
    out: DeviceBuffer<u32>,
    y: DeviceBuffer<u32>,
    counters: DeviceBuffer<u32>,
    counters_host: PinnedBuffer<u32>,
    slot: ErrorSlot,
    options: Options,
}

/// What one timed run left.
struct Outcome {
    ms: f64,
    y: Vec<u32>,
    counters: Vec<u32>,
    /// Expert launches: counted by the device router, or by the host loop.
    launched: u64,
    refused: Option<String>,
}

/// The argument list of `moe_expert`.
type ExpertArgs =
    (DevicePtr<u32>, DevicePtr<u32>, DevicePtr<u32>, DevicePtr<u32>, u32, u32, u32, u32, DevicePtr<u32>);

/// The argument list of `moe_route`: the first nine of `moe_route_dispatch`'s.
type RouteArgs =
    (DevicePtr<u32>, DevicePtr<u32>, u32, u32, u32, u32, DevicePtr<u32>, DevicePtr<u32>, DevicePtr<u32>);

/// The argument list of `moe_route_dispatch`.
type DispatchArgs = (
    DevicePtr<u32>,
    DevicePtr<u32>,
    u32,
    u32,
    u32,
    u32,
    DevicePtr<u32>,
    DevicePtr<u32>,
    DevicePtr<u32>,
    DeviceExecTableArg,
    DeviceExecArg,
    DevicePtr<RawErrorSlot>,
);

/// The device way: one graph per expert, the combine graph, and the router's graph.
struct DeviceWay {
    /// The expert graphs (also held by the table in the router's arguments).
    _experts: Vec<DeviceExec<Uploaded>>,
    /// The combine graph (also held by the router's arguments).
    _combine: DeviceExec<Uploaded>,
    router: Launcher<DispatchArgs>,
}

impl Bench {
    fn new(inputs: &model::Inputs, options: &Options) -> Result<Bench, ExampleError> {
        let (t, h, k) = (options.tokens as usize, options.hidden as usize, options.top_k as usize);
        let gate: Vec<u32> = inputs.wg.iter().chain(&inputs.bias).copied().collect();
        Ok(Bench {
            stream: Stream::new()?,
            start: Event::new()?,
            end: Event::new()?,
            x: DeviceBuffer::from_slice(&inputs.x)?,
            gate: DeviceBuffer::from_slice(&gate)?,
            w: DeviceBuffer::from_slice(&inputs.w)?,
            lists: DeviceBuffer::zeroed(options.experts as usize * t)?,
            gates: DeviceBuffer::zeroed(t * k)?,
            out: DeviceBuffer::zeroed(t * k * h)?,
            y: DeviceBuffer::zeroed(t * h)?,
            counters: DeviceBuffer::zeroed(counters::LEN)?,
            counters_host: PinnedBuffer::zeroed(counters::LEN)?,
            slot: ErrorSlot::new()?,
            options: options.clone(),
        })
    }

    fn route_config(&self) -> LaunchConfig {
        LaunchConfig::new(self.options.tokens.div_ceil(ROUTE_THREADS), ROUTE_THREADS)
    }

    fn combine_config(&self) -> LaunchConfig {
        LaunchConfig::new(blocks(self.options.tokens * self.options.hidden, WORK_THREADS), WORK_THREADS)
    }

    fn route_args(&self) -> RouteArgs {
        let Options { tokens, hidden, experts, top_k, .. } = self.options;
        let (counters, lists, gates) = (self.counters.ptr(), self.lists.ptr(), self.gates.ptr());
        (self.x.ptr(), self.gate.ptr(), tokens, hidden, experts, top_k, counters, lists, gates)
    }

    fn expert_args(&self, expert: u32) -> ExpertArgs {
        let Options { tokens, hidden, top_k, .. } = self.options;
        (
            self.x.ptr(),
            self.w.ptr(),
            self.lists.ptr(),
            self.counters.ptr(),
            expert,
            tokens,
            hidden,
            top_k,
            self.out.ptr(),
        )
    }

    fn combine_args(&self) -> (DevicePtr<u32>, DevicePtr<u32>, u32, u32, u32, DevicePtr<u32>) {
        let Options { tokens, hidden, top_k, .. } = self.options;
        (self.out.ptr(), self.gates.ptr(), tokens, hidden, top_k, self.y.ptr())
    }

    /// Builds and uploads the expert graphs and the combine graph, and the router's graph
    /// that launches them.
    fn device_way(&self) -> Result<DeviceWay, ExampleError> {
        let Options { tokens, hidden, experts, top_k, .. } = self.options;
        // A device graph's shape is fixed when it is built: each expert's grid fits a balanced
        // share of the pairs, and the kernel's grid-stride loop covers a busier step.
        let share = (tokens * top_k).div_ceil(experts);
        let expert_config = LaunchConfig::new(blocks(share * hidden, WORK_THREADS), WORK_THREADS);
        let mut execs = Vec::with_capacity(experts as usize);
        for e in 0..experts {
            let graph = Graph::new()?;
            graph.add_kernel(moe_expert(), expert_config, self.expert_args(e), &[])?;
            execs.push(instantiate_for_device(&graph)?.upload(&self.stream)?);
        }
        let graph = Graph::new()?;
        let combine = graph.add_kernel(moe_combine(), self.combine_config(), self.combine_args(), &[])?;
        graph.add_kernel(
            moe_finalize(),
            LaunchConfig::new(1, MAX_EXPERTS),
            (self.counters.ptr(), experts),
            &[&combine],
        )?;
        let combine = instantiate_for_device(&graph)?.upload(&self.stream)?;
        let handles: Vec<_> = execs.iter().map(DeviceExec::handle).collect();
        let table = DeviceExecTable::new(&handles)?;
        // The host router's arguments, then what the device router launches with.
        let (x, gate, tokens, hidden, experts, top_k, counters, lists, gates) = self.route_args();
        let args = (
            x,
            gate,
            tokens,
            hidden,
            experts,
            top_k,
            counters,
            lists,
            gates,
            table.arg(),
            combine.handle().arg(),
            self.slot.ptr(),
        );
        let router = Launcher::new(moe_route_dispatch(), self.route_config(), args)?;
        Ok(DeviceWay { _experts: execs, _combine: combine, router })
    }

    /// Clears everything a run writes.
    fn reset(&mut self) -> Result<(), CudaError> {
        self.counters.memset_async(0, &self.stream)?;
        self.out.memset_async(0, &self.stream)?;
        self.y.memset_async(0, &self.stream)
    }

    /// `iters` steps one way, timed with events; then what they left.
    fn run(&mut self, device: Option<&DeviceWay>) -> Result<Outcome, ExampleError> {
        self.reset()?;
        let Options { hidden, experts, iters, .. } = self.options;
        let mut host_launched = 0u64;
        self.start.record(&self.stream)?;
        for _ in 0..iters {
            if let Some(way) = device {
                // One host call per step; the rest happens on the device.
                way.router.launch(&self.stream)?;
                continue;
            }
            moe_route().launch(&self.stream, self.route_config(), self.route_args())?;
            self.counters.copy_to_pinned_async(&mut self.counters_host, &self.stream)?;
            // Waits for the copy: the host's round trip.
            let mut counts = [0u32; MAX_EXPERTS as usize];
            let routed = counters::COUNTS..counters::COUNTS + experts as usize;
            counts[..experts as usize].copy_from_slice(&self.counters_host.as_slice()?[routed]);
            for (e, &count) in counts.iter().enumerate().take(experts as usize) {
                if count != 0 {
                    let config = LaunchConfig::new(blocks(count * hidden, WORK_THREADS), WORK_THREADS);
                    moe_expert().launch(&self.stream, config, self.expert_args(e as u32))?;
                    host_launched += 1;
                }
            }
            moe_combine().launch(&self.stream, self.combine_config(), self.combine_args())?;
            moe_finalize().launch(
                &self.stream,
                LaunchConfig::new(1, MAX_EXPERTS),
                (self.counters.ptr(), experts),
            )?;
        }
        self.end.record(&self.stream)?;
        self.end.synchronize()?;
        self.stream.synchronize()?;
        let ms = f64::from(Event::elapsed_ms(&self.start, &self.end)?);
        let refused = self.slot.take()?.err().map(|err| err.to_string());
        let counters = self.counters.to_vec()?;
        let launched = if device.is_some() { u64::from(counters[counters::LAUNCHED]) } else { host_launched };
        Ok(Outcome { ms, y: self.y.to_vec()?, counters, launched, refused })
    }
}

/// Per-run samples of one way and the first problem of each kind met.
#[derive(Default)]
struct Way {
    ms: Samples,
    counts: Option<String>,
    output: Option<String>,
    launches: Option<String>,
    /// This step's counts as the device last reported them (totals / steps).
    counts_per_step: Vec<f64>,
}

impl Way {
    fn record(&mut self, run: usize, outcome: Outcome, want: &model::Expected, iters: u32) {
        if run > 0 {
            self.ms.push(outcome.ms);
        }
        let c = &outcome.counters;
        let experts = want.counts.len();
        let steps = c[counters::STEPS];
        if self.counts.is_none() {
            let mut problem = (steps != iters).then(|| format!("{steps} steps completed, want {iters}"));
            for (e, &count) in want.counts.iter().enumerate() {
                let (total, processed) = (c[counters::TOTALS + e], c[counters::PROCESSED + e]);
                let want_total = count.wrapping_mul(iters);
                if problem.is_none() && (total != want_total || processed != want_total) {
                    problem = Some(format!(
                        "expert {e}: router counted {total} and the expert processed {processed} pairs over \
                         {iters} steps, want {want_total} ({count} per step)"
                    ));
                }
            }
            self.counts = problem.map(|p| format!("run {run}: {p}"));
        }
        if self.output.is_none() {
            if let Some(i) = outcome.y.iter().zip(&want.y).position(|(a, b)| a != b) {
                self.output = Some(format!("run {run}: y[{i}] = {:#x}, want {:#x}", outcome.y[i], want.y[i]));
            }
        }
        if self.launches.is_none() {
            let expected = u64::from(want.busy_experts) * u64::from(iters);
            if let Some(refused) = outcome.refused {
                self.launches = Some(format!("run {run}: {refused}"));
            } else if outcome.launched != expected {
                self.launches = Some(format!(
                    "run {run}: {} expert launches over {iters} steps, want {expected} ({} busy experts per step)",
                    outcome.launched, want.busy_experts
                ));
            }
        }
        self.counts_per_step =
            (0..experts).map(|e| f64::from(c[counters::TOTALS + e]) / f64::from(steps.max(1))).collect();
    }
}

/// Runs both ways on device 0 and reports times and checks.
///
/// Errors are CUDA's (no device, a failed launch) or invalid options; a wrong result is not an
/// error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    let (_, properties) = chapter_common::device_zero()?;
    let inputs =
        model::Inputs::new(options.seed, options.tokens, options.hidden, options.experts, options.top_k);
    let want = model::expected(&inputs);
    let mut bench = Bench::new(&inputs, options)?;
    let way = bench.device_way()?;
    // Alternating, run 0 is the warm-up (it also uploads the router's graph).
    let (mut on_device, mut on_host) = (Way::default(), Way::default());
    for run in 0..=options.runs {
        let outcome = bench.run(Some(&way))?;
        on_device.record(run, outcome, &want, options.iters);
        let outcome = bench.run(None)?;
        on_host.record(run, outcome, &want, options.iters);
    }
    let ways = Ways { options, want: &want, on_device, on_host };
    let mut report = Report::new("moe_router");
    ways.report_figures(&mut report);
    ways.report_checks(&mut report);
    ways.report_notes(&mut report, &properties);
    Ok(report)
}

/// Device and host-driven routing's steps, for the report.
struct Ways<'a> {
    options: &'a Options,
    want: &'a model::Expected,
    on_device: Way,
    on_host: Way,
}

impl Ways<'_> {
    /// Per-step times, the speedup, and the routing's shape.
    fn report_figures(&self, report: &mut Report) {
        let (options, want, on_device, on_host) = (self.options, self.want, &self.on_device, &self.on_host);
        let iters = f64::from(options.iters);
        let device_us = on_device.ms.median() * 1e3 / iters;
        let host_us = on_host.ms.median() * 1e3 / iters;
        report.figure("device_us_per_step", device_us, "us");
        report.figure("host_us_per_step", host_us, "us");
        report.figure("speedup", host_us / device_us, "x");
        report.figure("experts_launched_per_step", f64::from(want.busy_experts), "graphs");
        let busiest = want.counts.iter().copied().max().unwrap_or(0);
        report.figure("busiest_expert_tokens", f64::from(busiest), "tokens");
        report.figure("tokens", f64::from(options.tokens), "tokens");
        report.figure("experts", f64::from(options.experts), "experts");
        report.figure("top_k", f64::from(options.top_k), "experts");
    }

    /// Each way: tokens per expert, the combined output, one launch per busy expert.
    fn report_checks(&self, report: &mut Report) {
        let (options, want, on_device, on_host) = (self.options, self.want, &self.on_device, &self.on_host);
        let steps = (options.runs + 1) as u64 * u64::from(options.iters);
        for (label, way) in [("device routing", &on_device), ("host-driven routing", &on_host)] {
            report.check(
                &format!("{label}: tokens per expert equal the CPU model"),
                way.counts.is_none(),
                way.counts.clone().unwrap_or_else(|| {
                    format!(
                        "{steps} steps; counted by the router and by each expert: {:?} per step",
                        want.counts
                    )
                }),
            );
            report.check(
                &format!("{label}: combined output equals the CPU model"),
                way.output.is_none(),
                way.output.clone().unwrap_or_else(|| {
                    format!(
                        "{steps} steps of {} tokens x {} features, bit-exact",
                        options.tokens, options.hidden
                    )
                }),
            );
            report.check(
                &format!("{label}: one launch per busy expert per step"),
                way.launches.is_none(),
                way.launches.clone().unwrap_or_else(|| {
                    format!("{} expert launches per step, none refused", want.busy_experts)
                }),
            );
        }
    }

    /// The device and sizes, what a step is for each way, every run and the tokens per expert.
    fn report_notes(&self, report: &mut Report, properties: &cuda_graph::DeviceProperties) {
        let (options, want, on_device, on_host) = (self.options, self.want, &self.on_device, &self.on_host);
        let iters = f64::from(options.iters);
        report.note(format!(
            "{} ({} SMs): {} tokens x {} features, {} experts, top-{}; {} steps per run",
            properties.name,
            properties.multiprocessors,
            options.tokens,
            options.hidden,
            options.experts,
            options.top_k,
            options.iters
        ));
        report.note(
            "device: one host launch per step (router graph -> expert graphs fire-and-forget -> combine \
         graph tail-launched); host-driven: route, copy counts back and wait, launch each busy \
         expert, combine",
        );
        let runs_json = |w: &Way| json!(w.ms.0.iter().map(|ms| ms * 1e3 / iters).collect::<Vec<_>>());
        report
            .data("runs_us_per_step", json!({ "device": runs_json(on_device), "host": runs_json(on_host) }));
        report.data(
        "tokens_per_expert",
        json!({ "model": want.counts, "device": on_device.counts_per_step, "host": on_host.counts_per_step }),
    );
    }
}

/// The one-line summary for the chapter table, e.g.
/// `device routing 2.41x over host-driven (15.2 vs 36.6 µs/step)`.
///
/// ```
/// let mut report = chapter_common::Report::new("moe_router");
/// report.figure("device_us_per_step", 15.2, "us");
/// report.figure("host_us_per_step", 36.6, "us");
/// report.figure("speedup", 36.6 / 15.2, "x");
/// assert_eq!(moe_router::headline(&report), "device routing 2.41x over host-driven (15.2 vs 36.6 µs/step)");
/// ```
pub fn headline(report: &Report) -> String {
    format!(
        "device routing {:.2}x over host-driven ({:.1} vs {:.1} µs/step)",
        report.figure_or_nan("speedup"),
        report.figure_or_nan("device_us_per_step"),
        report.figure_or_nan("host_us_per_step")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_quick_are_valid_and_bad_options_are_refused_by_name() {
        assert!(Options::quick().iters < Options::default().iters);
        chapter_common::assert_options_checked::<Program>(&[
            ("hidden", Options { hidden: MAX_HIDDEN + 1, ..Options::quick() }),
            ("experts", Options { experts: MAX_EXPERTS + 1, ..Options::quick() }),
        ]);
        chapter_common::assert_flags_refused::<Program>(&[
            "--tokens=0",
            "--experts=1",
            "--top-k=3",
            "--iters=0",
        ]);
    }

    #[test]
    fn the_counter_layout_matches_the_kernels() {
        let source = include_str!("../kernels/moe.cu");
        assert!(source.contains(&format!("#define MOE_MAX_EXPERTS {MAX_EXPERTS}u")));
        assert!(source.contains(&format!("#define MOE_ROUTE_THREADS {ROUTE_THREADS}u")));
        assert_eq!(counters::TOTALS, MAX_EXPERTS as usize);
        assert_eq!((counters::LAUNCHED, counters::STEPS, counters::LEN), (193, 194, 195));
    }

    #[test]
    fn grids_are_at_least_one_block_and_capped() {
        assert_eq!(blocks(0, 256), 1);
        assert_eq!(blocks(257, 256), 2);
        assert_eq!(blocks(u32::MAX, 256), MAX_BLOCKS);
    }
}
