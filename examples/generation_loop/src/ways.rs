//! The ways to run one generation of a batch, each timed between two CUDA events:
//! (a) a host loop of stream launches that reads a flag back every step; (b) a host loop that
//! replays one graph per step (the step's kernels and the flag's copy to pinned memory);
//! (c) the whole generation as one graph launch, the step as a WHILE body whose last kernel
//! ends the loop.

use cuda_graph::graph::{Graph, GraphExec, HostLaunch};
use cuda_graph::{DeviceBuffer, Event, PinnedBuffer, Result, Stream};

use crate::device::{Batch, DeviceModel, Pick, STATE_GO_ON, STATE_WORDS};
use crate::profile;
use crate::reference::Generation;

/// One way to run a generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// (a) A host loop: the step's four kernels launched on a stream, then the state copied to
    /// pinned memory and read (a wait per step).
    HostLaunches,
    /// (b) A host loop replaying one graph per step: the four kernels and the state's copy to
    /// pinned memory, then a wait and a read, as serving engines replay a captured step.
    GraphPerStep,
    /// (c) One graph launch for the whole generation: a WHILE node whose body is the step; its
    /// last kernel ends the loop when no sequence is left.
    WhileGraph,
}

impl Way {
    /// Every way, in the order they run and are reported.
    pub const ALL: [Way; 3] = [Way::HostLaunches, Way::GraphPerStep, Way::WhileGraph];

    /// The short name used in figures and JSON.
    ///
    /// ```
    /// assert_eq!(generation_loop::ways::Way::WhileGraph.key(), "while_graph");
    /// ```
    pub fn key(self) -> &'static str {
        match self {
            Way::HostLaunches => "host_launches",
            Way::GraphPerStep => "graph_per_step",
            Way::WhileGraph => "while_graph",
        }
    }

    /// The label used in tables and the chart.
    pub fn label(self) -> &'static str {
        match self {
            Way::HostLaunches => "(a) host loop, stream launches",
            Way::GraphPerStep => "(b) host loop, one graph per step",
            Way::WhileGraph => "(c) one graph launch, WHILE node",
        }
    }
}

/// What the profile measures beside the ways (see [`crate::profile`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// Every step of the generation unrolled into one graph: the steps' GPU time alone.
    StepChain,
    /// A WHILE loop of as many steps whose body is four do-nothing kernels of the step's
    /// geometry: loop control and launches alone.
    EmptyWhile,
}

impl Probe {
    /// Both, in the order they run.
    pub const ALL: [Probe; 2] = [Probe::StepChain, Probe::EmptyWhile];

    /// The short name used in JSON.
    pub fn key(self) -> &'static str {
        match self {
            Probe::StepChain => "step_chain",
            Probe::EmptyWhile => "empty_while",
        }
    }

    /// The label used in tables.
    pub fn label(self) -> &'static str {
        match self {
            Probe::StepChain => "all steps unrolled in one graph (no loop control)",
            Probe::EmptyWhile => "WHILE loop of 4 empty kernels (no step work)",
        }
    }
}

/// One timed generation.
#[derive(Debug, Clone)]
pub struct Timed {
    /// What it produced.
    pub generation: Generation,
    /// Steps the device counted.
    pub steps: u32,
    /// Milliseconds between the events around it.
    pub ms: f64,
}

/// One batch on the device, with what every way needs to run it.
pub struct Runner {
    batch: Batch,
    stream: Stream,
    start: Event,
    end: Event,
    /// (a)'s copy of the state.
    readback: PinnedBuffer<u32>,
    /// (b): one step and the copy of the state into `step_readback`.
    step_exec: GraphExec<HostLaunch>,
    step_readback: PinnedBuffer<u32>,
    /// (c): the whole generation.
    while_exec: GraphExec<HostLaunch>,
    /// The profile's graphs and the empty loop's counter.
    chain_exec: GraphExec<HostLaunch>,
    empty_exec: GraphExec<HostLaunch>,
    counter: DeviceBuffer<u32>,
    max_len: u32,
}

impl Runner {
    /// The batch of `starts` (one sequence each, 1..=64) with graphs for (b) and (c), and the
    /// profile's for a generation of `steps` steps.
    pub fn new(model: &DeviceModel, starts: &[u32], max_len: u32, steps: u32) -> Result<Runner> {
        let batch = Batch::new(starts, max_len)?;
        let stream = Stream::new()?;

        let step_readback = PinnedBuffer::zeroed(STATE_WORDS)?;
        let step = Graph::new()?;
        let last = batch.add_step(model, &step, Pick::Host, &[])?;
        step.add_memcpy_to_host(&step_readback, &batch.state().ptr(), STATE_WORDS, &[&last])?;
        let step_exec = step.instantiate::<HostLaunch>(Default::default())?;

        // The handle is 1 at every launch, so the body runs at least once; the body's last
        // kernel sets it to 0 on the last step.
        let whole = Graph::new()?;
        let handle = whole.conditional_handle(Some(1))?;
        let (_loop, body) = whole.add_while(&handle, &[])?;
        batch.add_step(model, &body, Pick::While(handle), &[])?;
        let while_exec = whole.instantiate::<HostLaunch>(Default::default())?;
        let counter = DeviceBuffer::zeroed(1)?;
        let chain_exec = profile::step_chain(model, &batch, steps)?;
        let empty_exec = profile::empty_while(&batch, &counter, steps)?;
        for exec in [&step_exec, &while_exec, &chain_exec, &empty_exec] {
            exec.upload(&stream)?;
        }

        Ok(Runner {
            batch,
            stream,
            start: Event::new()?,
            end: Event::new()?,
            readback: PinnedBuffer::zeroed(STATE_WORDS)?,
            step_exec,
            step_readback,
            while_exec,
            chain_exec,
            empty_exec,
            counter,
            max_len,
        })
    }

    /// Runs one generation `way` from the start tokens and reads back what it produced.
    pub fn run(&mut self, model: &DeviceModel, way: Way) -> Result<Timed> {
        self.batch.reset(&self.stream)?;
        // The device stops every sequence by max_len; the bound only guards against a
        // broken flag (the comparison with the reference then fails).
        let bound = self.max_len + 1;
        let ms = self.between_events(|runner| {
            match way {
                Way::HostLaunches => {
                    for _ in 0..bound {
                        runner.batch.launch_step(model, &runner.stream)?;
                        runner.batch.state().copy_to_pinned_async(&mut runner.readback, &runner.stream)?;
                        if runner.readback.as_slice()?[STATE_GO_ON] == 0 {
                            break;
                        }
                    }
                }
                Way::GraphPerStep => {
                    for _ in 0..bound {
                        runner.step_exec.launch(&runner.stream)?;
                        if runner.step_readback.as_slice()?[STATE_GO_ON] == 0 {
                            break;
                        }
                    }
                }
                Way::WhileGraph => runner.while_exec.launch(&runner.stream)?,
            }
            Ok(())
        })?;
        let (generation, steps) = self.batch.read()?;
        Ok(Timed { generation, steps, ms })
    }

    /// Runs one of the profile's graphs: the step chain from the start tokens (what it
    /// produced is read back), or the empty loop (its step count is read back).
    pub fn probe(&mut self, probe: Probe) -> Result<Timed> {
        match probe {
            Probe::StepChain => {
                self.batch.reset(&self.stream)?;
                let ms = self.between_events(|runner| runner.chain_exec.launch(&runner.stream))?;
                let (generation, steps) = self.batch.read()?;
                Ok(Timed { generation, steps, ms })
            }
            Probe::EmptyWhile => {
                self.counter.memset_async(0, &self.stream)?;
                let ms = self.between_events(|runner| runner.empty_exec.launch(&runner.stream))?;
                let generation = Generation { tokens: Vec::new(), probs: Vec::new() };
                Ok(Timed { generation, steps: self.counter.to_vec()?[0], ms })
            }
        }
    }

    /// Milliseconds between events recorded on the stream before and after `work`'s queued
    /// work (waits for the second).
    fn between_events(&mut self, work: impl FnOnce(&mut Runner) -> Result<()>) -> Result<f64> {
        self.start.record(&self.stream)?;
        work(self)?;
        self.end.record(&self.stream)?;
        self.end.synchronize()?;
        Ok(f64::from(Event::elapsed_ms(&self.start, &self.end)?))
    }
}
