//! The ways to run the decode loop, each timed between two CUDA events around the N decode
//! steps (the prefill before it, untimed): (a) the step's kernels launched on a stream from a
//! host loop; (b) one graph per step (its kernels joined by programmatic edges, as in (d))
//! launched from a host loop; (c) the whole generation as one graph launch, a WHILE node whose
//! body is the step and whose last kernel ends the loop; (d) as (c) with programmatic edges.
//! The host loops know N and never wait for the device inside the loop.

use cuda_graph::graph::{GraphExec, HostLaunch};
use cuda_graph::{Event, Result, Stream};

use crate::device::{Chain, Decoder, DeviceModel, Grid, OnStream, Pick};
use crate::graphs;

/// One way to run the generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// (a) A host loop of stream launches: the step's kernels, N times.
    HostLaunches,
    /// (b) A host loop launching one graph per step (programmatic edges inside the step
    /// where the device has them).
    GraphPerStep,
    /// (c) One graph launch: a WHILE node whose body is the step.
    WhileGraph,
    /// (d) As (c), with programmatic edges between the step's kernels (sm_90 and later).
    WhilePdl,
}

impl Way {
    /// Every way, in the order they run and are reported.
    pub const ALL: [Way; 4] = [Way::HostLaunches, Way::GraphPerStep, Way::WhileGraph, Way::WhilePdl];

    /// The short name used in figures and JSON.
    ///
    /// ```
    /// assert_eq!(llama_decode::ways::Way::WhilePdl.key(), "while_pdl");
    /// ```
    pub fn key(self) -> &'static str {
        match self {
            Way::HostLaunches => "host_launches",
            Way::GraphPerStep => "graph_per_step",
            Way::WhileGraph => "while_graph",
            Way::WhilePdl => "while_pdl",
        }
    }

    /// The label used in tables.
    pub fn label(self) -> &'static str {
        match self {
            Way::HostLaunches => "(a) host loop, stream launches",
            Way::GraphPerStep => "(b) host loop, one graph per step",
            Way::WhileGraph => "(c) one graph launch, WHILE node",
            Way::WhilePdl => "(d) as (c), programmatic edges",
        }
    }

    /// Whether it needs programmatic dependent launch (sm_90 and later).
    pub fn programmatic(self) -> bool {
        self == Way::WhilePdl
    }
}

/// The ways that run on a device: all of them, or without (d) below sm_90.
///
/// ```
/// use llama_decode::ways::{plan, Way};
/// assert_eq!(plan(true).len(), 4);
/// assert!(!plan(false).contains(&Way::WhilePdl));
/// ```
pub fn plan(programmatic: bool) -> Vec<Way> {
    Way::ALL.into_iter().filter(|w| programmatic || !w.programmatic()).collect()
}

/// One timed generation.
#[derive(Debug, Clone)]
pub struct Timed {
    /// The generated tokens.
    pub tokens: Vec<u32>,
    /// Decode steps the device counted.
    pub steps: u32,
    /// Milliseconds between the events around the decode steps.
    pub ms: f64,
}

/// The decoder with every way's graphs, a stream and events.
pub struct Runner {
    decoder: Decoder,
    stream: Stream,
    start: Event,
    end: Event,
    tokens: usize,
    step_exec: GraphExec<HostLaunch>,
    while_exec: GraphExec<HostLaunch>,
    while_pdl_exec: Option<GraphExec<HostLaunch>>,
}

impl Runner {
    /// The decoder for `prompt` and `tokens` generated tokens, launched as `grid` says, with
    /// the graphs of (b), (c) and, where `programmatic`, (d); (c) and (d) run `per_iteration`
    /// steps per WHILE iteration.
    pub fn new(
        model: &DeviceModel, grid: Grid, prompt: &[u32], tokens: usize, per_iteration: u32,
        programmatic: bool,
    ) -> Result<Runner> {
        let decoder = Decoder::new(model.config(), grid, prompt, tokens)?;
        let stream = Stream::new()?;
        let chain = if programmatic { Chain::Programmatic } else { Chain::Plain };
        let step_exec = graphs::step_graph(model, &decoder, chain)?;
        let while_exec = graphs::while_graph(model, &decoder, Chain::Plain, per_iteration)?;
        let while_pdl_exec = if programmatic {
            Some(graphs::while_graph(model, &decoder, Chain::Programmatic, per_iteration)?)
        } else {
            None
        };
        for exec in [Some(&step_exec), Some(&while_exec), while_pdl_exec.as_ref()].into_iter().flatten() {
            exec.upload(&stream)?;
        }
        Ok(Runner {
            decoder,
            stream,
            start: Event::new()?,
            end: Event::new()?,
            tokens,
            step_exec,
            while_exec,
            while_pdl_exec,
        })
    }

    /// The decoder (its buffers).
    pub fn decoder(&self) -> &Decoder {
        &self.decoder
    }

    /// The stream everything runs on.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Resets the decoder and runs the prefill (untimed), then the N decode steps `way`,
    /// timed; reads back the tokens.
    pub fn run(&mut self, model: &DeviceModel, way: Way) -> Result<Timed> {
        self.decoder.reset_and_prefill(model, &self.stream)?;
        let ms = self.between_events(|runner| match way {
            Way::HostLaunches => {
                for _ in 0..runner.tokens {
                    runner.decoder.step(model, Pick::Host, &mut OnStream(&runner.stream))?;
                }
                Ok(())
            }
            Way::GraphPerStep => {
                for _ in 0..runner.tokens {
                    runner.step_exec.launch(&runner.stream)?;
                }
                Ok(())
            }
            Way::WhileGraph => runner.while_exec.launch(&runner.stream),
            Way::WhilePdl => runner
                .while_pdl_exec
                .as_ref()
                .expect("(d) runs only where Runner::new was told the device has programmatic launch")
                .launch(&runner.stream),
        })?;
        let (tokens, steps) = self.decoder.read()?;
        Ok(Timed { tokens, steps, ms })
    }

    /// Queues `steps` decode steps (the graph of (b)) on the stream.
    pub fn advance(&mut self, steps: usize) -> Result<()> {
        for _ in 0..steps {
            self.step_exec.launch(&self.stream)?;
        }
        Ok(())
    }

    /// Resets the decoder, runs the prefill, then times `work` (queued on the stream).
    pub fn time_after_prefill(
        &mut self, model: &DeviceModel, work: impl FnOnce(&mut Runner) -> Result<()>,
    ) -> Result<f64> {
        self.decoder.reset_and_prefill(model, &self.stream)?;
        self.between_events(work)
    }

    /// Milliseconds between events recorded on the stream before and after `work`'s queued
    /// work (waits for the second).
    pub fn between_events(&mut self, work: impl FnOnce(&mut Runner) -> Result<()>) -> Result<f64> {
        self.start.record(&self.stream)?;
        work(self)?;
        self.end.record(&self.stream)?;
        self.end.synchronize()?;
        Ok(f64::from(Event::elapsed_ms(&self.start, &self.end)?))
    }
}
