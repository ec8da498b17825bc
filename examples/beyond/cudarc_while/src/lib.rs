//! A data-dependent loop for cudarc users, two ways: on cudarc alone, driven from the host
//! (launch, copy the "still going" flag back, decide, repeat), written the cheapest ways cudarc
//! allows for one stream (event tracking off; the flag read into a reused buffer, page-locked
//! or a `Vec`, and cleared in the same round; the faster of the two is the baseline), and as
//! one CUDA graph whose WHILE node decides on the device, built with `cuda-graph` from the same
//! PTX kernel on the same cudarc memory.
//!
//! The loop: Collatz steps on the numbers `1..=n` until every one reached 1. How many rounds
//! that takes depends on the data (524 for `n` = 10^6), and the CPU computes the same steps,
//! so both ways are checked exactly: each number's step count, and the number of rounds.
//!
//! ```no_run
//! let report = cudarc_while::run(&cudarc_while::Config { n: 100_000, repeats: 3, nvrtc: false })?;
//! println!("{report}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use cuda_graph::graph::{ConditionalHandle, Graph, GraphExec, HostLaunch};
use cuda_graph::interop::cudarc::CudarcSlice;
use cuda_graph::kernel::{Kernel, LaunchConfig, Module};
use cuda_graph::{DevicePtr, Stream};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig as CudarcLaunch, PushKernelArg,
};
use cudarc::nvrtc::Ptx;

/// The step kernel's PTX (kernels/step.cu), as a cudarc user would ship it.
pub const STEP_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/step.ptx"));
/// The step kernel's CUDA C++ source, for NVRTC.
pub const STEP_SOURCE: &str = include_str!("../kernels/step.cu");
/// The condition kernel (kernels/condition.cu), device-linked with the device runtime.
pub static CONDITION_FATBIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/condition.fatbin"));

/// `collatz_step(uint64_t* values, uint32_t* steps, uint32_t n, uint32_t* active)`.
type Step = Kernel<(DevicePtr<u64>, DevicePtr<u32>, u32, DevicePtr<u32>)>;
/// `keep_going(cudaGraphConditionalHandle handle, uint32_t* active, uint32_t* rounds)`.
type KeepGoing = Kernel<(ConditionalHandle, DevicePtr<u32>, DevicePtr<u32>)>;

/// Threads per block of the step kernel.
const BLOCK: u32 = 256;

/// What to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The numbers `1..=n` are iterated.
    pub n: u32,
    /// Timed runs of each way (after one untimed warm-up run); each run is checked.
    pub repeats: u32,
    /// Compile the step kernel from source with NVRTC instead of loading the PTX.
    pub nvrtc: bool,
}

/// What both ways gave, and how long a round took.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Numbers iterated.
    pub n: u32,
    /// Rounds until every number reached 1 (the CPU's count; both ways matched it).
    pub rounds: u32,
    /// Microseconds per round, the faster of the host-driven loops on cudarc alone
    /// (`host_ways`): the median over the timed runs.
    pub host_us_per_round: f64,
    /// Each host-driven loop: its label, median µs per round and fastest and slowest run.
    pub host_ways: Vec<(&'static str, f64, (f64, f64))>,
    /// Microseconds per round, the WHILE graph (one launch per run): the median over the runs.
    pub graph_us_per_round: f64,
    /// The fastest and slowest run's µs per round, the faster host-driven loop.
    pub host_range: (f64, f64),
    /// The fastest and slowest run's µs per round, WHILE graph.
    pub graph_range: (f64, f64),
    /// Timed runs of each way.
    pub runs: u32,
    /// Where the step kernel came from.
    pub kernel_from: &'static str,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "collatz over 1..={} ({} kernel): {} rounds, every step count equal to the CPU's",
            self.n, self.kernel_from, self.rounds
        )?;
        let (h, g) = (self.host_range, self.graph_range);
        for (label, us, (low, high)) in &self.host_ways {
            writeln!(
                f,
                "  cudarc, host-driven loop, {label}: {us:8.2} us per round (median of {} runs; {low:.2}-{high:.2})",
                self.runs
            )?;
        }
        writeln!(
            f,
            "  cuda-graph WHILE graph:   {:8.2} us per round (median of {} runs; {:.2}-{:.2})",
            self.graph_us_per_round, self.runs, g.0, g.1
        )?;
        write!(
            f,
            "  the graph is {:.2}x the faster host-driven loop's speed (medians; {:.2}x-{:.2}x from the slowest to \
             the fastest pairing of runs)",
            self.host_us_per_round / self.graph_us_per_round,
            h.0 / g.1,
            h.1 / g.0
        )
    }
}

/// The CPU's answer: each number's step count to 1, and the rounds (the largest count, at
/// least 1: the graph's loop runs its body once before it can decide).
pub fn cpu_reference(n: u32) -> (Vec<u32>, u32) {
    let steps: Vec<u32> = (1..=u64::from(n))
        .map(|mut v| {
            let mut count = 0;
            while v > 1 {
                v = if v % 2 == 0 { v / 2 } else { 3 * v + 1 };
                count += 1;
            }
            count
        })
        .collect();
    let rounds = steps.iter().copied().max().unwrap_or(0).max(1);
    (steps, rounds)
}

type Error = Box<dyn std::error::Error>;

/// The cudarc side: context, stream, the step function and the memory.
struct Cudarc {
    stream: Arc<CudaStream>,
    step: CudaFunction,
    initial: CudaSlice<u64>,
}

/// Runs both ways, checks both against the CPU, and times them.
pub fn run(config: &Config) -> Result<Report, Error> {
    let (expected_steps, expected_rounds) = cpu_reference(config.n);
    let ctx = CudaContext::new(0)?;
    // SAFETY: every phase below queues its work on one stream and waits for it before the next
    // phase uses the memory on another (the upload is waited for below; each host loop waits
    // every round; the graph's launches are waited for), and every slice is freed on the stream
    // that used it last, so cudarc's per-slice events are not needed: the cheapest way to use
    // cudarc with one stream at a time, as its docs describe.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.default_stream();
    let initial = stream.clone_htod(&(1..=u64::from(config.n)).collect::<Vec<_>>())?;
    stream.synchronize()?;
    let (step, kernel_from) = load_step(&ctx, config)?;
    let cudarc = Cudarc { stream: stream.clone(), step, initial };

    let expected = (expected_steps.as_slice(), expected_rounds);
    let own_stream = ctx.new_stream()?;
    let host_ways = [
        (
            "default stream, page-locked flag",
            host_driven(&cudarc, &stream, Flag::PageLocked, config, expected)?,
        ),
        ("own stream, flag read into a Vec", host_driven(&cudarc, &own_stream, Flag::Vec, config, expected)?),
    ];

    let module = if config.nvrtc {
        cuda_graph::kernel::Module::from_cuda_source(STEP_SOURCE)?
    } else {
        Module::from_ptx(STEP_PTX)?
    };
    let graph_seconds = while_graph(&cudarc, &module, config, expected)?;

    Ok(summarize(config, expected_rounds, &host_ways, &graph_seconds, kernel_from))
}

/// cudarc's handle of the step kernel, from the PTX or compiled by NVRTC, and which.
fn load_step(ctx: &Arc<CudaContext>, config: &Config) -> Result<(CudaFunction, &'static str), Error> {
    let (ptx, kernel_from) = if config.nvrtc {
        let compiled = cuda_graph::kernel::nvrtc::compile(STEP_SOURCE, &Default::default())?;
        (Ptx::from_binary(compiled.image().to_vec()), "NVRTC")
    } else {
        (Ptx::from_src(STEP_PTX), "PTX")
    };
    Ok((ctx.load_module(ptx)?.load_function("collatz_step")?, kernel_from))
}

/// The report: each way's median and range per round, the faster host loop as the baseline.
fn summarize(
    config: &Config, expected_rounds: u32, host_ways: &[(&'static str, Vec<f64>)], graph_seconds: &[f64],
    kernel_from: &'static str,
) -> Report {
    let per_round = |seconds: &[f64]| -> (f64, (f64, f64)) {
        let mut us: Vec<f64> = seconds.iter().map(|s| s * 1e6 / f64::from(expected_rounds)).collect();
        us.sort_by(f64::total_cmp);
        (us[us.len() / 2], (us[0], us[us.len() - 1]))
    };
    let host_ways: Vec<_> = host_ways
        .iter()
        .map(|(label, seconds)| {
            let (us, range) = per_round(seconds);
            (*label, us, range)
        })
        .collect();
    let &(_, host_us_per_round, host_range) =
        host_ways.iter().min_by(|a, b| a.1.total_cmp(&b.1)).expect("two host loops");
    let (graph_us_per_round, graph_range) = per_round(graph_seconds);
    Report {
        n: config.n,
        rounds: expected_rounds,
        host_us_per_round,
        host_ways,
        graph_us_per_round,
        host_range,
        graph_range,
        runs: config.repeats.max(1),
        kernel_from,
    }
}

fn check(way: &str, steps: &[u32], rounds: u32, expected: &[u32], expected_rounds: u32) -> Result<(), Error> {
    if rounds != expected_rounds {
        return Err(format!("{way}: {rounds} rounds, the CPU needed {expected_rounds}").into());
    }
    if let Some(i) = steps.iter().zip(expected).position(|(a, b)| a != b) {
        return Err(
            format!("{way}: number {} took {} steps, the CPU says {}", i + 1, steps[i], expected[i]).into()
        );
    }
    Ok(())
}

/// How a host-driven loop reads the "still going" flag each round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flag {
    /// Copied into one reused page-locked word, the flag cleared right after, then one
    /// `synchronize` and a read.
    PageLocked,
    /// Copied into a reused `Vec` (a copy into pageable memory returns only once it is done,
    /// so no wait follows), then the flag cleared.
    Vec,
}

/// The loop on cudarc alone, on `stream`: launch a step, read the flag as `flag` says, decide,
/// repeat. Checks every run (the warm-up included) against the CPU's `expected` step counts and
/// rounds; returns each timed run's seconds.
fn host_driven(
    cudarc: &Cudarc, stream: &Arc<CudaStream>, flag: Flag, config: &Config, expected: (&[u32], u32),
) -> Result<Vec<f64>, Error> {
    let mut values = stream.alloc_zeros::<u64>(config.n as usize)?;
    let mut steps = stream.alloc_zeros::<u32>(config.n as usize)?;
    let mut active = stream.alloc_zeros::<u32>(1)?;
    // SAFETY: the word is written by the copy below before it is read.
    let mut page_locked = unsafe { stream.context().alloc_pinned_with_flags::<u32>(1, 0) }?;
    let mut in_vec = vec![0u32; 1];
    let n = config.n;
    let mut run_once = |values: &mut CudaSlice<u64>, steps: &mut CudaSlice<u32>| -> Result<u32, Error> {
        stream.memcpy_dtod(&cudarc.initial, values)?;
        stream.memset_zeros(steps)?;
        stream.memset_zeros(&mut active)?;
        let mut rounds = 0;
        loop {
            let mut launch = stream.launch_builder(&cudarc.step);
            launch.arg(&mut *values).arg(&mut *steps).arg(&n).arg(&mut active);
            // SAFETY: collatz_step(uint64_t* values, uint32_t* steps, uint32_t n, uint32_t*
            // active) gets n-element slices and n; it touches values[i], steps[i] for i < n
            // and active[0].
            unsafe { launch.launch(CudarcLaunch::for_num_elems(n)) }?;
            rounds += 1;
            let still_going = match flag {
                Flag::PageLocked => {
                    stream.memcpy_dtoh(&active, &mut page_locked)?;
                    stream.memset_zeros(&mut active)?;
                    stream.synchronize()?;
                    page_locked.as_slice()?[0]
                }
                Flag::Vec => {
                    stream.memcpy_dtoh(&active, &mut in_vec)?;
                    stream.memset_zeros(&mut active)?;
                    in_vec[0]
                }
            };
            if still_going == 0 {
                return Ok(rounds);
            }
        }
    };
    let check_run = |steps: &CudaSlice<u32>, rounds: u32, run: &str| -> Result<(), Error> {
        let label = format!("cudarc host-driven loop, {run}");
        check(&label, &stream.clone_dtoh(steps)?, rounds, expected.0, expected.1)
    };
    let rounds = run_once(&mut values, &mut steps)?;
    check_run(&steps, rounds, "warm-up")?;
    let mut seconds = Vec::new();
    for run in 0..config.repeats.max(1) {
        let start = Instant::now();
        let rounds = run_once(&mut values, &mut steps)?;
        seconds.push(start.elapsed().as_secs_f64());
        check_run(&steps, rounds, &format!("run {run}"))?;
    }
    Ok(seconds)
}

/// The same loop as one graph: reset from the initial values, then WHILE { step; decide }.
/// Checks every run (the warm-up included) against the CPU's `expected` step counts and
/// rounds; returns each timed run's seconds.
fn while_graph(
    cudarc: &Cudarc, module: &Module, config: &Config, expected: (&[u32], u32),
) -> Result<Vec<f64>, Error> {
    let stream = &cudarc.stream;
    let shared = |len: usize| -> Result<CudarcSlice<u32>, Error> {
        Ok(CudarcSlice::new(stream.alloc_zeros::<u32>(len)?)?)
    };
    let values = CudarcSlice::new(stream.alloc_zeros::<u64>(config.n as usize)?)?;
    let initial = CudarcSlice::new(cudarc.initial.try_clone()?)?;
    let (steps, active, rounds) = (shared(config.n as usize)?, shared(1)?, shared(1)?);
    let step: Step = if config.nvrtc {
        // SAFETY: NVRTC output carries no type lists: the Rust types are collatz_step's C++
        // ones (uint64_t*, uint32_t*, uint32_t, uint32_t*); it writes values[i], steps[i]
        // only for i < n and active[0], and the graph below passes n-element buffers and n.
        unsafe { module.kernel_unchecked_types("collatz_step") }?
    } else {
        // SAFETY: as above; the PTX's type lists are checked against the Rust types.
        unsafe { module.kernel("collatz_step") }?
    };
    // SAFETY: CONDITION_FATBIN is the fatbin cuda_build::ImageBuild wrote in build.rs, unchanged.
    let condition = unsafe { Module::from_image(CONDITION_FATBIN) }?;
    // SAFETY: keep_going reads and writes active[0] and rounds[0] only.
    let keep_going: KeepGoing = unsafe { condition.kernel("keep_going") }?;

    let graph = Graph::new()?;
    let reset_values = graph.add_memcpy(&values.ptr(), &initial.ptr(), config.n as usize, &[])?;
    let reset_steps = graph.add_memset(&steps.ptr(), 0u32, config.n as usize, &[])?;
    let reset_active = graph.add_memset(&active.ptr(), 0u32, 1, &[])?;
    let reset_rounds = graph.add_memset(&rounds.ptr(), 0u32, 1, &[])?;
    let handle = graph.conditional_handle(Some(1))?;
    let (_, body) = graph.add_while(&handle, &[&reset_values, &reset_steps, &reset_active, &reset_rounds])?;
    let config_step = LaunchConfig::for_elements(config.n, BLOCK);
    let stepped =
        body.add_kernel(&step, config_step, (values.ptr(), steps.ptr(), config.n, active.ptr()), &[])?;
    body.add_kernel(&keep_going, LaunchConfig::new(1, 1), (handle, active.ptr(), rounds.ptr()), &[&stepped])?;
    let exec: GraphExec<HostLaunch> = graph.instantiate(Default::default())?;

    // SAFETY: no other thread captures the cudarc stream while it is borrowed.
    let ours = unsafe { Stream::borrow_cudarc(stream) }?;
    let check_run = |run: &str| -> Result<(), Error> {
        let counted = stream.clone_dtoh(rounds.cudarc())?[0];
        check(
            &format!("cuda-graph WHILE graph, {run}"),
            &stream.clone_dtoh(steps.cudarc())?,
            counted,
            expected.0,
            expected.1,
        )
    };
    exec.launch(&ours)?; // warm-up
    ours.synchronize()?;
    check_run("warm-up")?;
    let mut seconds = Vec::new();
    for run in 0..config.repeats.max(1) {
        let start = Instant::now();
        exec.launch(&ours)?;
        ours.synchronize()?;
        seconds.push(start.elapsed().as_secs_f64());
        check_run(&format!("run {run}"))?;
    }
    Ok(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_reference_counts_collatz_steps() {
        let (steps, rounds) = cpu_reference(27);
        assert_eq!(steps[0], 0, "1 is already there");
        assert_eq!(steps[5], 8, "6 -> 3 -> 10 -> 5 -> 16 -> 8 -> 4 -> 2 -> 1");
        assert_eq!(steps[26], 111, "27 takes 111 steps");
        assert_eq!(rounds, 111);
        assert_eq!(cpu_reference(1).1, 1, "the loop's body runs once even with nothing to do");
    }
}
