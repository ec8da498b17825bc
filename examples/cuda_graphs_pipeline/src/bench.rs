//! The three ways of running the pipeline, timed with CUDA events on one stream.

use cuda_graph::graph::{CaptureMode, GraphExec, HostLaunch};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DeviceBuffer, DevicePtr, Event, MemoryPool, MemoryPoolOptions, Result, Stream};

use crate::model::{stage_maps, Affine, PASSES, STAGES};

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu); the declarations are private to this crate, whose launches pass counts
// no larger than the buffers they point into.
cuda_graph::kernels! {
    /// One stage: `out[i]` = three affine passes over `in[i]`.
    unsafe fn cgp_stage(
        input: DevicePtr<u32>,
        output: DevicePtr<u32>,
        n: u32,
        a0: u32,
        b0: u32,
        a1: u32,
        b1: u32,
        a2: u32,
        b2: u32,
    );
}

/// How the pipeline is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// The baseline: per stage, allocate its output from the pool (`cudaMallocFromPoolAsync`),
    /// launch it, free its input (`cudaFreeAsync`), as an eager framework does.
    StreamAlloc,
    /// Per-stage launches over two buffers allocated once: launch cost alone.
    StreamPrealloc,
    /// The optimized program: `capture_iters` iterations captured once into a graph over the
    /// same two buffers, replayed.
    Graph,
}

impl Way {
    /// A short name, used in figure names (`<name>_ms_per_iter`).
    pub fn name(self) -> &'static str {
        match self {
            Way::StreamAlloc => "stream",
            Way::StreamPrealloc => "stream_prealloc",
            Way::Graph => "graph",
        }
    }
}

/// The device side: input, the two pool buffers, the pool, the stream, the events and the
/// captured graph.
pub struct Bench {
    stream: Stream,
    pool: MemoryPool,
    input: DeviceBuffer<u32>,
    /// Stage inputs/outputs of the preallocated ways: stage k reads one and writes the other;
    /// six stages end where they started, in `ping`.
    ping: DeviceBuffer<u32>,
    pong: DeviceBuffer<u32>,
    start: Event,
    end: Event,
    exec: GraphExec<HostLaunch>,
    config: LaunchConfig,
    n: u32,
    capture_iters: u32,
    maps: [[Affine; PASSES]; STAGES],
}

/// The arguments of stage `stage` from `input` to `output`.
fn stage_args(
    maps: &[[Affine; PASSES]; STAGES], stage: usize, input: DevicePtr<u32>, output: DevicePtr<u32>, n: u32,
) -> (DevicePtr<u32>, DevicePtr<u32>, u32, u32, u32, u32, u32, u32, u32) {
    let [p0, p1, p2] = maps[stage];
    (input, output, n, p0.a, p0.b, p1.a, p1.b, p2.a, p2.b)
}

impl Bench {
    /// Uploads `input`, allocates the two buffers from a pool of its own (which keeps freed
    /// memory: release threshold `u64::MAX`), and captures `capture_iters` iterations into a
    /// graph (`6 x capture_iters` kernel nodes).
    pub fn new(input: &[u32], threads_per_block: u32, capture_iters: u32) -> Result<Bench> {
        let n = input.len() as u32;
        let stream = Stream::new()?;
        let pool = MemoryPool::new(MemoryPoolOptions { release_threshold: u64::MAX, ..Default::default() })?;
        let ping = DeviceBuffer::alloc_from_pool_async(input.len(), &pool, &stream)?;
        let pong = DeviceBuffer::alloc_from_pool_async(input.len(), &pool, &stream)?;
        let config = LaunchConfig::for_elements(n, threads_per_block);
        let maps = stage_maps();

        cgp_stage().function()?; // the parameter check runs before capturing
        let capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
        for _ in 0..capture_iters {
            Self::queue_iteration(&stream, config, &maps, &ping, &pong, n)?;
        }
        let graph = capture.end()?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        stream.synchronize()?;

        Ok(Bench {
            stream,
            pool,
            input: DeviceBuffer::from_slice(input)?,
            ping,
            pong,
            start: Event::new()?,
            end: Event::new()?,
            exec,
            config,
            n,
            capture_iters,
            maps,
        })
    }

    /// Queues one iteration over the preallocated buffers: ping -> pong -> ping ... -> ping.
    fn queue_iteration(
        stream: &Stream, config: LaunchConfig, maps: &[[Affine; PASSES]; STAGES], ping: &DeviceBuffer<u32>,
        pong: &DeviceBuffer<u32>, n: u32,
    ) -> Result<()> {
        for stage in 0..STAGES {
            let (from, to) = if stage % 2 == 0 { (ping, pong) } else { (pong, ping) };
            cgp_stage().launch(stream, config, stage_args(maps, stage, from.ptr(), to.ptr(), n))?;
        }
        Ok(())
    }

    /// Bytes the pool reserves now (after the baseline: its peak, since it keeps everything).
    pub fn pool_reserved_bytes(&self) -> Result<u64> {
        self.pool.reserved_bytes()
    }

    /// Runs `iters` iterations one way, from the input, and returns the output and the time
    /// per iteration in ms (events around the iterations only). `iters` must be a multiple of
    /// `capture_iters` for [`Way::Graph`].
    pub fn run(&mut self, way: Way, iters: u32) -> Result<(Vec<u32>, f64)> {
        let output = match way {
            Way::StreamAlloc => {
                let mut current =
                    DeviceBuffer::alloc_from_pool_async(self.input.len(), &self.pool, &self.stream)?;
                current.copy_from_device_async(&self.input, &self.stream)?;
                self.start.record(&self.stream)?;
                for _ in 0..iters {
                    for stage in 0..STAGES {
                        let next =
                            DeviceBuffer::alloc_from_pool_async(self.input.len(), &self.pool, &self.stream)?;
                        let args = stage_args(&self.maps, stage, current.ptr(), next.ptr(), self.n);
                        cgp_stage().launch(&self.stream, self.config, args)?;
                        // Frees the stage's input, stream-ordered after the launch.
                        current = next;
                    }
                }
                self.end.record(&self.stream)?;
                self.end.synchronize()?;
                current.to_vec()?
            }
            Way::StreamPrealloc | Way::Graph => {
                self.ping.copy_from_device_async(&self.input, &self.stream)?;
                self.start.record(&self.stream)?;
                if way == Way::Graph {
                    for _ in 0..iters / self.capture_iters {
                        self.exec.launch(&self.stream)?;
                    }
                } else {
                    for _ in 0..iters {
                        Self::queue_iteration(
                            &self.stream,
                            self.config,
                            &self.maps,
                            &self.ping,
                            &self.pong,
                            self.n,
                        )?;
                    }
                }
                self.end.record(&self.stream)?;
                self.end.synchronize()?;
                self.ping.to_vec()?
            }
        };
        let ms = f64::from(Event::elapsed_ms(&self.start, &self.end)?) / f64::from(iters.max(1));
        Ok((output, ms))
    }
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! { cgp_stage }
    }
}
