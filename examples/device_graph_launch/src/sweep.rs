//! The latency sweep: a work graph of `width` independent nodes launched once per iteration,
//! each iteration waiting for the previous one, from the host (launch + synchronize) or from a
//! self-relaunching scheduler kernel (fire-and-forget, tail, sibling).

use chapter_common::ExampleError;
use chapter_common::Samples;
use cuda_graph::graph::{Graph, GraphExec, HostLaunch};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{Device, DeviceBuffer, DevicePtr, Event, Stream};
use device_launch::{
    instantiate_for_device, DeviceExec, DeviceExecTable, DeviceExecTableArg, ErrorSlot, Launcher,
    RawErrorSlot, Uploaded,
};

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu); the declarations are private to this crate, whose launches pass counts
// no larger than the buffers they point into.
cuda_graph::kernels! {
    /// One work node: `counters[index] += amount`, then `done += 1`.
    pub(crate) unsafe fn dgl_work(counters: DevicePtr<u32>, index: u32, amount: u32, done: DevicePtr<u32>);
    /// The self-relaunching scheduler (see `kernels/scheduler.cu`).
    unsafe fn dgl_scheduler(
        graphs: DeviceExecTableArg,
        copies: u32,
        mode: u32,
        iters: u32,
        width: u32,
        steps: DevicePtr<u32>,
        done: DevicePtr<u32>,
        slot: DevicePtr<RawErrorSlot>,
    );
}

/// How one iteration's work graph is launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The host launches the graph and synchronizes the stream, every iteration.
    HostSync,
    /// The host launches the graph every iteration without waiting (for reference: the
    /// iterations then overlap the host's launch calls, so they do not wait for each other).
    HostNoSync,
    /// The scheduler only relaunches itself: the cost of the device-side loop alone.
    RelaunchOnly,
    /// The scheduler fire-and-forgets the graph, then tail-relaunches itself.
    FireAndForget,
    /// The scheduler tail-launches the graph, then tail-relaunches itself.
    Tail,
    /// The scheduler sibling-launches the graph, waits for its nodes, then tail-relaunches
    /// itself.
    Sibling,
    /// The scheduler fire-and-forgets [`BATCH`] distinct copies of the graph one after
    /// another, waiting for each one's nodes, then tail-relaunches itself.
    FireAndForgetBatch,
}

/// Iterations per scheduler step in [`Mode::FireAndForgetBatch`] (distinct copies of the
/// work graph; well under the 120 fire-and-forget launches one kernel may make).
pub const BATCH: usize = 16;

impl Mode {
    /// Iterations of this mode in one timed run of `iters`. A sibling's launch stays pending
    /// until the top-level launch that started the scheduler's chain completes (measured on
    /// driver 580: reusing a copy within one chain is refused), so one chain sibling-launches
    /// each of its [`BATCH`] copies once.
    pub fn iterations(self, iters: u32) -> u32 {
        match self {
            Mode::Sibling => iters.min(BATCH as u32),
            _ => iters,
        }
    }

    /// Every mode, in report order.
    pub const ALL: [Mode; 7] = [
        Mode::HostSync,
        Mode::HostNoSync,
        Mode::RelaunchOnly,
        Mode::FireAndForget,
        Mode::Tail,
        Mode::Sibling,
        Mode::FireAndForgetBatch,
    ];

    /// This mode's position in [`Mode::ALL`].
    pub fn index(self) -> usize {
        Mode::ALL.iter().position(|&m| m == self).unwrap_or(0)
    }

    /// The figure-name prefix.
    pub fn name(self) -> &'static str {
        match self {
            Mode::HostSync => "host_sync",
            Mode::HostNoSync => "host_nosync",
            Mode::RelaunchOnly => "relaunch_only",
            Mode::FireAndForget => "fire_and_forget",
            Mode::Tail => "tail",
            Mode::Sibling => "sibling",
            Mode::FireAndForgetBatch => "fire_and_forget_batched",
        }
    }

    /// `dgl_scheduler`'s mode number (`DGL_*` in the kernel), for device modes.
    pub fn device_code(self) -> Option<u32> {
        match self {
            Mode::RelaunchOnly => Some(0),
            Mode::FireAndForget => Some(1),
            Mode::Tail => Some(2),
            Mode::Sibling => Some(3),
            Mode::FireAndForgetBatch => Some(4),
            Mode::HostSync | Mode::HostNoSync => None,
        }
    }

    /// Whether the scheduler spin-waits until the work graph's nodes have counted themselves
    /// (sibling, batched fire-and-forget): it needs them to run beside it.
    pub fn spins(self) -> bool {
        matches!(self, Mode::Sibling | Mode::FireAndForgetBatch)
    }

    /// Whether the work graph runs (every mode but the bare relaunch loop).
    pub fn runs_work(self) -> bool {
        self != Mode::RelaunchOnly
    }
}

/// The buffers every width shares: counters (as many as the widest graph), the done count,
/// the scheduler's step count and its error slot.
pub struct Shared {
    pub stream: Stream,
    start: Event,
    end: Event,
    pub counters: DeviceBuffer<u32>,
    pub done: DeviceBuffer<u32>,
    pub steps: DeviceBuffer<u32>,
    pub slot: ErrorSlot,
}

impl Shared {
    pub fn new(max_width: u32) -> Result<Shared, ExampleError> {
        Ok(Shared {
            stream: Stream::new()?,
            start: Event::new()?,
            end: Event::new()?,
            counters: DeviceBuffer::zeroed(max_width as usize)?,
            done: DeviceBuffer::zeroed(1)?,
            steps: DeviceBuffer::zeroed(1)?,
            slot: ErrorSlot::new()?,
        })
    }
}

/// One width's graphs: the host exec, [`BATCH`] uploaded device execs of the same graph
/// (fire-and-forget and tail launch the first, sibling alternates the first two, the batched
/// mode launches them all in turn), and a scheduler launcher per device mode.
pub struct Width {
    pub width: u32,
    pub amounts: Vec<u32>,
    host: GraphExec<HostLaunch>,
    launchers: Vec<(Mode, Launcher<SchedulerArgs>)>,
    // The launchers' tables hold the device execs; kept for clarity of ownership.
    _device: Vec<DeviceExec<Uploaded>>,
}

type SchedulerArgs =
    (DeviceExecTableArg, u32, u32, u32, u32, DevicePtr<u32>, DevicePtr<u32>, DevicePtr<RawErrorSlot>);

impl Width {
    /// Builds the `width`-node work graph (node i adds `amounts[i]` to `counters[i]`), its
    /// execs and launchers for `iters` iterations.
    pub fn new(shared: &Shared, amounts: &[u32], iters: u32) -> Result<Width, ExampleError> {
        let width = amounts.len() as u32;
        let graph = Graph::new()?;
        for (i, &amount) in amounts.iter().enumerate() {
            let args = (shared.counters.ptr(), i as u32, amount, shared.done.ptr());
            graph.add_kernel(dgl_work(), LaunchConfig::new(1, 32), args, &[])?;
        }
        let host = graph.instantiate::<HostLaunch>(Default::default())?;
        host.upload(&shared.stream)?;
        let device = (0..BATCH)
            .map(|_| instantiate_for_device(&graph)?.upload(&shared.stream))
            .collect::<Result<Vec<_>, _>>()?;
        let handles: Vec<_> = device.iter().map(DeviceExec::handle).collect();
        let mut launchers = Vec::new();
        for mode in Mode::ALL {
            let Some(code) = mode.device_code() else { continue };
            let copies = match mode {
                Mode::Sibling => BATCH,
                Mode::FireAndForgetBatch => BATCH,
                _ => 1,
            };
            let table = DeviceExecTable::new(&handles[..copies])?;
            let copies = copies as u32;
            let args = (
                table.arg(),
                copies,
                code,
                mode.iterations(iters),
                width,
                shared.steps.ptr(),
                shared.done.ptr(),
                shared.slot.ptr(),
            );
            launchers.push((mode, Launcher::new(dgl_scheduler(), LaunchConfig::new(1, 1), args)?));
        }
        Ok(Width { width, amounts: amounts.to_vec(), host, launchers, _device: device })
    }
}

/// What one timed run of one mode left.
pub struct Outcome {
    pub ms: f64,
    pub counters: Vec<u32>,
    pub done: u32,
    pub steps: u32,
    pub refused: Option<String>,
}

impl Outcome {
    /// The first difference from what `iters` iterations of `mode` must leave, described.
    pub fn difference(&self, mode: Mode, width: &Width, iters: u32) -> Option<String> {
        let (runs_work, device) = (mode.runs_work(), mode.device_code().is_some());
        for (i, (&got, &amount)) in self.counters.iter().zip(&width.amounts).enumerate() {
            let want = if runs_work { amount.wrapping_mul(iters) } else { 0 };
            if got != want {
                return Some(format!("node {i}: counter {got}, want {want} ({iters} x {amount})"));
            }
        }
        let want_done = if runs_work { width.width * iters } else { 0 };
        if self.done != want_done {
            return Some(format!("{} node runs counted, want {want_done}", self.done));
        }
        if device && self.steps != iters {
            return Some(format!("the scheduler ran {} steps, want {iters}", self.steps));
        }
        None
    }
}

/// Times `iters` iterations of `mode` on `width`'s graph.
pub fn time(shared: &mut Shared, width: &Width, mode: Mode, iters: u32) -> Result<Outcome, ExampleError> {
    let stream = &shared.stream;
    shared.counters.memset_async(0, stream)?;
    shared.done.memset_async(0, stream)?;
    shared.steps.memset_async(0, stream)?;
    shared.start.record(stream)?;
    match mode {
        Mode::HostSync => {
            for _ in 0..iters {
                width.host.launch(stream)?;
                stream.synchronize()?;
            }
        }
        Mode::HostNoSync => {
            for _ in 0..iters {
                width.host.launch(stream)?;
            }
        }
        _ => {
            let launcher = width.launchers.iter().find(|(m, _)| *m == mode).map(|(_, l)| l);
            let launcher = launcher.ok_or_else(|| {
                ExampleError::check("device_graph_launch", format!("no scheduler for {mode:?}"))
            })?;
            // One host launch: the scheduler relaunches itself on the device `iters - 1` times.
            launcher.launch(stream)?;
        }
    }
    shared.end.record(stream)?;
    shared.end.synchronize()?;
    // A sibling does not belong to the launcher's graph: wait for the whole device.
    Device::current()?.synchronize()?;
    let ms = f64::from(Event::elapsed_ms(&shared.start, &shared.end)?);
    let refused = shared.slot.take()?.err().map(|err| err.to_string());
    let counters = shared.counters.to_vec()?[..width.width as usize].to_vec();
    Ok(Outcome { ms, counters, done: shared.done.to_vec()?[0], steps: shared.steps.to_vec()?[0], refused })
}

/// Per-run samples of one (width, mode) and the first problem met.
#[derive(Default)]
pub struct Series {
    pub ms: Samples,
    pub problem: Option<String>,
}

impl Series {
    pub fn record(&mut self, run: usize, outcome: Outcome, mode: Mode, width: &Width, iters: u32) {
        if run > 0 {
            self.ms.push(outcome.ms);
        }
        if self.problem.is_none() {
            let problem = outcome.refused.clone().or_else(|| outcome.difference(mode, width, iters));
            self.problem = problem.map(|p| format!("width {} run {run}: {p}", width.width));
        }
    }

    /// Median microseconds per iteration.
    pub fn us_per_iter(&self, iters: u32) -> f64 {
        self.ms.median() * 1e3 / f64::from(iters)
    }
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! { dgl_work, dgl_scheduler }
    }
}
