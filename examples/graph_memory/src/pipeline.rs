//! The pipeline: its stages, the CPU reference, and the two ways of running it that need no
//! graph memory nodes (a graph over preallocated scratch buffers, and stream launches with
//! scratch from a stream-ordered memory pool).

use cuda_graph::graph::{AsNode, Graph, KernelNode};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DeviceBuffer, DevicePtr, MemoryPool, Result, Stream};

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu); the declarations are private to this crate, whose launches pass counts
// no larger than the buffers they point into.
cuda_graph::kernels! {
    /// One stage: `dst[i] = Stage { mul, add }.apply(src[i])` for `i < n`.
    pub unsafe fn gm_stage(src: DevicePtr<u32>, dst: DevicePtr<u32>, n: u32, mul: u32, add: u32);
}

/// Threads per block of every launch.
pub const THREADS_PER_BLOCK: u32 = 256;

/// The constants of one stage; [`Stage::apply`] is what `gm_stage` in `kernels/pipeline.cu`
/// does to one element, [`Stage::random`] draws a pipeline's constants.
pub type Stage = chapter_common::MulAdd;

/// The pipeline's output for `input`: every stage in order.
pub fn reference(input: &[u32], stages: &[Stage]) -> Vec<u32> {
    input.iter().map(|&x| chapter_common::apply_all(x, stages)).collect()
}

/// The launch of `gm_stage` over `n` elements.
pub fn config(n: u32) -> LaunchConfig {
    LaunchConfig::for_elements(n, THREADS_PER_BLOCK)
}

/// The graph over preallocated scratch: stage `k` reads `x` (k = 0) or `scratch[k-1]` and
/// writes `scratch[k]` or `y` (the last stage); each kernel node depends on the one before.
/// The scratch buffers (one fewer than the stages) exist for the program's whole life.
pub fn static_graph(
    stages: &[Stage], x: &DeviceBuffer<u32>, y: &DeviceBuffer<u32>, scratch: &[DeviceBuffer<u32>],
) -> Result<Graph> {
    let n = x.len() as u32;
    let graph = Graph::new()?;
    let mut previous: Option<KernelNode> = None;
    for (k, stage) in stages.iter().enumerate() {
        let src = if k == 0 { x.ptr() } else { scratch[k - 1].ptr() };
        let dst = if k + 1 == stages.len() { y.ptr() } else { scratch[k].ptr() };
        let deps: Vec<&dyn AsNode> = previous.iter().map(|p| p as &dyn AsNode).collect();
        previous =
            Some(graph.add_kernel(gm_stage(), config(n), (src, dst, n, stage.mul, stage.add), &deps)?);
    }
    Ok(graph)
}

/// One pass with scratch from `pool`, allocated on `stream` as the pass goes
/// (`cudaMallocFromPoolAsync`): stage `k`'s output buffer is allocated just before its launch,
/// and its input buffer (stage `k-1`'s output) is dropped right after, which queues its
/// stream-ordered free behind the launch that reads it. So at most two scratch buffers are in
/// use at a time, and none after the pass. `x` and `y` hold `n` elements.
pub fn pool_pass(
    stream: &Stream, pool: &MemoryPool, stages: &[Stage], x: &DevicePtr<u32>, y: &DevicePtr<u32>, n: u32,
) -> Result<()> {
    let mut input: Option<DeviceBuffer<u32>> = None;
    for (k, stage) in stages.iter().enumerate() {
        let src = input.as_ref().map_or_else(|| x.clone(), DeviceBuffer::ptr);
        if k + 1 == stages.len() {
            gm_stage().launch(stream, config(n), (src, y.clone(), n, stage.mul, stage.add))?;
        } else {
            let output = DeviceBuffer::<u32>::alloc_from_pool_async(n as usize, pool, stream)?;
            gm_stage().launch(stream, config(n), (src, output.ptr(), n, stage.mul, stage.add))?;
            // Drops (and so frees, in stream order) the buffer the launch above reads.
            input = Some(output);
        }
    }
    Ok(())
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! { gm_stage }
    }
}
