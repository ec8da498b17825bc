//! The graphs that run a whole generation in one launch: the WHILE loop of (c) (one step per
//! iteration, or several), and the profile's step chain and empty loop.

use cuda_graph::graph::{AsNode, Graph, GraphBuilder, GraphExec, HostLaunch, KernelNode};
use cuda_graph::{ConditionalHandle, DeviceBuffer, DevicePtr, Result};

use crate::device::{Batch, Chain, DeviceModel, Pick};

// SAFETY: gl_idle touches no memory; gl_count_while touches only counter[0] (thread 0 of
// block 0), and its one caller below passes a buffer of one element.
cuda_graph::kernels! {
    /// Does nothing.
    unsafe fn gl_idle();
    /// Counts a step; at `steps` ends the WHILE loop of `handle`.
    unsafe fn gl_count_while(handle: ConditionalHandle, counter: DevicePtr<u32>, steps: u32);
}

/// The dependency list "after `last`, if any".
fn after(last: &Option<KernelNode>) -> Vec<&dyn AsNode> {
    last.iter().map(|node| node as &dyn AsNode).collect()
}

/// The whole generation of `batch` as one graph: a WHILE node whose body is `steps` steps, one
/// after the other, each step's kernels joined by `chain`'s edges. The handle is 1 at every
/// launch, so the body runs at least once; the pick of the last step sets it to 0, and steps of
/// the body past it change nothing.
pub fn while_graph(
    model: &DeviceModel, batch: &Batch, steps: u32, chain: Chain,
) -> Result<GraphExec<HostLaunch>> {
    let graph = Graph::new()?;
    let handle = graph.conditional_handle(Some(1))?;
    let (_loop, body) = graph.add_while(&handle, &[])?;
    add_steps(model, batch, &body, Pick::While(handle), chain, steps)?;
    graph.instantiate(Default::default())
}

/// `steps` steps of `batch` unrolled into one graph, each step's four kernels (joined by
/// `chain`'s edges) after the last step's pick: no loop control at all.
pub fn step_chain(
    model: &DeviceModel, batch: &Batch, steps: u32, chain: Chain,
) -> Result<GraphExec<HostLaunch>> {
    let graph = Graph::new()?;
    add_steps(model, batch, &graph, Pick::Host, chain, steps)?;
    graph.instantiate(Default::default())
}

/// Adds `steps` steps to `graph`, each after the one before.
fn add_steps(
    model: &DeviceModel, batch: &Batch, graph: &GraphBuilder, pick: Pick, chain: Chain, steps: u32,
) -> Result<()> {
    let mut last = None;
    for _ in 0..steps {
        last = Some(batch.add_step(model, graph, pick.clone(), chain, &after(&last))?);
    }
    Ok(())
}

/// A WHILE loop of `steps` iterations whose body is four do-nothing kernels of the step's
/// geometry, the last of which counts the iterations in `counter` (one element, zeroed before
/// each launch) and ends the loop.
pub fn empty_while(batch: &Batch, counter: &DeviceBuffer<u32>, steps: u32) -> Result<GraphExec<HostLaunch>> {
    let graph = Graph::new()?;
    let handle = graph.conditional_handle(Some(1))?;
    let (_loop, body) = graph.add_while(&handle, &[])?;
    let configs = batch.configs();
    let (last_config, idle_configs) = configs.split_last().expect("a step has kernels");
    let mut last = None;
    for config in idle_configs {
        last = Some(body.add_kernel(gl_idle(), *config, (), &after(&last))?);
    }
    body.add_kernel(gl_count_while(), *last_config, (handle, counter.ptr(), steps), &after(&last))?;
    graph.instantiate(Default::default())
}

/// The kernels declared here against their C++ parameter types (no GPU needed).
#[cfg(test)]
mod kernel_declarations {
    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! { super::gl_idle, super::gl_count_while }
    }
}
