//! The kernel chain: its constants, the CPU reference, and the three ways the program issues
//! it (launch by launch on a stream, captured from the stream, built node by node).

use cuda_graph::graph::{CaptureMode, Graph, KernelNode};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DeviceBuffer, DevicePtr, Result, Stream};

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu); the declarations are private to this crate, whose launches pass counts
// no larger than the buffers they point into.
cuda_graph::kernels! {
    /// One step of the chain: `dst[i] = Step { mul, add }.apply(src[i])` for `i < n`.
    pub unsafe fn cg_step(src: DevicePtr<u32>, dst: DevicePtr<u32>, n: u32, mul: u32, add: u32);
}

/// The constants of one kernel of the chain; [`Step::apply`] is what `cc_mul_add` in
/// `kernels/chain.cu` does to one element, [`Step::random`] draws a chain's constants.
pub type Step = chapter_common::MulAdd;

/// The output of one pass of `steps` over `input`.
pub fn reference(input: &[u32], steps: &[Step]) -> Vec<u32> {
    reference_passes(input, steps, 1)
}

/// The output after `passes` passes of `steps`, each continuing from the one before, starting
/// from `input`: what a run of `passes` iterations, on the stream or in a graph, must leave.
/// Every step is a bijection of `u32`, so one pass more or fewer changes (almost) every
/// element.
///
/// ```
/// let steps = [cuda_graphs::Step { mul: 3, add: 1 }];
/// let once = cuda_graphs::reference(&[2], &steps);
/// assert_eq!(cuda_graphs::reference_passes(&[2], &steps, 2), cuda_graphs::reference(&once, &steps));
/// ```
pub fn reference_passes(input: &[u32], steps: &[Step], passes: u32) -> Vec<u32> {
    input.iter().map(|&x| (0..passes).fold(x, |x, _| chapter_common::apply_all(x, steps))).collect()
}

/// The sum of all elements, as a 64-bit number (what the book prints as its checksum).
pub fn checksum(values: &[u32]) -> u64 {
    values.iter().map(|&v| u64::from(v)).sum()
}

/// The arguments of a step with constants `step`, in place over `out`.
pub fn step_args(step: Step, out: &DeviceBuffer<u32>) -> (DevicePtr<u32>, DevicePtr<u32>, u32, u32, u32) {
    (out.ptr(), out.ptr(), out.len() as u32, step.mul, step.add)
}

/// Queues one pass of `steps` over `out` (in place) on `stream`, one `cudaLaunchKernel` per
/// step. While `stream` is being captured, the same calls record the pass into the graph
/// instead.
pub fn launch_pass(
    stream: &Stream, config: LaunchConfig, steps: &[Step], out: &DeviceBuffer<u32>,
) -> Result<()> {
    for &step in steps {
        cg_step().launch(stream, config, step_args(step, out))?;
    }
    Ok(())
}

/// Records one pass of `steps` into a new graph by stream capture (the chapter's way).
pub fn capture_pass(
    stream: &Stream, config: LaunchConfig, steps: &[Step], out: &DeviceBuffer<u32>,
) -> Result<Graph> {
    // The kernel's parameter check calls CUDA, which a capture would refuse: run it first.
    cg_step().function()?;
    let capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
    launch_pass(stream, config, steps, out)?;
    capture.end()
}

/// Builds the same pass node by node, each kernel node depending on the one before, and
/// returns the nodes (whose parameters an exec can then change one at a time).
pub fn build_pass(
    config: LaunchConfig, steps: &[Step], out: &DeviceBuffer<u32>,
) -> Result<(Graph, Vec<KernelNode>)> {
    let graph = Graph::new()?;
    let mut nodes: Vec<KernelNode> = Vec::with_capacity(steps.len());
    for &step in steps {
        let node = match nodes.last() {
            Some(prev) => graph.add_kernel(cg_step(), config, step_args(step, out), &[prev])?,
            None => graph.add_kernel(cg_step(), config, step_args(step, out), &[])?,
        };
        nodes.push(node);
    }
    Ok((graph, nodes))
}

#[cfg(test)]
mod tests {
    use chapter_common::Rng;

    use super::*;

    #[test]
    fn one_changed_constant_changes_the_result() {
        let mut rng = Rng::new(9);
        let input: Vec<u32> = (0..64).map(|_| rng.next_u64() as u32).collect();
        let steps = Step::random(&mut rng, 20);
        let mut changed = steps.clone();
        changed[10].add ^= 0x5bd1_e995;
        assert_ne!(reference(&input, &steps), reference(&input, &changed));
        assert_eq!(checksum(&[u32::MAX, u32::MAX]), 2 * u64::from(u32::MAX));
    }

    #[test]
    fn every_pass_shows_in_the_output() {
        // A graph that skipped a replay (or a stream that lost a pass) leaves the output of
        // fewer passes: the reference for n passes differs from n - 1 and n + 1 passes in
        // (almost) every element, so the check counts passes, not just the last one.
        let mut rng = Rng::new(0x5eed);
        let input: Vec<u32> = (0..1000).map(|_| rng.next_u64() as u32).collect();
        let steps = Step::random(&mut rng, 6);
        let at = |passes| reference_passes(&input, &steps, passes);
        for passes in [1, 2, 20, 21] {
            let (fewer, want, more) = (at(passes - 1), at(passes), at(passes + 1));
            let same = |a: &[u32]| a.iter().zip(&want).filter(|(x, y)| x == y).count();
            assert!(same(&fewer) < 5 && same(&more) < 5, "{passes}: {} {}", same(&fewer), same(&more));
        }
        assert_eq!(at(0), input);
        assert_eq!(at(1), reference(&input, &steps));
        assert_eq!(at(2), reference(&reference(&input, &steps), &steps));
    }
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! { cg_step }
    }
}
