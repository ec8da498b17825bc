//! The ways to run one generation of a batch, each timed between two CUDA events:
//! (a) a host loop of stream launches that reads a flag back every step; (b) a host loop that
//! replays one graph per step (the step's kernels and the flag's copy to pinned memory); (b′)
//! the same without the copy, the step's last kernel writing the flag into mapped host memory;
//! (c) the whole generation as one graph launch, the step as a WHILE body whose last kernel
//! ends the loop; (d) the same with programmatic edges between the step's kernels. The
//! profile's graphs ([`Probe`]) run the same way as (c): one launch each.

use cuda_graph::graph::{Graph, GraphExec, HostLaunch};
use cuda_graph::{DeviceBuffer, Event, MappedBuffer, PinnedBuffer, Result, Stream};

use crate::device::{Batch, Chain, DeviceModel, Pick, STATE_GO_ON, STATE_WORDS};
use crate::graphs;
use crate::profile::{Probe, STEPS_PER_ITERATION};
use crate::reference::Generation;

/// What runs on this device: every way and probe, less those that need programmatic dependent
/// launch where the device has none (below sm_90).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The ways, in [`Way::ALL`] order.
    pub ways: Vec<Way>,
    /// The probes, in [`Probe::ALL`] order.
    pub probes: Vec<Probe>,
}

impl Plan {
    /// Everything, or (`programmatic` false) everything without programmatic edges.
    ///
    /// ```
    /// use generation_loop::ways::{Plan, Way};
    /// assert!(Plan::new(true).ways.contains(&Way::WhilePdl));
    /// assert_eq!(
    ///     Plan::new(false).ways,
    ///     [Way::HostLaunches, Way::GraphPerStep, Way::GraphPerStepMapped, Way::WhileGraph]
    /// );
    /// ```
    pub fn new(programmatic: bool) -> Plan {
        Plan {
            ways: Way::ALL.into_iter().filter(|w| programmatic || !w.programmatic()).collect(),
            probes: Probe::ALL.into_iter().filter(|p| programmatic || !p.programmatic()).collect(),
        }
    }
}

/// One way to run a generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// (a) A host loop: the step's four kernels launched on a stream, then the state copied to
    /// pinned memory and read (a wait per step).
    HostLaunches,
    /// (b) A host loop replaying one graph per step: the four kernels and the state's copy to
    /// pinned memory, then a wait and a read, as serving engines replay a captured step.
    GraphPerStep,
    /// (b′) As (b) without the copy: the step's last kernel writes the decision into mapped
    /// host memory, and the host waits for the stream and reads it in place (the cheapest
    /// host round trip this project measured).
    GraphPerStepMapped,
    /// (c) One graph launch for the whole generation: a WHILE node whose body is the step; its
    /// last kernel ends the loop when no sequence is left.
    WhileGraph,
    /// (d) As (c), with programmatic edges between the step's kernels (sm_90 and later): each
    /// kernel is launched while the one before finishes and loads its weights meanwhile.
    WhilePdl,
}

impl Way {
    /// Every way, in the order they run and are reported.
    pub const ALL: [Way; 5] =
        [Way::HostLaunches, Way::GraphPerStep, Way::GraphPerStepMapped, Way::WhileGraph, Way::WhilePdl];

    /// The short name used in figures and JSON.
    ///
    /// ```
    /// assert_eq!(generation_loop::ways::Way::WhileGraph.key(), "while_graph");
    /// ```
    pub fn key(self) -> &'static str {
        match self {
            Way::HostLaunches => "host_launches",
            Way::GraphPerStep => "graph_per_step",
            Way::GraphPerStepMapped => "graph_per_step_mapped",
            Way::WhileGraph => "while_graph",
            Way::WhilePdl => "while_pdl",
        }
    }

    /// The label used in tables and the chart.
    pub fn label(self) -> &'static str {
        match self {
            Way::HostLaunches => "(a) host loop, stream launches",
            Way::GraphPerStep => "(b) host loop, one graph per step",
            Way::GraphPerStepMapped => "(b′) as (b), mapped flag",
            Way::WhileGraph => "(c) one graph launch, WHILE node",
            Way::WhilePdl => "(d) as (c), programmatic edges",
        }
    }

    /// Whether it needs programmatic dependent launch (sm_90 and later).
    pub fn programmatic(self) -> bool {
        self == Way::WhilePdl
    }

    /// Whether the whole generation is one graph launch ((c) and (d)).
    pub fn one_launch(self) -> bool {
        matches!(self, Way::WhileGraph | Way::WhilePdl)
    }

    /// The profile's graph of the same steps without loop control: what this way adds to it
    /// is its loop's cost (the chain with programmatic edges for (d)).
    pub fn chain(self) -> Probe {
        match self {
            Way::WhilePdl => Probe::StepChainPdl,
            _ => Probe::StepChain,
        }
    }
}

/// One timed generation.
#[derive(Debug, Clone)]
pub struct Timed {
    /// What it produced (nothing for the empty loop).
    pub generation: Generation,
    /// Steps the device counted.
    pub steps: u32,
    /// Milliseconds between the events around it.
    pub ms: f64,
}

/// A graph that runs a whole generation in one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OneLaunch {
    Way(Way),
    Probe(Probe),
}

/// One batch on the device, with what every way and probe needs to run it.
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
    /// (b′): one step whose last kernel writes the decision into `flag`.
    mapped_exec: GraphExec<HostLaunch>,
    flag: MappedBuffer<u32>,
    /// (c) and the profile's graphs.
    one_launch: Vec<(OneLaunch, GraphExec<HostLaunch>)>,
    /// The empty loop's step counter.
    counter: DeviceBuffer<u32>,
    max_len: u32,
}

impl Runner {
    /// The batch of `starts` (one sequence each, 1..=64) with graphs for (b), (c) and the
    /// profile, whose step chain and empty loop run `steps` steps (the generation's).
    pub fn new(model: &DeviceModel, plan: &Plan, starts: &[u32], max_len: u32, steps: u32) -> Result<Runner> {
        let batch = Batch::new(starts, max_len)?;
        let stream = Stream::new()?;
        let counter = DeviceBuffer::zeroed(1)?;

        let step_readback = PinnedBuffer::zeroed(STATE_WORDS)?;
        let step = Graph::new()?;
        let last = batch.add_step(model, &step, Pick::Host, Chain::Plain, &[])?;
        step.add_memcpy_to_host(&step_readback, &batch.state().ptr(), STATE_WORDS, &[&last])?;
        let step_exec = step.instantiate::<HostLaunch>(Default::default())?;
        step_exec.upload(&stream)?;

        let flag = MappedBuffer::zeroed(1)?;
        let mapped_step = Graph::new()?;
        batch.add_step(model, &mapped_step, Pick::Mapped(flag.ptr()), Chain::Plain, &[])?;
        let mapped_exec = mapped_step.instantiate::<HostLaunch>(Default::default())?;
        mapped_exec.upload(&stream)?;

        let mut one_launch = Vec::new();
        let whiles = plan.ways.iter().filter(|w| w.one_launch());
        let kinds =
            whiles.map(|&w| OneLaunch::Way(w)).chain(plan.probes.iter().map(|&p| OneLaunch::Probe(p)));
        for kind in kinds {
            let (plain, pdl) = (Chain::Plain, Chain::Programmatic);
            let exec = match kind {
                OneLaunch::Way(way) => {
                    graphs::while_graph(model, &batch, 1, if way.programmatic() { pdl } else { plain })?
                }
                OneLaunch::Probe(Probe::StepChain) => graphs::step_chain(model, &batch, steps, plain)?,
                OneLaunch::Probe(Probe::StepChainPdl) => graphs::step_chain(model, &batch, steps, pdl)?,
                OneLaunch::Probe(Probe::EmptyWhile) => graphs::empty_while(&batch, &counter, steps)?,
                OneLaunch::Probe(Probe::WhileUnrolled) => {
                    graphs::while_graph(model, &batch, STEPS_PER_ITERATION, plain)?
                }
                OneLaunch::Probe(Probe::WhileUnrolledPdl) => {
                    graphs::while_graph(model, &batch, STEPS_PER_ITERATION, pdl)?
                }
            };
            exec.upload(&stream)?;
            one_launch.push((kind, exec));
        }

        Ok(Runner {
            batch,
            stream,
            start: Event::new()?,
            end: Event::new()?,
            readback: PinnedBuffer::zeroed(STATE_WORDS)?,
            step_exec,
            step_readback,
            mapped_exec,
            flag,
            one_launch,
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
        let ms = self.between_events(|runner| match way {
            Way::HostLaunches => {
                for _ in 0..bound {
                    runner.batch.launch_step(model, &runner.stream)?;
                    runner.batch.state().copy_to_pinned_async(&mut runner.readback, &runner.stream)?;
                    if runner.readback.as_slice()?[STATE_GO_ON] == 0 {
                        break;
                    }
                }
                Ok(())
            }
            Way::GraphPerStep => {
                for _ in 0..bound {
                    runner.step_exec.launch(&runner.stream)?;
                    if runner.step_readback.as_slice()?[STATE_GO_ON] == 0 {
                        break;
                    }
                }
                Ok(())
            }
            Way::GraphPerStepMapped => {
                for _ in 0..bound {
                    runner.mapped_exec.launch(&runner.stream)?;
                    runner.stream.synchronize()?;
                    if runner.flag.load(0) == 0 {
                        break;
                    }
                }
                Ok(())
            }
            _ => runner.launch_one(OneLaunch::Way(way)),
        })?;
        let (generation, steps) = self.batch.read()?;
        Ok(Timed { generation, steps, ms })
    }

    /// Runs one of the profile's graphs: the empty loop (its step count is read back), or one
    /// that generates from the start tokens (what it produced is read back).
    pub fn probe(&mut self, probe: Probe) -> Result<Timed> {
        if probe == Probe::EmptyWhile {
            self.counter.memset_async(0, &self.stream)?;
        } else {
            self.batch.reset(&self.stream)?;
        }
        let ms = self.between_events(|runner| runner.launch_one(OneLaunch::Probe(probe)))?;
        if probe == Probe::EmptyWhile {
            let generation = Generation { tokens: Vec::new(), probs: Vec::new() };
            return Ok(Timed { generation, steps: self.counter.to_vec()?[0], ms });
        }
        let (generation, steps) = self.batch.read()?;
        Ok(Timed { generation, steps, ms })
    }

    /// Launches the one-launch graph of `kind`.
    fn launch_one(&self, kind: OneLaunch) -> Result<()> {
        let (_, exec) =
            self.one_launch.iter().find(|(k, _)| *k == kind).expect("every one-launch graph is built");
        exec.launch(&self.stream)
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
