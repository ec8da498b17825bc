//! `cuda_graphs`: the same chain of small dependent kernels issued two ways.
//!
//! 1. **Stream**: every iteration queues the chain's `kernels` launches one by one
//!    (`cudaLaunchKernel` each), as ordinary code does.
//! 2. **Graph**: the chain is captured once from the stream (`cudaStreamBeginCapture` ..
//!    `cudaStreamEndCapture`), instantiated, and every iteration is one `cudaGraphLaunch`.
//!
//! Each kernel is small (a few thousand elements), so the work is launch-bound: the GPU waits
//! for the CPU to submit each kernel on the stream, while a graph hands it the whole chain at
//! once. Then the two ways of changing an instantiated graph without building it again:
//! 3. **per node**: `cudaGraphExecKernelNodeSetParams` gives one kernel node a new constant;
//! 4. **whole graph**: the chain is captured again with new constants and
//!    `cudaGraphExecUpdate` moves the exec to it.
//!
//! What the kernels compute is [`Arithmetic`]: the port's integer step ([`PortChain`]) or the
//! chapter listing's three float maps ([`ListingChain`], what `--book` runs).
//!
//! Every kernel works in place, and a timed run starts from the input and makes `iters` passes,
//! each continuing from the one before; the output after every run of every variant is
//! compared with the CPU reference for exactly `iters` passes. With the port's integer step
//! the comparison is bit for bit and every pass changes every element, so a pass that was
//! skipped (a graph that did not replay) or ran twice fails the check, not only a wrong last
//! pass. The listing's float maps are compared within [`MAP_TOLERANCE_ULPS`] (the GPU's `sinf`
//! is not the CPU's sine) and converge to a fixed point within a few passes, so for them short
//! runs of 1, 2 and 3 passes, which differ beyond the tolerance, count the passes. The stream's
//! and the graph's checksums are reported as data, not as a check of their own. The figures
//! are medians of `runs` timed runs (CUDA events around `iters` iterations) after one warm-up
//! run; the headline is `speedup = stream_us_per_iter / graph_us_per_iter`.

#![warn(missing_docs)]

mod program;

pub use program::Program;

mod chain;

use std::time::Instant;

use chapter_common::{Book, ExampleError, ListingNote, OptionCheck, Preset, Report, Rng, Samples};
use cuda_graph::graph::{Graph, GraphExec, HostLaunch};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DeviceBuffer, DeviceRepr, Event, Stream};
use serde_json::json;

pub use chain::{
    checksum, cpu_sin, model_passes, reference, reference_passes, ulp_distance, Arithmetic, Chain,
    ListingChain, MapStep, PortChain, Step, Value, MAP_TOLERANCE_ULPS,
};

/// The largest element count accepted (1 GiB per buffer).
pub const MAX_ELEMENTS: u32 = 1 << 28;

/// The most kernels in the chain.
pub const MAX_KERNELS: u32 = 4096;

/// What to run; the fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Options {
    /// Timed runs after one warm-up run; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the input and of the kernels' constants.
    #[arg(skip)]
    pub seed: u64,
    /// Elements each kernel processes, one thread each (default: 4096, or 1000 with --quick).
    #[arg(long = "size", value_name = "N")]
    pub elements: u32,
    /// Kernels in the chain, each working in place on the output buffer (default: 20, or 6
    /// with --quick).
    #[arg(long, value_name = "K")]
    pub kernels: u32,
    /// Iterations (passes of the whole chain) per timed run (default: 1000, or 20 with --quick).
    #[arg(long, value_name = "N")]
    pub iters: u32,
    /// Threads per block.
    #[arg(skip)]
    pub threads_per_block: u32,
    /// What the kernels compute: `port` (one integer step with seeded constants; the default)
    /// or `listing` (the chapter listing's three float maps in turn; the default with --book).
    #[arg(long, value_enum, value_name = "KIND")]
    pub arithmetic: Arithmetic,
}

impl Default for Options {
    /// Chapter scale: 20 dependent kernels of 4096 elements (16 blocks of 256 threads, a few
    /// microseconds of GPU work each: launch-bound), 1000 iterations per run, 5 runs.
    fn default() -> Options {
        Options {
            elements: 1 << 12,
            kernels: 20,
            iters: 1000,
            runs: 5,
            seed: 0x5eed,
            threads_per_block: 256,
            arithmetic: Arithmetic::Port,
        }
    }
}

impl Options {
    /// Small and fast (for tests and `--quick`): 6 kernels of 1000 elements, 20 iterations,
    /// two runs.
    pub fn quick() -> Options {
        Options { elements: 1000, kernels: 6, iters: 20, runs: 2, ..Options::default() }
    }

    /// The chapter listing's workload (`cuda_graphs.cu`): its three float kernels over 1 Mi
    /// elements in blocks of 256, 100 iterations.
    pub fn listing() -> Options {
        Options {
            elements: 1 << 20,
            kernels: 3,
            iters: 100,
            threads_per_block: 256,
            arithmetic: Arithmetic::Listing,
            ..Options::default()
        }
    }

    /// Refuses what cannot run, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        OptionCheck::new("cuda_graphs")
            .within("elements", self.elements, 1..=MAX_ELEMENTS)
            .rule("kernels", (2..=MAX_KERNELS).contains(&self.kernels), || {
                format!(
                    "kernels must be 2..={MAX_KERNELS} (one node's constant is changed), not {}",
                    self.kernels
                )
            })
            .at_least("iters", self.iters, 1)
            .at_least("runs", self.runs, 1)
            .threads_per_block(self.threads_per_block)
            .done()
    }
}

/// The chapter's own listing for this program: what `--book` runs, or why it runs nothing
/// (see [`Book`]).
pub fn book() -> Book<Options> {
    let options = Options::listing();
    Book::Preset {
        preset: Preset {
            quick: Options { elements: 1 << 14, iters: 10, runs: 2, ..options.clone() },
            options,
        },
        note: "cuda_graphs.cu: 1 Mi elements, three float kernels per iteration (x * 1.1 + 0.1, \
               sqrt(x * x + 1), sin(0.1 x)) from x = i / N, each 4096 blocks of 256, 100 iterations, \
               stream launches vs replays of the captured three, CUDA events around the 100. The same \
               arithmetic here, checked against the CPU within 8 ulps (the listing checks nothing). \
               Not as listed: the constants are kernel parameters; the figure is the median of timed \
               runs after a warm-up, stream and graph alternating (the listing times each loop once, \
               the stream loop first and cold, its end event after a host synchronize); the listing's \
               update demo (one kernel's grid resized) is not this port's. The port's default: 20 \
               integer kernels of 4096 elements, 1000 iterations.",
    }
}

/// The stream every variant runs on and the two events that time it.
struct Timer {
    stream: Stream,
    start: Event,
    end: Event,
}

/// One timed run: GPU time (between the events) and host time spent queuing, in ms.
struct Timed {
    gpu_ms: f64,
    enqueue_ms: f64,
}

impl Timer {
    /// Times `iters` iterations queued by `enqueue`: events before and after, then a wait.
    fn time(
        &self, iters: u32, mut enqueue: impl FnMut(&Stream) -> cuda_graph::Result<()>,
    ) -> cuda_graph::Result<Timed> {
        self.start.record(&self.stream)?;
        let host = Instant::now();
        for _ in 0..iters {
            enqueue(&self.stream)?;
        }
        let enqueue_ms = host.elapsed().as_secs_f64() * 1e3;
        self.end.record(&self.stream)?;
        self.end.synchronize()?;
        let gpu_ms = f64::from(Event::elapsed_ms(&self.start, &self.end)?);
        Ok(Timed { gpu_ms, enqueue_ms })
    }

    /// Copies `input` into `out`, queues `passes` iterations with `enqueue`, waits, and returns
    /// what `out` holds (untimed).
    fn passes<T: DeviceRepr>(
        &self, passes: u32, input: &DeviceBuffer<T>, out: &mut DeviceBuffer<T>,
        mut enqueue: impl FnMut(&Stream, &DeviceBuffer<T>) -> cuda_graph::Result<()>,
    ) -> cuda_graph::Result<Vec<T>> {
        out.copy_from_device_async(input, &self.stream)?;
        for _ in 0..passes {
            enqueue(&self.stream, out)?;
        }
        self.stream.synchronize()?;
        out.to_vec()
    }

    /// Copies `input` into `out`, launches `exec` once, waits, and returns what `out` holds.
    fn replay_once<T: DeviceRepr>(
        &self, exec: &GraphExec<HostLaunch>, input: &DeviceBuffer<T>, out: &mut DeviceBuffer<T>,
    ) -> cuda_graph::Result<Vec<T>> {
        self.passes(1, input, out, |stream, _| exec.launch(stream))
    }
}

/// Per-run samples of one variant, its last checksum, the first wrong output met and the
/// largest distance from the reference seen.
struct Variant {
    gpu_ms: Samples,
    enqueue_ms: Samples,
    mismatch: Option<String>,
    checksum: serde_json::Value,
    max_distance: u32,
    /// The warm-up's own GPU time: the way's first run in this process (ms).
    first_gpu_ms: f64,
}

impl Variant {
    fn new() -> Variant {
        Variant {
            gpu_ms: Samples::default(),
            enqueue_ms: Samples::default(),
            mismatch: None,
            checksum: json!(null),
            max_distance: 0,
            first_gpu_ms: f64::NAN,
        }
    }

    fn record<V: Value + ChecksumValue>(
        &mut self, run: usize, timed: Timed, out: &[V], want: &[V], label: &str,
    ) {
        if run > 0 {
            self.gpu_ms.push(timed.gpu_ms);
            self.enqueue_ms.push(timed.enqueue_ms);
        } else {
            self.first_gpu_ms = timed.gpu_ms;
        }
        self.checksum = V::checksum_json(out);
        self.max_distance = self.max_distance.max(max_distance(out, want));
        if self.mismatch.is_none() {
            self.mismatch = first_difference(out, want).map(|i| {
                format!("{label} run {run}: element {i} is {:x?}, want {:x?}", out.get(i), want.get(i))
            });
        }
    }
}

/// The checksum of a run's output, as JSON: the sum of the integers (exact), or of the floats.
trait ChecksumValue: Sized {
    fn checksum_json(values: &[Self]) -> serde_json::Value;
}

impl ChecksumValue for u32 {
    fn checksum_json(values: &[u32]) -> serde_json::Value {
        json!(checksum(values))
    }
}

impl ChecksumValue for f32 {
    fn checksum_json(values: &[f32]) -> serde_json::Value {
        json!(values.iter().map(|&v| f64::from(v)).sum::<f64>())
    }
}

/// The first index where `got` does not agree with `want` ([`Value::agrees`]); a length
/// difference counts (at the shorter end).
fn first_difference<V: Value>(got: &[V], want: &[V]) -> Option<usize> {
    if got.len() != want.len() {
        return Some(got.len().min(want.len()));
    }
    got.iter().zip(want).position(|(&g, &w)| !V::agrees(g, w))
}

/// How many elements do not agree (for the report's details).
fn count_different<V: Value>(got: &[V], want: &[V]) -> usize {
    got.iter().zip(want).filter(|(&g, &w)| !V::agrees(g, w)).count() + got.len().abs_diff(want.len())
}

/// The largest distance between `got` and `want`, element by element ([`Value::distance`]).
fn max_distance<V: Value>(got: &[V], want: &[V]) -> u32 {
    got.iter().zip(want).map(|(&g, &w)| V::distance(g, w)).max().unwrap_or(0)
}

/// Whether `a` and `b` are told apart by the comparison: some element lies more than twice
/// the tolerance from its counterpart, so no output agrees with both.
fn told_apart<V: Value>(a: &[V], b: &[V]) -> bool {
    a.len() != b.len() || a.iter().zip(b).any(|(&x, &y)| V::distance(x, y) > 2 * V::TOLERANCE)
}

/// How many short runs (1, 2, ... up to [`SHORT_RUN_PASSES`] passes of `steps` from `input`)
/// the model tells apart from one pass fewer and one more: the pass counts a run can prove.
fn countable_passes<C: Chain>(input: &[C::Value], steps: &[C::Step]) -> u32 {
    let at = |passes| model_passes::<C>(input, steps, passes);
    (1..=SHORT_RUN_PASSES)
        .take_while(|&passes| {
            let want = at(passes);
            told_apart(&want, &at(passes - 1)) && told_apart(&want, &at(passes + 1))
        })
        .count() as u32
}

/// How the outputs are compared, in words.
fn exactness<C: Chain>() -> String {
    match C::ARITHMETIC {
        Arithmetic::Port => "bit-exact".to_string(),
        Arithmetic::Listing => format!("within {MAP_TOLERANCE_ULPS} ulps"),
    }
}

/// Microseconds since `start`.
fn us_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e6
}

/// Host wall time (µs) of calls to `f(i)` for `i` in `0..2 * (pairs + 1)`, the first two
/// untimed (warm-up): `pairs` pairs of calls timed, the last call's `i` odd.
fn time_alternating(
    pairs: usize, mut f: impl FnMut(usize) -> cuda_graph::Result<()>,
) -> cuda_graph::Result<Samples> {
    let mut samples = Samples::default();
    for i in 0..2 * (pairs + 1) {
        let t = Instant::now();
        f(i)?;
        if i >= 2 {
            samples.push(us_since(t));
        }
    }
    Ok(samples)
}

/// What the kernels compute, in words (for the report).
fn arithmetic_note(arithmetic: Arithmetic) -> String {
    match arithmetic {
        Arithmetic::Port => "arithmetic: the port's integer step x = x * mul + add, x ^= x >> 15 (32-bit, \
                             seeded constants per kernel), checked bit for bit"
            .to_string(),
        Arithmetic::Listing => format!(
            "arithmetic: the listing's float kernels in turn, x * 1.1 + 0.1 (one fused multiply-add), \
             sqrt(x * x + 1) (the inner part fused) and sin(0.1 x) (sinf), from x = i / n; checked within \
             {MAP_TOLERANCE_ULPS} ulps of the CPU's model, whose only difference from the GPU is the sine"
        ),
    }
}

/// Whether `options` run the listing's sizes (so the report says what else differs from it).
fn listing_shaped(options: &Options) -> bool {
    options.arithmetic == Arithmetic::Listing || (options.elements == 1 << 20 && options.kernels == 3)
}

/// Where a run of `options` does what the listing does and where it does not: sizes and
/// launch shape, work, and how it is timed and checked.
fn listing_note(options: &Options) -> String {
    let mut note = ListingNote::default();
    note.put(
        options.elements == 1 << 20,
        "1 Mi elements",
        format!("{} elements (the listing: 1 Mi)", options.elements),
    );
    note.put(
        options.kernels == 3,
        "3 kernels an iteration",
        format!("{} kernels (the listing: 3)", options.kernels),
    );
    note.put(
        options.iters == 100,
        "100 iterations",
        format!("{} iterations (the listing: 100)", options.iters),
    );
    note.put(
        options.threads_per_block == 256,
        "blocks of 256, one thread per element",
        format!("blocks of {} (the listing: 256)", options.threads_per_block),
    );
    note.put(
        options.arithmetic == Arithmetic::Listing,
        "its float kernels from x = i / n",
        "the port's integer step (the listing: three float kernels)",
    );
    note.differs("the kernels' constants are parameters (the listing: literals)");
    note.differs(format!(
        "timed as the median of {} runs after a warm-up, stream and graph alternating, the end event \
         recorded after the last launch (the listing: one run each, the stream loop first and cold, the \
         end event after a host synchronize)",
        options.runs
    ));
    note.differs(
        "the graph is uploaded before it is timed; updates change one node's constant and the whole \
         graph (the listing resizes one kernel's grid)",
    );
    note.finish()
}

/// Runs the comparison and the two updates on device 0 and reports times and checks.
///
/// Errors are CUDA's (no device, a failed launch or capture) or invalid options; a wrong
/// result is not an error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    match options.arithmetic {
        Arithmetic::Port => run_chain::<PortChain>(options),
        Arithmetic::Listing => run_chain::<ListingChain>(options),
    }
}

/// [`run`] with the kernels of chain `C`: the two ways timed, the short runs (listing only),
/// the node-by-node graph and its set params, the whole-graph update, then the report.
fn run_chain<C: Chain>(options: &Options) -> Result<Report, ExampleError>
where
    C::Value: ChecksumValue,
{
    let (_, properties) = chapter_common::device_zero()?;
    let mut rng = Rng::new(options.seed);
    let host_input = C::input(options.elements, &mut rng);
    let steps = C::steps(options.kernels, &mut rng);
    let config = LaunchConfig::for_elements(options.elements, options.threads_per_block);
    let mut bench = Bench::<C> {
        timer: Timer { stream: Stream::new()?, start: Event::new()?, end: Event::new()? },
        input: DeviceBuffer::from_slice(&host_input)?,
        out_stream: DeviceBuffer::zeroed(options.elements as usize)?,
        out_graph: DeviceBuffer::zeroed(options.elements as usize)?,
        config,
        want: model_passes::<C>(&host_input, &steps, 1),
        host_input,
        steps,
    };

    // Capture once and instantiate once: the one-off costs, timed on the host (after the
    // kernels' one-off parameter checks and module load).
    C::prepare()?;
    let t = Instant::now();
    let graph = chain::capture_pass::<C>(&bench.timer.stream, config, &bench.steps, &bench.out_graph)?;
    let capture_us = us_since(t);
    let t = Instant::now();
    let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
    let instantiate_us = us_since(t);
    exec.upload(&bench.timer.stream)?;

    let (on_stream, in_graph) = bench.both_ways(options, &exec)?;
    let short_runs = if C::ARITHMETIC == Arithmetic::Listing { Some(bench.short_runs(&exec)?) } else { None };
    let set_params = bench.set_params(options, &mut rng)?;
    let update = bench.whole_update(options, &mut rng, &graph, &mut exec)?;

    let mut report = Report::new("cuda_graphs");
    let ways = Ways { on_stream: &on_stream, in_graph: &in_graph };
    ways.report_times(options, &mut report);
    report.figure("capture_us", capture_us, "us");
    report.figure("instantiate_us", instantiate_us, "us");
    report.figure("set_kernel_params_us", set_params.times.median(), "us");
    report.figure("exec_update_us", update.times.median(), "us");
    report.figure("reinstantiate_us", update.reinstantiate_us, "us");
    report.figure("kernels", f64::from(options.kernels), "kernels");
    report.figure("elements", f64::from(options.elements), "elements");
    let mut largest = ways.check(C::ARITHMETIC, options, &mut report);
    if let Some(short) = short_runs {
        largest = largest.max(short.check(options, &mut report));
    }
    largest = largest.max(bench.check_edits(&mut report, &set_params, &update));
    report_notes::<C>(options, &mut report, largest, &properties, graph.node_count()?, config);
    ways.report_data::<C>(options, &mut report, &bench.host_input, &bench.steps);
    Ok(report)
}

/// What every phase of [`run_chain`] works on: the timer, the input and the two outputs on the
/// device, the chain's input and steps on the host, and one pass's CPU model.
struct Bench<C: Chain> {
    timer: Timer,
    input: DeviceBuffer<C::Value>,
    out_stream: DeviceBuffer<C::Value>,
    out_graph: DeviceBuffer<C::Value>,
    config: LaunchConfig,
    host_input: Vec<C::Value>,
    steps: Vec<C::Step>,
    want: Vec<C::Value>,
}

/// The short runs' outcome: the first difference, whether one pass is told apart at all, the
/// largest distance, and how many pass counts were run.
struct ShortRuns {
    failure: Option<String>,
    apart: bool,
    distance: u32,
    countable: u32,
}

/// The node-by-node graph's outputs and times: as built, and after one node's constant changed.
struct SetParams<V> {
    built_out: Vec<V>,
    set_out: Vec<V>,
    want_changed: Vec<V>,
    /// The changed node, and its constants before and after, for the report.
    what: String,
    times: Samples,
}

/// The whole-graph update's output and times.
struct WholeUpdate<V> {
    update_out: Vec<V>,
    want_new: Vec<V>,
    times: Samples,
    reinstantiate_us: f64,
}

impl<C: Chain> Bench<C>
where
    C::Value: ChecksumValue,
{
    /// Stream launches vs graph replay, alternating; run 0 is the warm-up. Each run starts from
    /// the input (copied untimed, before the start event) and must leave exactly `iters` passes.
    fn both_ways(
        &mut self, options: &Options, exec: &GraphExec<HostLaunch>,
    ) -> Result<(Variant, Variant), ExampleError> {
        let want_run = model_passes::<C>(&self.host_input, &self.steps, options.iters);
        let (config, steps) = (self.config, &self.steps);
        let mut on_stream = Variant::new();
        let mut in_graph = Variant::new();
        for run in 0..=options.runs {
            self.out_stream.copy_from_device_async(&self.input, &self.timer.stream)?;
            let out = &self.out_stream;
            let timed = self
                .timer
                .time(options.iters, |stream| chain::launch_pass::<C>(stream, config, steps, out))?;
            on_stream.record(run, timed, &self.out_stream.to_vec()?, &want_run, "stream");

            self.out_graph.copy_from_device_async(&self.input, &self.timer.stream)?;
            let timed = self.timer.time(options.iters, |stream| exec.launch(stream))?;
            in_graph.record(run, timed, &self.out_graph.to_vec()?, &want_run, "graph");
        }
        Ok((on_stream, in_graph))
    }

    /// The listing's maps converge, so short runs (1 to 3 passes, each told apart from one pass
    /// fewer and one more) count the passes of both ways. A pass of many kernels converges
    /// sooner: the runs stop at the last pass count the model still tells apart, and at least
    /// one must be.
    fn short_runs(&mut self, exec: &GraphExec<HostLaunch>) -> Result<ShortRuns, ExampleError> {
        let (config, steps) = (self.config, &self.steps);
        let countable = countable_passes::<C>(&self.host_input, steps);
        let mut short = ShortRuns { failure: None, apart: countable >= 1, distance: 0, countable };
        for passes in 1..=countable {
            let want = model_passes::<C>(&self.host_input, steps, passes);
            let by_stream = self.timer.passes(passes, &self.input, &mut self.out_stream, |stream, out| {
                chain::launch_pass::<C>(stream, config, steps, out)
            })?;
            let by_graph = self
                .timer
                .passes(passes, &self.input, &mut self.out_graph, |stream, _| exec.launch(stream))?;
            for (way, got) in [("stream", &by_stream), ("graph", &by_graph)] {
                short.distance = short.distance.max(max_distance(got, &want));
                if short.failure.is_none() {
                    short.failure = first_difference(got, &want).map(|i| {
                        format!(
                            "{way}, {passes} passes: element {i} is {:?}, want {:?}",
                            got.get(i),
                            want.get(i)
                        )
                    });
                }
            }
        }
        Ok(short)
    }

    /// The same chain built node by node (which hands out the kernel nodes), then one node's
    /// constant changed in the exec with cudaGraphExecKernelNodeSetParams.
    fn set_params(&mut self, options: &Options, rng: &mut Rng) -> Result<SetParams<C::Value>, ExampleError> {
        let (built, built_nodes) = chain::build_pass::<C>(self.config, &self.steps, &self.out_graph)?;
        let mut built_exec = built.instantiate::<HostLaunch>(Default::default())?;
        let built_out = self.timer.replay_once(&built_exec, &self.input, &mut self.out_graph)?;
        let k = options.kernels as usize / 2;
        let mut changed = self.steps.clone();
        changed[k] = C::changed(self.steps[k], rng);
        let want_changed = model_passes::<C>(&self.host_input, &changed, 1);
        // Alternate old and new constant; the last call (an odd index) leaves the new one.
        let times = time_alternating(options.runs, |i| {
            let step = if i % 2 == 1 { changed[k] } else { self.steps[k] };
            C::set_node(&mut built_exec, &built_nodes[k], self.config, step, &self.out_graph)
        })?;
        let set_out = self.timer.replay_once(&built_exec, &self.input, &mut self.out_graph)?;
        let what = format!("node {k}: {:?} -> {:?}", self.steps[k], changed[k]);
        Ok(SetParams { built_out, set_out, want_changed, what, times })
    }

    /// The chain captured again with all-new constants; cudaGraphExecUpdate moves the captured
    /// exec to it (same topology, so no new instantiation).
    fn whole_update(
        &mut self, options: &Options, rng: &mut Rng, graph: &Graph, exec: &mut GraphExec<HostLaunch>,
    ) -> Result<WholeUpdate<C::Value>, ExampleError> {
        let new_steps = C::other_steps(options.kernels, rng);
        let want_new = model_passes::<C>(&self.host_input, &new_steps, 1);
        let recaptured =
            chain::capture_pass::<C>(&self.timer.stream, self.config, &new_steps, &self.out_graph)?;
        let times =
            time_alternating(options.runs, |i| exec.update(if i % 2 == 1 { &recaptured } else { graph }))?;
        let update_out = self.timer.replay_once(exec, &self.input, &mut self.out_graph)?;
        let t = Instant::now();
        drop(recaptured.instantiate::<HostLaunch>(Default::default())?);
        Ok(WholeUpdate { update_out, want_new, times, reinstantiate_us: us_since(t) })
    }

    /// The checks of the node-by-node graph, its set params and the whole-graph update; returns
    /// the largest distance from the CPU's model among their outputs.
    fn check_edits(
        &self, report: &mut Report, set: &SetParams<C::Value>, update: &WholeUpdate<C::Value>,
    ) -> u32 {
        let (n, want, exact) = (self.want.len(), &self.want, exactness::<C>());
        report.check(
            "node-by-node graph equals the captured one",
            first_difference(&set.built_out, want).is_none(),
            format!(
                "{} of {n} elements differ from the CPU reference ({exact})",
                count_different(&set.built_out, want)
            ),
        );
        report.check(
            "replay after set_kernel_params",
            first_difference(&set.set_out, &set.want_changed).is_none()
                && told_apart(&set.want_changed, want),
            format!(
                "{}; {} of {n} elements differ from the new reference, {} from the old ({exact})",
                set.what,
                count_different(&set.set_out, &set.want_changed),
                count_different(&set.set_out, want),
            ),
        );
        report.check(
            "replay after whole-graph update",
            first_difference(&update.update_out, &update.want_new).is_none() && told_apart(&update.want_new, want),
            format!(
                "recaptured with new constants; {} of {n} elements differ from the new reference, {} from the old \
                 ({exact})",
                count_different(&update.update_out, &update.want_new),
                count_different(&update.update_out, want),
            ),
        );
        [(&set.built_out, want), (&set.set_out, &set.want_changed), (&update.update_out, &update.want_new)]
            .into_iter()
            .map(|(out, reference)| max_distance(out, reference))
            .max()
            .unwrap_or(0)
    }
}

impl ShortRuns {
    /// The short runs' check; returns their largest distance from the CPU's model.
    fn check(self, options: &Options, report: &mut Report) -> u32 {
        let ShortRuns { failure, apart, distance, countable } = self;
        let detail = match (failure.clone(), apart) {
            (Some(first), _) => first,
            (None, false) => "the model's output of one pass is not told apart from the input or from two \
                              passes: these runs cannot count passes"
                .to_string(),
            (None, true) => format!(
                "stream and graph, 1 to {countable} passes from the input: each within {MAP_TOLERANCE_ULPS} ulps \
                 of its pass count (largest difference {distance} ulps), which the model tells apart from one \
                 pass fewer and one more{}",
                if countable < SHORT_RUN_PASSES {
                    format!(
                        " ({} passes of {} kernels converge too closely to be told apart)",
                        countable + 1,
                        options.kernels
                    )
                } else {
                    String::new()
                }
            ),
        };
        report.check(SHORT_RUNS_CHECK, failure.is_none() && apart, detail);
        distance
    }
}

/// The two timed ways, for the report.
struct Ways<'a> {
    on_stream: &'a Variant,
    in_graph: &'a Variant,
}

impl Ways<'_> {
    /// Per-iteration and per-kernel times, enqueue times and, for a listing-shaped run, the
    /// listing's own timing (each way's first run, the stream loop first, no warm-up).
    fn report_times(&self, options: &Options, report: &mut Report) {
        let (iters, kernels) = (f64::from(options.iters), f64::from(options.kernels));
        let stream_us = self.on_stream.gpu_ms.median() * 1e3 / iters;
        let graph_us = self.in_graph.gpu_ms.median() * 1e3 / iters;
        report.figure("stream_us_per_iter", stream_us, "us");
        report.figure("graph_us_per_iter", graph_us, "us");
        report.figure("speedup", stream_us / graph_us, "x");
        if listing_shaped(options) {
            let first_stream_us = self.on_stream.first_gpu_ms * 1e3 / iters;
            let first_graph_us = self.in_graph.first_gpu_ms * 1e3 / iters;
            report.figure("first_run_stream_us_per_iter", first_stream_us, "us");
            report.figure("first_run_graph_us_per_iter", first_graph_us, "us");
            report.figure("first_run_speedup", first_stream_us / first_graph_us, "x");
            report.note(format!(
                "timed as the listing times (each way's first run in this process, the stream loop first, no \
                 warm-up): graph {:.2}x over stream ({:.1} vs {:.1} µs/iter); the medians after a warm-up: \
                 {:.2}x. The listing's first launches also load its module, and its end events follow a host \
                 synchronize; the port loaded the module, captured and uploaded the graph before timing",
                first_stream_us / first_graph_us,
                first_graph_us,
                first_stream_us,
                stream_us / graph_us
            ));
        }
        report.figure("stream_us_per_kernel", stream_us / kernels, "us");
        report.figure("graph_us_per_kernel", graph_us / kernels, "us");
        report.figure("stream_enqueue_us_per_iter", self.on_stream.enqueue_ms.median() * 1e3 / iters, "us");
        report.figure("graph_enqueue_us_per_iter", self.in_graph.enqueue_ms.median() * 1e3 / iters, "us");
    }

    /// The two ways' checks (each run against the CPU's `iters` passes, compared as
    /// `arithmetic` is); returns their largest distance from it.
    fn check(&self, arithmetic: Arithmetic, options: &Options, report: &mut Report) -> u32 {
        for (name, variant) in [
            ("stream matches CPU reference", self.on_stream),
            ("graph replay matches CPU reference", self.in_graph),
        ] {
            let agreed = if arithmetic == Arithmetic::Port {
                format!(
                    "each of {} runs left exactly {} accumulated passes of {} kernels x {} elements, bit-exact",
                    options.runs + 1,
                    options.iters,
                    options.kernels,
                    options.elements
                )
            } else {
                format!(
                    "each of {} runs within {MAP_TOLERANCE_ULPS} ulps of {} passes of {} kernels x {} elements \
                     (largest difference {} ulps); the maps converge to a fixed point within a few passes, so \
                     these outputs do not count passes: the short runs do",
                    options.runs + 1,
                    options.iters,
                    options.kernels,
                    options.elements,
                    variant.max_distance
                )
            };
            report.check(name, variant.mismatch.is_none(), variant.mismatch.clone().unwrap_or(agreed));
        }
        self.on_stream.max_distance.max(self.in_graph.max_distance)
    }

    /// Each run's time, the arithmetic, and the checksums of both ways and of the CPU's model.
    fn report_data<C: Chain>(
        &self, options: &Options, report: &mut Report, input: &[C::Value], steps: &[C::Step],
    ) where
        C::Value: ChecksumValue,
    {
        let iters = f64::from(options.iters);
        let runs_json = |v: &Variant| json!(v.gpu_ms.0.iter().map(|ms| ms * 1e3 / iters).collect::<Vec<_>>());
        report.data(
            "runs_us_per_iter",
            json!({ "stream": runs_json(self.on_stream), "graph": runs_json(self.in_graph) }),
        );
        report.data("arithmetic", json!(C::ARITHMETIC.name()));
        // Implied by the two checks (both outputs equal the reference), so data, not a check.
        let cpu = C::Value::checksum_json(&model_passes::<C>(input, steps, options.iters));
        report.data(
            "checksum",
            json!({ "stream": self.on_stream.checksum, "graph": self.in_graph.checksum, "cpu": cpu }),
        );
        report.note(match C::ARITHMETIC {
            Arithmetic::Port => {
                "checksums (data) are not a separate check: stream and graph equal is implied by both matching \
                 the CPU reference"
            }
            Arithmetic::Listing => {
                "checksums (data) are sums of the outputs, not a separate check: both outputs are checked \
                 against the CPU model above"
            }
        });
    }
}

/// The report's notes: what the arithmetic is, what differs from the listing, the largest
/// distance from the CPU's model, the device and launch shape, how times are taken.
fn report_notes<C: Chain>(
    options: &Options, report: &mut Report, largest: u32, properties: &cuda_graph::DeviceProperties,
    nodes: usize, config: LaunchConfig,
) {
    if C::ARITHMETIC == Arithmetic::Listing {
        report.figure("max_ulps_from_cpu", f64::from(largest), "ulps");
    }
    report.note(arithmetic_note(C::ARITHMETIC));
    if listing_shaped(options) {
        report.note(listing_note(options));
    }
    if C::ARITHMETIC == Arithmetic::Listing {
        report.note(format!(
            "largest difference between the GPU's outputs and the CPU's model: {largest} ulps (allowed \
             {MAP_TOLERANCE_ULPS}; the GPU's sinf against the CPU's f64 sine rounded to f32)"
        ));
    }
    report.note(format!(
        "{} ({} SMs): {} kernels x {} blocks of {} threads per iteration, {} iterations per run; \
         the captured graph has {nodes} nodes",
        properties.name,
        properties.multiprocessors,
        options.kernels,
        config.grid.x,
        options.threads_per_block,
        options.iters
    ));
    report.note(
        "times per iteration are CUDA-event times around a whole run divided by its iterations; \
         enqueue times are host time spent in the launch calls",
    );
}
/// The most passes of the listing's short runs (from 1).
const SHORT_RUN_PASSES: u32 = 3;

/// The check that short runs count passes (the listing's arithmetic only).
pub const SHORT_RUNS_CHECK: &str = "short runs count passes (up to 3, stream and graph)";

/// The one-line summary for the chapter table, e.g.
/// `graph 1.62x over stream (12.3 vs 19.9 µs/iter)`.
///
/// ```
/// let mut report = chapter_common::Report::new("cuda_graphs");
/// report.figure("stream_us_per_iter", 19.9, "us");
/// report.figure("graph_us_per_iter", 12.3, "us");
/// report.figure("speedup", 19.9 / 12.3, "x");
/// assert_eq!(cuda_graphs::headline(&report), "graph 1.62x over stream (12.3 vs 19.9 µs/iter)");
/// ```
pub fn headline(report: &Report) -> String {
    format!(
        "graph {:.2}x over stream ({:.1} vs {:.1} µs/iter)",
        report.figure_or_nan("speedup"),
        report.figure_or_nan("graph_us_per_iter"),
        report.figure_or_nan("stream_us_per_iter")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_quick_are_valid_and_bad_options_are_refused_by_name() {
        assert!(Options::quick().iters < Options::default().iters);
        chapter_common::assert_options_checked::<Program>(&[(
            "threads_per_block",
            Options { threads_per_block: 100, ..Options::quick() },
        )]);
        chapter_common::assert_flags_refused::<Program>(&["--size=0", "--kernels=1", "--iters=0"]);
    }

    #[test]
    fn differences_are_found_and_counted() {
        assert_eq!(first_difference(&[1, 2, 3], &[1, 2, 3]), None);
        assert_eq!(first_difference(&[1, 5, 3], &[1, 2, 4]), Some(1));
        assert_eq!(first_difference(&[1], &[1, 2]), Some(1));
        assert_eq!(count_different(&[1, 5, 3], &[1, 2, 4]), 2);
        assert_eq!(count_different(&[1], &[1, 2]), 1);
    }

    #[test]
    fn floats_agree_within_the_tolerance_and_are_told_apart_beyond_twice_it() {
        let x = 0.1f32;
        let off = |ulps: u32| f32::from_bits(x.to_bits() + ulps);
        assert_eq!(first_difference(&[x, x], &[x, off(MAP_TOLERANCE_ULPS)]), None);
        assert_eq!(first_difference(&[x, x], &[x, off(MAP_TOLERANCE_ULPS + 1)]), Some(1));
        assert_eq!(count_different(&[x, off(9), off(30)], &[x, x, x]), 2);
        assert_eq!(max_distance(&[x, off(9), off(30)], &[x, x, x]), 30);
        assert!(!told_apart(&[x], &[off(2 * MAP_TOLERANCE_ULPS)]));
        assert!(told_apart(&[x], &[off(2 * MAP_TOLERANCE_ULPS + 1)]));
        // Integers: any difference tells them apart.
        assert!(told_apart(&[1u32], &[2]) && !told_apart(&[1u32], &[1]));
        assert_eq!(exactness::<PortChain>(), "bit-exact");
        assert_eq!(exactness::<ListingChain>(), "within 8 ulps");
    }

    #[test]
    fn short_runs_count_every_pass_of_three_kernels_and_fewer_of_many() {
        let count = |options: &Options| {
            let mut rng = Rng::new(options.seed);
            let input = ListingChain::input(options.elements, &mut rng);
            let steps = ListingChain::steps(options.kernels, &mut rng);
            countable_passes::<ListingChain>(&input, &steps)
        };
        let book = Options { arithmetic: Arithmetic::Listing, ..Options::quick() };
        let listing = Options { kernels: 3, ..book.clone() };
        assert_eq!(count(&listing), SHORT_RUN_PASSES);
        let many = count(&book);
        assert!((1..SHORT_RUN_PASSES).contains(&many), "{} kernels: {many}", book.kernels);
    }

    #[test]
    fn the_book_preset_runs_the_listings_arithmetic_and_says_what_differs() {
        use chapter_common::ChapterProgram;
        let book = Program::book_options(false).expect("a --book preset");
        assert_eq!(
            (book.arithmetic, book.elements, book.kernels, book.iters),
            (Arithmetic::Listing, 1 << 20, 3, 100)
        );
        assert_eq!(Options::default().arithmetic, Arithmetic::Port);
        let note = listing_note(&book);
        assert!(
            note.starts_with(
                "as the listing: 1 Mi elements, 3 kernels an iteration, 100 iterations, blocks of 256, one thread \
                 per element, its float kernels from x = i / n; not as the listing: the kernels' constants"
            ),
            "{note}"
        );
        assert!(note.contains("median of 5 runs after a warm-up"), "{note}");
        let integer = Options { arithmetic: Arithmetic::Port, ..book.clone() };
        assert!(listing_shaped(&integer) && !listing_shaped(&Options::default()));
        assert!(listing_note(&integer).contains("the port's integer step (the listing: three float kernels)"));
        assert!(arithmetic_note(Arithmetic::Listing).contains("sqrt(x * x + 1)"));
        assert!(arithmetic_note(Arithmetic::Port).contains("bit for bit"));
    }

    #[test]
    fn the_arithmetic_is_a_flag() {
        use clap::{Args, FromArgMatches};
        for (flag, want) in
            [("--arithmetic=listing", Arithmetic::Listing), ("--arithmetic=port", Arithmetic::Port)]
        {
            let command = Options::augment_args_for_update(clap::Command::new("cuda_graphs"));
            let matches = command.try_get_matches_from(["cuda_graphs", flag]).expect(flag);
            let mut options = Options::quick();
            options.update_from_arg_matches(&matches).expect(flag);
            assert_eq!(options.arithmetic, want, "{flag}");
            assert_eq!(want.name(), flag.trim_start_matches("--arithmetic="));
        }
    }
}
