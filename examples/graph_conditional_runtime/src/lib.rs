//! `graph_conditional_runtime`: who decides a data-dependent branch, the host or the graph?
//!
//! Every iteration a predicate kernel looks at the data and picks the heavy or the light
//! update, which changes the data the next predicate sees: a chain of decisions no one can
//! know in advance. Two ways to run it, with the same kernels' work:
//! - **host branching**: launch the predicate, copy its flag to pinned memory, wait, read it,
//!   launch the chosen update: one host-device round trip per iteration;
//! - **conditional node**: one graph, `predicate -> IF/ELSE { heavy } { light }`, whose
//!   predicate sets the node's condition with `cudaGraphSetConditional`; launched once per
//!   iteration, back to back, with no synchronization at all.
//!
//! Both must take the CPU model's branch at every iteration (each update kernel appends its
//! code to a device-side trace) and end with its data, bit for bit. Figures are medians over
//! `runs` timed runs after one warm-up (CUDA events); the headline is host time over graph
//! time per iteration (`conditional_over_host`).

#![warn(missing_docs)]

mod program;

pub use program::Program;

pub mod model;

use chapter_common::{Book, ExampleError, OptionCheck, Preset, Report, Rng, Samples};
use cuda_graph::graph::{Graph, GraphExec, HostLaunch};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{ConditionalHandle, CudaError, DeviceBuffer, DevicePtr, Event, PinnedBuffer, Stream};
use serde_json::json;

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu); the declarations are private to this crate, whose launches pass counts
// no larger than the buffers they point into.
cuda_graph::kernels! {
    /// The predicate, setting an IF/ELSE node's condition (one warp).
    unsafe fn gcr_predicate_graph(handle: ConditionalHandle, data: DevicePtr<u32>, n: u32);
    /// The predicate, storing its decision in `flag[0]` (one warp).
    unsafe fn gcr_predicate_host(flag: DevicePtr<u32>, data: DevicePtr<u32>, n: u32);
    /// The heavy update: `rounds` LCG steps per element; records code 1 in the trace.
    unsafe fn gcr_heavy(data: DevicePtr<u32>, n: u32, rounds: u32, trace: DevicePtr<u32>, step: DevicePtr<u32>);
    /// The light update; records code 2 in the trace.
    unsafe fn gcr_light(data: DevicePtr<u32>, n: u32, trace: DevicePtr<u32>, step: DevicePtr<u32>);
}

/// What to run; the fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Options {
    /// Timed runs of each way after one warm-up; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the data.
    #[arg(skip)]
    pub seed: u64,
    /// Iterations (decisions) per run (default 1000, or 100 with --quick).
    #[arg(long, value_name = "N")]
    pub iters: u32,
    /// Elements of the data (default 16384, or 4096 with --quick).
    #[arg(long, value_name = "N")]
    pub size: u32,
    /// LCG rounds per element of the heavy update (default 16).
    #[arg(long, value_name = "N")]
    pub rounds: u32,
    /// Threads per block of the updates.
    #[arg(skip)]
    pub threads_per_block: u32,
}

impl Default for Options {
    /// 1000 iterations over 16 Ki elements, 16 rounds for the heavy update: each kernel takes a
    /// few microseconds, so how the next one gets launched is what the time is made of.
    fn default() -> Options {
        Options { iters: 1000, size: 1 << 14, rounds: 16, threads_per_block: 256, runs: 5, seed: 0x5eed }
    }
}

impl Options {
    /// Small and fast (for tests and `--quick`): 100 iterations over 4 Ki elements, two runs.
    pub fn quick() -> Options {
        Options { iters: 100, size: 1 << 12, runs: 2, ..Options::default() }
    }

    /// Refuses what the kernels cannot run, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        OptionCheck::new("graph_conditional_runtime")
            .within("iters", self.iters, 1..=1 << 24)
            .within("size", self.size, 1..=1 << 26)
            .within("rounds", self.rounds, 0..=1 << 12)
            .threads_per_block(self.threads_per_block)
            .at_least("runs", self.runs, 1)
            .done()
    }
}

/// The chapter's own listing for this program: what `--book` runs, or why it runs nothing
/// (see [`Book`]).
pub fn book() -> Book<Options> {
    let options =
        Options { iters: 5000, size: 1 << 16, rounds: 32, threads_per_block: 256, ..Options::default() };
    Book::Preset {
        preset: Preset { quick: Options { iters: 100, size: 1 << 12, runs: 2, ..options.clone() }, options },
        note: "optimized_graph_conditional_runtime.cu: 64 Ki values in blocks of 256; a one-thread \
               predicate sets an IF/ELSE node whose bodies are an update of 32 rounds per value and \
               a one-multiply update; 10 warm-up launches, then 5000 launches between CUDA events. Its \
               baseline is a PyTorch program that makes no decision, so the host-branching way here \
               is the port's. Not as listed: the predicate is one warp folding 32 samples and its \
               decision changes with the data (the listing's mean of 1024 values always picks the \
               32-round body), rounds are integer LCG steps, and the figure is a median of runs. \
               The port's default: 16 Ki values, 16 rounds, 1000 iterations.",
    }
}

/// What a run left on the device.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    trace: Vec<u32>,
    data: Vec<u32>,
}

impl Outcome {
    /// The first difference from `want`, described.
    fn difference(&self, want: &Outcome) -> Option<String> {
        let name = |code: u32| match code {
            model::HEAVY => "heavy",
            model::LIGHT => "light",
            _ => "none",
        };
        if let Some(i) = self.trace.iter().zip(&want.trace).position(|(a, b)| a != b) {
            return Some(format!("iteration {i} ran {}, want {}", name(self.trace[i]), name(want.trace[i])));
        }
        let i = self.data.iter().zip(&want.data).position(|(a, b)| a != b)?;
        Some(format!("data[{i}] = {:#x}, want {:#x}", self.data[i], want.data[i]))
    }
}

/// The data, the trace, the stream and both ways of running the loop.
struct Bench {
    stream: Stream,
    initial: DeviceBuffer<u32>,
    data: DeviceBuffer<u32>,
    trace: DeviceBuffer<u32>,
    step: DeviceBuffer<u32>,
    flag: DeviceBuffer<u32>,
    readback: PinnedBuffer<u32>,
    start: Event,
    end: Event,
    exec: GraphExec<HostLaunch>,
    options: Options,
}

impl Bench {
    fn new(initial: &[u32], options: &Options) -> Result<Bench, CudaError> {
        let data = DeviceBuffer::from_slice(initial)?;
        let trace = DeviceBuffer::<u32>::zeroed(options.iters as usize)?;
        let step = DeviceBuffer::<u32>::zeroed(1)?;
        let (n, rounds) = (options.size, options.rounds);
        let updates = LaunchConfig::for_elements(n, options.threads_per_block);

        // predicate -> IF/ELSE { heavy } { light }. The handle starts each launch at 0; the
        // predicate always replaces it.
        let graph = Graph::new()?;
        let handle = graph.conditional_handle(Some(0))?;
        let predicate = graph.add_kernel(
            gcr_predicate_graph(),
            LaunchConfig::new(1u32, 32u32),
            (handle, data.ptr(), n),
            &[],
        )?;
        let (_branch, [heavy, light]) = graph.add_if_else(&handle, &[&predicate])?;
        heavy.add_kernel(gcr_heavy(), updates, (data.ptr(), n, rounds, trace.ptr(), step.ptr()), &[])?;
        light.add_kernel(gcr_light(), updates, (data.ptr(), n, trace.ptr(), step.ptr()), &[])?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;

        Ok(Bench {
            stream: Stream::new()?,
            initial: DeviceBuffer::from_slice(initial)?,
            data,
            trace,
            step,
            flag: DeviceBuffer::zeroed(1)?,
            readback: PinnedBuffer::zeroed(1)?,
            start: Event::new()?,
            end: Event::new()?,
            exec,
            options: options.clone(),
        })
    }

    /// Puts the initial data back and clears the trace (queued, not timed).
    fn reset(&mut self) -> Result<(), CudaError> {
        self.data.copy_from_device_async(&self.initial, &self.stream)?;
        self.trace.memset_async(0, &self.stream)?;
        self.step.memset_async(0, &self.stream)
    }

    /// Runs the loop one way and returns its outcome and ms per iteration (events around all
    /// the iterations).
    fn run(&mut self, on_device: bool) -> Result<(Outcome, f64), CudaError> {
        self.reset()?;
        let (n, rounds, iters) = (self.options.size, self.options.rounds, self.options.iters);
        let updates = LaunchConfig::for_elements(n, self.options.threads_per_block);
        let warp = LaunchConfig::new(1u32, 32u32);
        self.start.record(&self.stream)?;
        if on_device {
            for _ in 0..iters {
                self.exec.launch(&self.stream)?;
            }
        } else {
            let (data, trace, step) = (self.data.ptr(), self.trace.ptr(), self.step.ptr());
            for _ in 0..iters {
                gcr_predicate_host().launch(&self.stream, warp, (self.flag.ptr(), data.clone(), n))?;
                self.flag.copy_to_pinned_async(&mut self.readback, &self.stream)?;
                if self.readback.as_slice()?[0] != 0 {
                    gcr_heavy().launch(
                        &self.stream,
                        updates,
                        (data.clone(), n, rounds, trace.clone(), step.clone()),
                    )?;
                } else {
                    gcr_light().launch(
                        &self.stream,
                        updates,
                        (data.clone(), n, trace.clone(), step.clone()),
                    )?;
                }
            }
        }
        self.end.record(&self.stream)?;
        self.end.synchronize()?;
        let ms = f64::from(Event::elapsed_ms(&self.start, &self.end)?) / f64::from(iters);
        Ok((Outcome { trace: self.trace.to_vec()?, data: self.data.to_vec()? }, ms))
    }
}

/// Runs both ways on device 0 and reports their times, the ratio and the checks.
///
/// Errors are CUDA's (no device, a failed launch) or invalid options; a wrong result is not an
/// error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    let (_, properties) = chapter_common::device_zero()?;

    let mut rng = Rng::new(options.seed);
    let initial: Vec<u32> = (0..options.size).map(|_| rng.next_u64() as u32 | 1).collect();
    let mut expected_data = initial.clone();
    let expected_trace = model::simulate(&mut expected_data, options.iters, options.rounds);
    let want = Outcome { trace: expected_trace, data: expected_data };
    let heavy_share =
        want.trace.iter().filter(|&&t| t == model::HEAVY).count() as f64 / f64::from(options.iters);

    let mut bench = Bench::new(&initial, options)?;
    let (mut host_ms, mut graph_ms) = (Samples::default(), Samples::default());
    let (mut host_mismatch, mut graph_mismatch) = (None, None);
    // Host branching and the conditional node in turn; run 0 is the warm-up.
    for run in 0..=options.runs {
        for (conditional, samples, mismatch) in
            [(false, &mut host_ms, &mut host_mismatch), (true, &mut graph_ms, &mut graph_mismatch)]
        {
            let (outcome, ms) = bench.run(conditional)?;
            if mismatch.is_none() {
                *mismatch = outcome.difference(&want).map(|d| format!("run {run}: {d}"));
            }
            if run > 0 {
                samples.push(ms);
            }
        }
    }

    let mut report = Report::new("graph_conditional_runtime");
    let (host, graph) = (host_ms.median(), graph_ms.median());
    report.figure("host_branch_ms_per_iter", host, "ms");
    report.figure("conditional_ms_per_iter", graph, "ms");
    report.figure("conditional_over_host", host / graph, "x");
    report.figure("heavy_share", heavy_share, "");
    report.figure("iters", f64::from(options.iters), "iterations");

    let detail = |mismatch: &Option<String>| match mismatch {
        None => format!(
            "{} runs x {} iterations: every branch ({:.0}% heavy) and all {} values bit for bit",
            options.runs + 1,
            options.iters,
            100.0 * heavy_share,
            options.size
        ),
        Some(first) => first.clone(),
    };
    report.check("host branching equals the CPU model", host_mismatch.is_none(), detail(&host_mismatch));
    report.check("conditional node equals the CPU model", graph_mismatch.is_none(), detail(&graph_mismatch));

    report.note(chapter_common::device_note(&properties));
    report.note(format!(
        "per iteration: host = predicate launch + async flag copy + wait + update launch; graph = one launch of \
         predicate -> IF/ELSE {{heavy ({} rounds) | light}} over {} elements",
        options.rounds, options.size
    ));
    report.data("ms_per_iter", json!({"host_branch": host_ms.to_json(), "conditional": graph_ms.to_json()}));
    Ok(report)
}

/// The one-line summary for the chapter table, e.g.
/// `conditional node 3.10x over host branching (0.0050 vs 0.0155 ms/iter)`.
///
/// ```
/// let mut report = chapter_common::Report::new("graph_conditional_runtime");
/// report.figure("host_branch_ms_per_iter", 0.0155, "ms");
/// report.figure("conditional_ms_per_iter", 0.005, "ms");
/// report.figure("conditional_over_host", 0.0155 / 0.005, "x");
/// assert_eq!(
///     graph_conditional_runtime::headline(&report),
///     "conditional node 3.10x over host branching (0.0050 vs 0.0155 ms/iter)"
/// );
/// ```
pub fn headline(report: &Report) -> String {
    format!(
        "conditional node {:.2}x over host branching ({:.4} vs {:.4} ms/iter)",
        report.figure_or_nan("conditional_over_host"),
        report.figure_or_nan("conditional_ms_per_iter"),
        report.figure_or_nan("host_branch_ms_per_iter")
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
            Options { threads_per_block: 48, ..Options::quick() },
        )]);
        chapter_common::assert_flags_refused::<Program>(&["--iters=0", "--size=0", "--rounds=5000"]);
    }

    #[test]
    fn differences_name_the_iteration_or_the_value() {
        let want = Outcome { trace: vec![1, 2, 1], data: vec![7, 8] };
        assert_eq!(want.difference(&want.clone()), None);
        let wrong_branch = Outcome { trace: vec![1, 1, 1], ..want.clone() };
        assert_eq!(wrong_branch.difference(&want).unwrap(), "iteration 1 ran heavy, want light");
        let wrong_value = Outcome { data: vec![7, 9], ..want.clone() };
        assert!(wrong_value.difference(&want).unwrap().starts_with("data[1]"));
    }
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! {
            gcr_predicate_graph, gcr_predicate_host, gcr_heavy, gcr_light
        }
    }
}
