//! The graphs: one step ((b)), the whole generation as a WHILE loop ((c), (d)), and the
//! profile's unrolled steps and empty loop.

use cuda_graph::graph::{AsNode, ConditionalNode, Graph, GraphExec, HostLaunch, KernelNode};
use cuda_graph::{ConditionalHandle, DeviceBuffer, DevicePtr, Result};

use crate::device::{Chain, Decoder, DeviceModel, Pick};

// SAFETY: ll_idle touches no memory; ll_count_while touches only counter[0] (thread 0 of block
// 0), and its one caller below passes a buffer of one element.
cuda_graph::kernels! {
    /// Does nothing.
    unsafe fn ll_idle();
    /// Counts an iteration; at `steps` ends the WHILE loop of `handle`.
    unsafe fn ll_count_while(handle: ConditionalHandle, counter: DevicePtr<u32>, steps: u32);
}

/// The dependency list "after `last`, if any".
fn after(last: &Option<KernelNode>) -> Vec<&dyn AsNode> {
    last.iter().map(|node| node as &dyn AsNode).collect()
}

/// One step as a graph, its kernels joined by `chain`'s edges ((b): launched once per step).
pub fn step_graph(model: &DeviceModel, decoder: &Decoder, chain: Chain) -> Result<GraphExec<HostLaunch>> {
    let graph = Graph::new()?;
    decoder.add_step(model, &graph, Pick::Host, chain, &[])?;
    graph.instantiate(Default::default())
}

/// The whole generation as one graph: a WHILE loop whose body is `per_iteration` steps, its
/// kernels (across the steps too) joined by `chain`'s edges, then, where `per_iteration` is
/// more than 1, a WHILE loop of one step for the steps left over. Before each loop `ll_loop_gate`
/// opens it only if a whole body's steps are left (by the state words' target and the sequence's
/// room); each body's last pick shuts it once fewer are left. Every step any body runs has its
/// count and its room, whatever N is.
pub fn while_graph(
    model: &DeviceModel, decoder: &Decoder, chain: Chain, per_iteration: u32,
) -> Result<GraphExec<HostLaunch>> {
    let graph = Graph::new()?;
    let mut loops = vec![per_iteration];
    if per_iteration > 1 {
        loops.push(1);
    }
    let mut before: Option<ConditionalNode> = None;
    for ahead in loops {
        let handle = graph.conditional_handle(Some(0))?;
        let deps: Vec<&dyn AsNode> = before.iter().map(|node| node as &dyn AsNode).collect();
        let gate = decoder.add_loop_gate(&graph, &handle, ahead, &deps)?;
        let (node, body) = graph.add_while(&handle, &[&gate])?;
        decoder.add_steps(model, &body, ahead, Pick::While(handle, ahead), chain, &[])?;
        before = Some(node);
    }
    graph.instantiate(Default::default())
}

/// `steps` steps unrolled into one graph, each step's kernels joined by `chain`'s edges and
/// each step after the one before by a plain edge: the steps' GPU time without loop control.
pub fn step_chain(
    model: &DeviceModel, decoder: &Decoder, steps: u32, chain: Chain,
) -> Result<GraphExec<HostLaunch>> {
    let graph = Graph::new()?;
    let mut last = None;
    for _ in 0..steps {
        last = Some(decoder.add_step(model, &graph, Pick::Host, chain, &after(&last))?);
    }
    graph.instantiate(Default::default())
}

/// A WHILE loop of `steps` iterations whose body is do-nothing kernels of the step's geometry,
/// the last of which counts the iterations in `counter` (one element, zeroed before each
/// launch) and ends the loop.
pub fn empty_while(
    decoder: &Decoder, counter: &DeviceBuffer<u32>, steps: u32,
) -> Result<GraphExec<HostLaunch>> {
    let graph = Graph::new()?;
    let handle = graph.conditional_handle(Some(1))?;
    let (_loop, body) = graph.add_while(&handle, &[])?;
    let configs: Vec<_> = decoder.ops().into_iter().map(|op| decoder.launch_config(op)).collect();
    let (last_config, idle_configs) = configs.split_last().expect("a step has kernels");
    let mut last = None;
    for config in idle_configs {
        last = Some(body.add_kernel(ll_idle(), *config, (), &after(&last))?);
    }
    body.add_kernel(ll_count_while(), *last_config, (handle, counter.ptr(), steps), &after(&last))?;
    graph.instantiate(Default::default())
}

/// The kernels declared here against their C++ parameter types (no GPU needed).
#[cfg(test)]
mod kernel_declarations {
    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! { super::ll_idle, super::ll_count_while }
    }
}
