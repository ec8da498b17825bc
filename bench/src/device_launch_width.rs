//! (f) Host vs device launch by graph width: a work graph of `width` independent one-thread
//! `bench_count(counter)` nodes (1, 8, 32, 64) runs `iters` times per sample, each iteration
//! waiting for the previous one, launched
//!
//! - host + sync: the host launches the host-instantiated exec and synchronizes the stream,
//!   every iteration (Rust: `GraphExec<HostLaunch>::launch` + `Stream::synchronize`; C++:
//!   `cudaGraphLaunch` + `cudaStreamSynchronize`);
//! - device fire-and-forget: one host launch of a scheduler graph (one one-thread kernel node,
//!   instantiated for device launch) whose kernel fire-and-forgets the work graph's
//!   device-launch exec (uploaded), counts the step and tail-relaunches its own graph until
//!   `iters` steps ran; the tail relaunch waits for the fire-and-forget work;
//! - device tail: the same, with the work graph tail-launched before the self-relaunch.
//!
//! Rust: `device_launch::instantiate_for_device` + `upload`, and a [`Launcher`] around
//! `bench_dl_scheduler` (kernels/kernels.cu, written with `device_launch.cuh`'s
//! `DL_FIRE_AND_FORGET`, `DL_TAIL_LAUNCH`, `DL_RELAUNCH_SELF`). C++: plain CUDA
//! (`cudaGraphInstantiateWithFlags(..., cudaGraphInstantiateFlagDeviceLaunch)`,
//! `cudaGraphUpload`, a scheduler kernel calling `cudaGraphLaunch` and recording the first
//! failed status in a device word). The scheduler must be a graph node: a kernel launched on a
//! plain stream cannot launch graphs (801). One pending launch per device-launch exec, which
//! each iteration waiting for the previous one guarantees; one fire-and-forget and at most one
//! tail launch besides the self-relaunch per scheduler step, well under the 120 and 255 limits.
//!
//! Between two events, µs per iteration. After each sample: the counter must equal
//! `width × iters`, the step count `iters`, and the error slot (Rust) and error word (C++) must
//! be clear, so a launch that was refused or did not run fails the run instead of passing for a
//! fast one.
//!
//! Every width's execs, Rust and C++, are made before the first is measured and kept until the
//! run ends ([`WidthGraphs`] lives to the end of `measure_all`): launching new device-launch
//! execs after others were destroyed was seen to silently not run (RELIABILITY.md, "Known
//! issue").
//!
//! Each side has [`INSTANCES`] identical sets of these graphs, made in turns (Rust then C++
//! in sets 0, 3, 4, 7, C++ then Rust in the others: [`rust_made_first`]), and sample `i` of a
//! side runs set `i % INSTANCES`. On the H100, identical execs differ by up to 0.45 µs per
//! fire-and-forget step and 0.85 µs per tail step at width 1, by when they were made, not by
//! who made them (`bench/README.md`, "Exec placement"): with one set per side, or with a
//! build order that favours one side, the ratio measured which execs each side happened to
//! get, not the API.

use cuda_graph::graph::{Graph, GraphExec, HostLaunch};
use cuda_graph::{DevicePtr, LaunchConfig};
use device_launch::{instantiate_for_device, DeviceExecArg, Launcher, RawErrorSlot};

use crate::error::{expect_count, expect_value, Result};
use crate::harness::{interleave, Plan, Row, RustSide};
use crate::kernels::{bench_count, bench_dl_scheduler};
use crate::twin::{Twin, TwinWidth};

/// The host + sync rows' name.
pub const HOST_SYNC: &str = cuda_graph_bench_report::operations::HOST_SYNC;
/// The device fire-and-forget rows' name.
pub const DEVICE_FIRE_AND_FORGET: &str = cuda_graph_bench_report::operations::DEVICE_FIRE_AND_FORGET;
/// The device tail rows' name.
pub const DEVICE_TAIL: &str = cuda_graph_bench_report::operations::DEVICE_TAIL;
/// The unit of every (f) row.
pub const UNIT: &str = "µs/launch";

/// How each iteration's work graph is launched; the number is the schedulers' `mode`
/// (`BENCH_MODE_*` in kernels/bench_kernels.cuh).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Mode {
    /// The host launches and synchronizes, every iteration.
    HostSync = 0,
    /// A device scheduler fire-and-forgets it, then relaunches itself.
    FireAndForget = 1,
    /// A device scheduler tail-launches it, then relaunches itself.
    Tail = 2,
}

impl Mode {
    /// Every mode, in report order.
    pub const ALL: [Mode; 3] = [Mode::HostSync, Mode::FireAndForget, Mode::Tail];

    /// The rows' operation name.
    pub fn operation(self) -> &'static str {
        match self {
            Mode::HostSync => HOST_SYNC,
            Mode::FireAndForget => DEVICE_FIRE_AND_FORGET,
            Mode::Tail => DEVICE_TAIL,
        }
    }
}

/// `bench_dl_scheduler`'s arguments: (work, mode, iters, steps, slot).
type SchedulerArgs = (DeviceExecArg, u32, u32, DevicePtr<u32>, DevicePtr<RawErrorSlot>);

/// How many identical sets of graphs each side has per width; samples rotate through them.
/// With 8 sets in the order of [`rust_made_first`], where each exec happened to be made still
/// moved single rows by up to 4% on the H100 (tail at width 8: 1.040 in two runs); with 16,
/// every device row of a run was within 0.978-1.014.
pub const INSTANCES: usize = 16;

/// One width's graph sets, both sides.
struct Width<'t> {
    width: u32,
    sets: Vec<Set<'t>>,
}

/// One set of a width's graphs, both sides.
struct Set<'t> {
    /// The work graph instantiated for host launch, uploaded.
    host: GraphExec<HostLaunch>,
    /// The schedulers for [`Mode::FireAndForget`] and [`Mode::Tail`]; their arguments hold
    /// the work graph's uploaded device-launch exec.
    fire_and_forget: Launcher<SchedulerArgs>,
    tail: Launcher<SchedulerArgs>,
    cpp: TwinWidth<'t>,
}

/// Every width's graphs and execs, Rust and C++, for `iters` iterations per sample.
pub struct WidthGraphs<'t> {
    widths: Vec<Width<'t>>,
    iters: u32,
}

impl<'t> WidthGraphs<'t> {
    /// Builds, instantiates and uploads everything for each of `widths`.
    pub fn new(rust: &RustSide, twin: &'t Twin, widths: &[u32], iters: u32) -> Result<WidthGraphs<'t>> {
        bench_count().function()?; // the parameter checks, before any graph is built
        bench_dl_scheduler().function()?;
        let widths = widths.iter().map(|&width| build(rust, twin, width, iters)).collect::<Result<_>>()?;
        rust.stream.synchronize()?;
        Ok(WidthGraphs { widths, iters })
    }

    /// Measures every mode at every width, both sides: rows by mode, then by width.
    pub fn measure(&self, rust: &mut RustSide, plan: &Plan) -> Result<Vec<Row>> {
        let mut rows = Vec::new();
        for mode in Mode::ALL {
            for width in &self.widths {
                let what = format!("{} width={}", mode.operation(), width.width);
                let want = Want { counter: width.width * self.iters, steps: self.iters };
                let mut rust_one = |set: &Set<'_>| -> Result<f64> {
                    let (us, counter, steps) = rust_sample(rust, set, mode, self.iters)?;
                    want.check(&what, "Rust", counter, steps)?;
                    Ok(us)
                };
                let cpp_one = |set: &Set<'_>| -> Result<f64> {
                    let sample = set.cpp.run(mode as u32)?;
                    want.check(&what, "C++", sample.counter, sample.steps)?;
                    Ok(sample.us)
                };
                // Every set runs once untimed before any is timed (first launches of an exec
                // pay one-off costs).
                for set in &width.sets {
                    rust_one(set)?;
                    cpp_one(set)?;
                }
                let (mut rust_next, mut cpp_next) = (Rotation::default(), Rotation::default());
                let pair = interleave(
                    plan,
                    || rust_one(rust_next.pick(&width.sets)),
                    || cpp_one(cpp_next.pick(&width.sets)),
                )?;
                rows.push(Row::new(mode.operation(), format!("width={}", width.width), UNIT, pair));
            }
        }
        Ok(rows)
    }
}

impl WidthGraphs<'_> {
    /// The method's noise floor, measured the same way: for each device mode and width, the
    /// twin's even sets against the twin's odd sets (C++ against C++), interleaved. Rows whose
    /// "Rust" side is the even sets; a ratio away from 1 here is what exec placement alone
    /// does to a figure.
    pub fn control(&self, plan: &Plan) -> Result<Vec<Row>> {
        let mut rows = Vec::new();
        for mode in [Mode::FireAndForget, Mode::Tail] {
            for width in &self.widths {
                let what = format!("control {} width={}", mode.operation(), width.width);
                let want = Want { counter: width.width * self.iters, steps: self.iters };
                let one = |set: &Set<'_>| -> Result<f64> {
                    let sample = set.cpp.run(mode as u32)?;
                    want.check(&what, "C++", sample.counter, sample.steps)?;
                    Ok(sample.us)
                };
                let even: Vec<&Set<'_>> = width.sets.iter().step_by(2).collect();
                let odd: Vec<&Set<'_>> = width.sets.iter().skip(1).step_by(2).collect();
                let (mut even_next, mut odd_next) = (Rotation::default(), Rotation::default());
                let pair = interleave(
                    plan,
                    || one(even_next.pick::<&Set<'_>>(&even)),
                    || one(odd_next.pick::<&Set<'_>>(&odd)),
                )?;
                rows.push(Row::new(mode.operation(), format!("width={}", width.width), UNIT, pair));
            }
        }
        Ok(rows)
    }
}

/// Each set's median in a device-mode row of (f), Rust's sets and then C++'s, in set order,
/// or `None` where a set has no sample (fewer samples than sets). Sample `i` of a side ran
/// set `(warmup + i) % INSTANCES`: the rotation also turns through the warm-up samples.
/// [`rust_made_first`] says which side made each set's graphs first.
pub fn per_set_medians(row: &Row, warmup: usize) -> (Vec<Option<f64>>, Vec<Option<f64>>) {
    let split = |samples: &[f64]| -> Vec<Option<f64>> {
        (0..INSTANCES)
            .map(|set| {
                let of_set: Vec<f64> = samples
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| (warmup + i) % INSTANCES == set)
                    .map(|(_, &us)| us)
                    .collect();
                (!of_set.is_empty()).then(|| cuda_graph_bench_report::Samples(of_set).median())
            })
            .collect()
    };
    (split(&row.pair.rust.0), split(&row.pair.cpp.0))
}

/// The next set a side's sample runs: 0, 1, …, then around again.
#[derive(Default)]
pub(crate) struct Rotation(usize);

impl Rotation {
    /// The next set, in turn.
    pub(crate) fn pick<'a, T>(&mut self, sets: &'a [T]) -> &'a T {
        let set = &sets[self.0 % sets.len()];
        self.0 += 1;
        set
    }
}

/// What a sample must leave.
struct Want {
    counter: u32,
    steps: u32,
}

impl Want {
    fn check(&self, what: &str, side: &str, counter: u32, steps: u32) -> Result<()> {
        expect_count(what, side, counter, self.counter)?;
        expect_value(what, side, "the step count", steps, self.steps)
    }
}

/// Whether set `index` makes its Rust graphs before its C++ graphs: R C C R, R C C R, …
///
/// Where an exec was made sets its device-launch cost, not who made it. On the H100, with
/// every set made Rust first, the C++ column of the per-set medians repeated, to 0.01 µs, the
/// Rust column of a run with every set made C++ first (bench/README.md, "Exec placement").
/// The graphs made first in a set ran slower, by more in even sets than in odd ones. Plain
/// alternation (Rust first in even sets) therefore handed Rust the costlier places and read
/// 1.04-1.05 at width 1. This order gives each side the first place in two even and two odd
/// sets of every eight.
///
/// ```
/// use cuda_graph_bench::device_launch_width::rust_made_first;
/// let order: Vec<bool> = (0..8).map(rust_made_first).collect();
/// assert_eq!(order, [true, false, false, true, true, false, false, true]);
/// ```
pub fn rust_made_first(index: usize) -> bool {
    matches!(index % 4, 0 | 3)
}

/// [`INSTANCES`] sets of one width's graphs, made in the order [`rust_made_first`] gives.
fn build<'t>(rust: &RustSide, twin: &'t Twin, width: u32, iters: u32) -> Result<Width<'t>> {
    let mut sets = Vec::with_capacity(INSTANCES);
    for index in 0..INSTANCES {
        let set = if rust_made_first(index) {
            let rust_side = build_rust(rust, width, iters)?;
            rust_side.with(twin.width_graphs(width, iters)?)
        } else {
            let cpp = twin.width_graphs(width, iters)?;
            build_rust(rust, width, iters)?.with(cpp)
        };
        sets.push(set);
    }
    Ok(Width { width, sets })
}

/// One set's Rust graphs, before the twin's are added.
struct RustGraphs {
    host: GraphExec<HostLaunch>,
    fire_and_forget: Launcher<SchedulerArgs>,
    tail: Launcher<SchedulerArgs>,
}

impl RustGraphs {
    fn with(self, cpp: TwinWidth<'_>) -> Set<'_> {
        Set { host: self.host, fire_and_forget: self.fire_and_forget, tail: self.tail, cpp }
    }
}

/// One width's Rust graphs: the work graph, its host and device execs, the two schedulers.
fn build_rust(rust: &RustSide, width: u32, iters: u32) -> Result<RustGraphs> {
    let graph = Graph::new()?;
    for _ in 0..width {
        graph.add_kernel(bench_count(), LaunchConfig::new(1, 1), (rust.counter.ptr(),), &[])?;
    }
    let host: GraphExec<HostLaunch> = graph.instantiate(Default::default())?;
    host.upload(&rust.stream)?;
    let work = instantiate_for_device(&graph)?.upload(&rust.stream)?;
    // Uploaded before any launch, as the twin's schedulers are (`one_node_device_graph`).
    let scheduler = |mode: Mode| -> Result<_> {
        let args = (work.handle().arg(), mode as u32, iters, rust.steps.ptr(), rust.slot.ptr());
        let launcher = Launcher::new(bench_dl_scheduler(), LaunchConfig::new(1, 1), args)?;
        launcher.upload(&rust.stream)?;
        Ok(launcher)
    };
    Ok(RustGraphs { host, fire_and_forget: scheduler(Mode::FireAndForget)?, tail: scheduler(Mode::Tail)? })
}

/// One Rust sample of `iters` iterations in `mode`: (µs per iteration, counter, iterations run
/// by the host loop or the scheduler's step count). A refused device-side launch is an error.
fn rust_sample(rust: &mut RustSide, set: &Set<'_>, mode: Mode, iters: u32) -> Result<(f64, u32, u32)> {
    rust.steps.memset_async(0, &rust.stream)?;
    rust.begin_sample()?;
    let mut host_iterations = 0;
    match mode {
        Mode::HostSync => {
            for _ in 0..iters {
                set.host.launch(&rust.stream)?;
                rust.stream.synchronize()?;
                host_iterations += 1;
            }
        }
        Mode::FireAndForget => set.fire_and_forget.launch(&rust.stream)?,
        Mode::Tail => set.tail.launch(&rust.stream)?,
    }
    let ms = rust.end_sample()?;
    rust.check_slot()?;
    let steps = if mode == Mode::HostSync { host_iterations } else { rust.steps()? };
    Ok((ms * 1e3 / f64::from(iters), rust.counter()?, steps))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_match_the_kernels_and_name_their_rows() {
        let header = include_str!("../kernels/bench_kernels.cuh");
        for (mode, define) in [
            (Mode::HostSync, "BENCH_MODE_HOST_SYNC"),
            (Mode::FireAndForget, "BENCH_MODE_FIRE_AND_FORGET"),
            (Mode::Tail, "BENCH_MODE_TAIL"),
        ] {
            let line = format!("#define {define} {}u", mode as u32);
            assert!(header.lines().any(|l| l.trim() == line), "{line} missing from bench_kernels.cuh");
        }
        let names: Vec<_> = Mode::ALL.iter().map(|m| m.operation()).collect();
        assert_eq!(names, [HOST_SYNC, DEVICE_FIRE_AND_FORGET, DEVICE_TAIL]);
    }

    #[test]
    fn per_set_medians_follow_the_rotation_past_the_warm_ups() {
        // 3 warm-ups: timed sample i ran set (3 + i) % INSTANCES.
        let rust: Vec<f64> = (0..2 * INSTANCES).map(|i| ((3 + i) % INSTANCES) as f64).collect();
        let cpp: Vec<f64> = (0..4).map(|i| 10.0 + ((3 + i) % INSTANCES) as f64).collect();
        let pair = crate::harness::Pair {
            rust: cuda_graph_bench_report::Samples(rust),
            cpp: cuda_graph_bench_report::Samples(cpp),
        };
        let row = Row::new(DEVICE_TAIL, "width=1".to_string(), UNIT, pair);
        let (rust_sets, cpp_sets) = per_set_medians(&row, 3);
        let want_rust: Vec<Option<f64>> = (0..INSTANCES).map(|set| Some(set as f64)).collect();
        assert_eq!(rust_sets, want_rust);
        let want_cpp: Vec<Option<f64>> =
            (0..INSTANCES).map(|set| (3..7).contains(&set).then_some(10.0 + set as f64)).collect();
        assert_eq!(cpp_sets, want_cpp);
    }

    #[test]
    fn each_side_is_made_first_in_as_many_even_as_odd_sets() {
        let first = |parity: usize, rust: bool| {
            (0..INSTANCES).filter(|i| i % 2 == parity && rust_made_first(*i) == rust).count()
        };
        let quarter = INSTANCES / 4;
        assert_eq!(INSTANCES % 4, 0, "the order repeats every 4 sets");
        assert_eq!([first(0, true), first(1, true), first(0, false), first(1, false)], [quarter; 4]);
    }

    #[test]
    fn samples_rotate_through_every_set() {
        let sets = [10, 11, 12];
        let mut rotation = Rotation::default();
        let picked: Vec<i32> = (0..7).map(|_| *rotation.pick(&sets)).collect();
        assert_eq!(picked, [10, 11, 12, 10, 11, 12, 10]);
    }

    #[test]
    fn a_short_count_or_step_count_fails_the_sample() {
        let want = Want { counter: 64 * 200, steps: 200 };
        assert!(want.check("w", "Rust", 64 * 200, 200).is_ok());
        let err = want.check("graph launch, device tail width=64", "C++", 64 * 199, 200).unwrap_err();
        assert!(err.to_string().contains("the counter is 12736, expected 12800"), "{err}");
        let err = want.check("w", "Rust", 64 * 200, 120).unwrap_err();
        assert!(err.to_string().contains("the step count is 120, expected 200"), "{err}");
    }
}
