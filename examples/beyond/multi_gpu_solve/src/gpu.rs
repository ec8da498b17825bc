//! The solve on every GPU: each GPU's rows, its copy of w, and one pass (partial gradient,
//! all-reduce, step, convergence test) run two ways: the whole loop as one graph launch per
//! GPU (a WHILE node whose body holds the pass), or each pass driven from the host.

use std::time::{Duration, Instant};

use cuda_graph::graph::{CaptureMode, Graph, GraphExec, HostLaunch};
use cuda_graph::{DeviceBuffer, DeviceConstPtr, DevicePtr, LaunchConfig, PinnedBuffer, Result, Stream};
use cuda_graph_nccl::{Communicator, Group, ReduceOp};

use crate::problem::{Config, Outcome, Shard};

// SAFETY: solve_partial_gradient reads x below rows * features, y below rows, w below
// features and writes g below features; solve_update reads and writes w and g below features
// (features <= 32) and element 0 of gnorm2, passes and keep_going; solve_continue reads
// keep_going[0]. These declarations are private to this module, and every launch passes a
// `Solver`'s buffers, made with exactly those lengths from the counts passed.
cuda_graph::kernels! {
    /// g += this GPU's rows' share of X^T (X w - y).
    unsafe fn solve_partial_gradient(
        x: DeviceConstPtr<f64>,
        y: DeviceConstPtr<f64>,
        w: DeviceConstPtr<f64>,
        g: DevicePtr<f64>,
        rows: u32,
        features: u32,
    );
    /// w -= step * g; g = 0; count the pass; keep_going = |g|^2 > tol2 and passes left.
    unsafe fn solve_update(
        w: DevicePtr<f64>,
        g: DevicePtr<f64>,
        gnorm2: DevicePtr<f64>,
        passes: DevicePtr<u32>,
        keep_going: DevicePtr<u32>,
        features: u32,
        step: f64,
        tol2: f64,
        max_passes: u32,
    );
    /// The WHILE node's condition: keep_going[0].
    unsafe fn solve_continue(handle: cuda_graph::graph::ConditionalHandle, keep_going: DeviceConstPtr<u32>);
}

/// Threads per block of `solve_partial_gradient` (its kernel checks it).
const BLOCK: u32 = 256;

/// One GPU's data: its rows and its copy of the state.
struct RankData {
    x: DeviceBuffer<f64>,
    y: DeviceBuffer<f64>,
    w: DeviceBuffer<f64>,
    g: DeviceBuffer<f64>,
    gnorm2: DeviceBuffer<f64>,
    passes: DeviceBuffer<u32>,
    keep_going: DeviceBuffer<u32>,
    blocks: u32,
}

/// The solve on every GPU of a clique: per rank its communicator, its stream and its data.
pub struct Solver {
    comms: Vec<Communicator>,
    streams: Vec<Stream>,
    data: Vec<RankData>,
    config: Config,
}

impl Solver {
    /// Puts shard `i` on `comms[i]`'s device.
    pub fn new(comms: Vec<Communicator>, config: Config, shards: &[Shard]) -> Result<Solver> {
        let mut streams = Vec::new();
        let mut data = Vec::new();
        for (comm, shard) in comms.iter().zip(shards) {
            let device = comm.device();
            let on = |values: &[f64]| DeviceBuffer::from_slice_on(device, values);
            let sms = device.properties()?.multiprocessors as u32;
            let blocks = (config.rows_per_gpu as u32).div_ceil(BLOCK).clamp(1, sms * 4);
            streams.push(Stream::new_on(device)?);
            data.push(RankData {
                x: on(&shard.x)?,
                y: on(&shard.y)?,
                w: DeviceBuffer::zeroed_on(device, config.features)?,
                g: DeviceBuffer::zeroed_on(device, config.features)?,
                gnorm2: DeviceBuffer::zeroed_on(device, 1)?,
                passes: DeviceBuffer::zeroed_on(device, 1)?,
                keep_going: DeviceBuffer::zeroed_on(device, 1)?,
                blocks,
            });
        }
        Ok(Solver { comms, streams, data, config })
    }

    /// How many GPUs take part.
    pub fn ranks(&self) -> usize {
        self.comms.len()
    }

    /// What each rank ended with.
    pub fn outcomes(&self) -> Result<Vec<Outcome>> {
        self.data.iter().map(|d| Ok(Outcome { w: d.w.to_vec()?, passes: d.passes.to_vec()?[0] })).collect()
    }

    /// Sets every rank's w and g to zero and its pass count to 0 (synchronous).
    fn reset(&mut self) -> Result<()> {
        let zeros = vec![0.0; self.config.features];
        for d in &mut self.data {
            d.w.copy_from_host(&zeros)?;
            d.g.copy_from_host(&zeros)?;
            d.passes.copy_from_host(&[0])?;
        }
        Ok(())
    }

    /// The solve as one graph per GPU: a WHILE node whose body is one pass, recorded by
    /// capturing the pass on every rank's stream. Instantiated, ready to launch. A
    /// communicator's first collective must not be captured (NCCL connects the ranks then):
    /// run [`run_from_host`](Self::run_from_host) first.
    pub fn build_graphs(&mut self) -> Result<Vec<GraphExec<HostLaunch>>> {
        let Solver { comms, streams, data, config } = self;
        let graphs: Vec<Graph> =
            comms.iter().map(|comm| Graph::new_on(comm.device())).collect::<Result<_>>()?;
        let handles =
            graphs.iter().map(|graph| graph.conditional_handle(Some(1))).collect::<Result<Vec<_>>>()?;
        let bodies = graphs
            .iter()
            .zip(&handles)
            .map(|(graph, handle)| graph.add_while(handle, &[]).map(|(_, body)| body))
            .collect::<Result<Vec<_>>>()?;
        let captures = streams
            .iter()
            .zip(&bodies)
            .map(|(stream, body)| stream.begin_capture_to_graph(body, CaptureMode::ThreadLocal, &[]))
            .collect::<Result<Vec<_>>>()?;
        queue_gradients(data, streams, config)?;
        queue_all_reduce(comms, streams, data)?;
        queue_updates(data, streams, comms.len(), config)?;
        for ((d, stream), handle) in data.iter().zip(streams.iter()).zip(&handles) {
            solve_continue().launch(stream, LaunchConfig::new(1, 32), (*handle, d.keep_going.const_ptr()))?;
        }
        for capture in captures {
            capture.end()?;
        }
        graphs.iter().map(|graph| graph.instantiate::<HostLaunch>(Default::default())).collect()
    }

    /// Runs the solve once through the graphs: one launch per GPU. Returns the time from the
    /// first launch until every GPU is done.
    pub fn run_graphs(&mut self, execs: &[GraphExec<HostLaunch>]) -> Result<Duration> {
        self.reset()?;
        let start = Instant::now();
        for (stream, exec) in self.streams.iter().zip(execs) {
            exec.launch(stream)?;
        }
        for stream in &self.streams {
            stream.synchronize()?;
        }
        Ok(start.elapsed())
    }

    /// Runs the same solve with every pass driven from the host: the pass's kernels and the
    /// all-reduce queued, the convergence flag copied back and waited for, then the decision.
    pub fn run_from_host(&mut self) -> Result<Duration> {
        self.reset()?;
        let Solver { comms, streams, data, config } = self;
        let mut flags = streams.iter().map(|_| PinnedBuffer::<u32>::zeroed(1)).collect::<Result<Vec<_>>>()?;
        let start = Instant::now();
        loop {
            queue_gradients(data, streams, config)?;
            queue_all_reduce(comms, streams, data)?;
            queue_updates(data, streams, comms.len(), config)?;
            for ((d, stream), flag) in data.iter().zip(streams.iter()).zip(&mut flags) {
                d.keep_going.copy_to_pinned_async(flag, stream)?;
            }
            // Every rank decides alike (they hold the same g and w); rank 0's flag says.
            if flags[0].as_slice()?[0] == 0 {
                break;
            }
        }
        for stream in streams.iter() {
            stream.synchronize()?;
        }
        Ok(start.elapsed())
    }
}

/// Queues every rank's partial gradient on its stream.
fn queue_gradients(data: &[RankData], streams: &[Stream], config: &Config) -> Result<()> {
    let (rows, features) = (config.rows_per_gpu as u32, config.features as u32);
    for (d, stream) in data.iter().zip(streams) {
        let args = (d.x.const_ptr(), d.y.const_ptr(), d.w.const_ptr(), d.g.ptr(), rows, features);
        solve_partial_gradient().launch(stream, LaunchConfig::new(d.blocks, BLOCK), args)?;
    }
    Ok(())
}

/// Queues the all-reduce (sum) of every rank's g, as one NCCL group.
fn queue_all_reduce(comms: &[Communicator], streams: &[Stream], data: &mut [RankData]) -> Result<()> {
    let mut group = Group::new();
    for ((comm, stream), d) in comms.iter().zip(streams).zip(data.iter_mut()) {
        group.all_reduce_in_place(comm, &mut d.g, ReduceOp::Sum, stream)?;
    }
    group.launch()
}

/// Queues every rank's step and convergence test.
fn queue_updates(data: &[RankData], streams: &[Stream], ranks: usize, config: &Config) -> Result<()> {
    let total = (config.rows_per_gpu * ranks) as f64;
    let step = config.rate / total;
    let tol2 = (config.tolerance * total).powi(2);
    let features = config.features as u32;
    for (d, stream) in data.iter().zip(streams) {
        let (w, g, gnorm2, passes, keep_going) =
            (d.w.ptr(), d.g.ptr(), d.gnorm2.ptr(), d.passes.ptr(), d.keep_going.ptr());
        let args = (w, g, gnorm2, passes, keep_going, features, step, tol2, config.max_passes);
        solve_update().launch(stream, LaunchConfig::new(1, 32), args)?;
    }
    Ok(())
}
