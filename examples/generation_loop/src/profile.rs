//! Where a step's time goes, measured beside the ways with the same events:
//! - **step chain**: the whole generation's steps unrolled into one graph (the step's four
//!   kernels, step after step, plain edges), one launch: the step's GPU time with no loop
//!   control at all. Way (c) minus it is what the WHILE loop adds per step; (b) minus it, the
//!   host round trip of a graph per step; (a) minus it, that of stream launches.
//! - **empty WHILE**: a WHILE loop, run for as many steps, whose body is four kernels of the
//!   step's geometry that do nothing (the last counts the steps and ends the loop): the floor
//!   of (c) without the step's work.

use cuda_graph::graph::{Graph, GraphExec, HostLaunch};
use cuda_graph::{ConditionalHandle, DeviceBuffer, DevicePtr, Result};

use crate::device::{Batch, DeviceModel, Pick};

// SAFETY: gl_idle touches no memory; gl_count_while touches only counter[0] (thread 0 of
// block 0), and the one caller passes a buffer of one element.
cuda_graph::kernels! {
    /// Does nothing.
    unsafe fn gl_idle();
    /// Counts a step; at `steps` ends the WHILE loop of `handle`.
    unsafe fn gl_count_while(handle: ConditionalHandle, counter: DevicePtr<u32>, steps: u32);
}

/// `steps` steps of `batch` as one graph, each step's four kernels after the last step's pick.
pub fn step_chain(model: &DeviceModel, batch: &Batch, steps: u32) -> Result<GraphExec<HostLaunch>> {
    let graph = Graph::new()?;
    let mut last = None;
    for _ in 0..steps {
        let deps: Vec<&dyn cuda_graph::graph::AsNode> = last.iter().map(|n| n as _).collect();
        last = Some(batch.add_step(model, &graph, Pick::Host, &deps)?);
    }
    graph.instantiate(Default::default())
}

/// A WHILE loop of `steps` iterations whose body is four do-nothing kernels of the step's
/// geometry; `counter` (one element, zeroed before each launch) counts the iterations.
pub fn empty_while(batch: &Batch, counter: &DeviceBuffer<u32>, steps: u32) -> Result<GraphExec<HostLaunch>> {
    let graph = Graph::new()?;
    let handle = graph.conditional_handle(Some(1))?;
    let (_loop, body) = graph.add_while(&handle, &[])?;
    let configs = batch.configs();
    let (last, kernels) = configs.split_last().expect("a step has kernels");
    let mut previous = None;
    for config in kernels {
        let deps: Vec<&dyn cuda_graph::graph::AsNode> = previous.iter().map(|n| n as _).collect();
        previous = Some(body.add_kernel(gl_idle(), *config, (), &deps)?);
    }
    let deps: Vec<&dyn cuda_graph::graph::AsNode> = previous.iter().map(|n| n as _).collect();
    body.add_kernel(gl_count_while(), *last, (handle, counter.ptr(), steps), &deps)?;
    graph.instantiate(Default::default())
}

/// The kernels declared here against their C++ parameter types (no GPU needed).
#[cfg(test)]
mod kernel_declarations {
    #[test]
    fn match_the_cpp_parameter_types() {
        assert_eq!(super::gl_idle().check_types(), Ok(()));
        assert_eq!(super::gl_count_while().check_types(), Ok(()));
    }
}
