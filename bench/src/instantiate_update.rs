//! (c) Graph instantiate and exec update cost for a chain of `nodes` kernel nodes, host µs.
//!
//! - instantiate: one `Graph::instantiate` (Rust) or `cudaGraphInstantiate` (C++) of the same
//!   chain, the exec destroyed after the clock stops;
//! - instantiate, twin nodes via `cudaGraphAddNode`: the same, against a C++ chain whose nodes
//!   were added as the Rust crate adds them;
//! - instantiate, raw calls from Rust: `cudaGraphInstantiateWithParams` (the crate's call) and
//!   `cudaGraphInstantiate` (the twin's) called directly on the Rust graph, against the same C++
//!   instantiate: whether a difference is the crate's code, the call, or CUDA's work on these
//!   graphs;
//! - update: one whole-graph `GraphExec::update` (Rust) or `cudaGraphExecUpdate` (C++) from a
//!   graph of the same shape whose nodes add 2 instead of 1, then back, alternately (so every
//!   update changes every node's parameters). Afterwards each exec is launched once and the
//!   counter shows it runs what the last update gave it;
//! - update, twin nodes via `cudaGraphAddNode`: the same update, where the C++ chain's nodes
//!   were added with the generic `cudaGraphAddNode` (as the Rust crate adds them) instead of
//!   `cudaGraphAddKernelNode`: whether the node API explains a difference in update cost;
//! - update, raw call from Rust: `cudaGraphExecUpdate` called directly on the Rust exec and
//!   graphs (no crate code around it), against the same C++ update: whether a difference is the
//!   crate's bookkeeping or CUDA's work on these graphs.
//!
//! These rows take [`SAMPLES_FACTOR`] times the plan's samples: each is one host call of
//! 10-150 µs whose samples spread over 5-7% within a run (the CPU's, not the GPU's, noise),
//! and the extra samples cost well under a second.

use std::cell::Cell;

use cuda_graph::graph::{GraphExec, HostLaunch};

use crate::error::{expect_count, Result};
use crate::graph_replay::build_chain;
use crate::harness::{host_us, interleave, Plan, Row, RustSide};
use crate::twin::{Twin, TwinChain};

/// The instantiate row's name.
pub const INSTANTIATE: &str = cuda_graph_bench_report::operations::INSTANTIATE;
/// The instantiate row against a twin whose nodes came from `cudaGraphAddNode`.
pub const INSTANTIATE_ADD_NODE: &str = cuda_graph_bench_report::operations::INSTANTIATE_ADD_NODE;
/// The rows of the raw instantiate calls on the Rust side's graph.
pub const INSTANTIATE_RAW: &str = cuda_graph_bench_report::operations::INSTANTIATE_RAW;
/// See [`INSTANTIATE_RAW`].
pub const INSTANTIATE_RAW_PLAIN: &str = cuda_graph_bench_report::operations::INSTANTIATE_RAW_PLAIN;
/// The update row's name.
pub const UPDATE: &str = cuda_graph_bench_report::operations::UPDATE;
/// The row of the update against a twin whose nodes came from `cudaGraphAddNode`.
pub const UPDATE_ADD_NODE: &str = cuda_graph_bench_report::operations::UPDATE_ADD_NODE;
/// The row of the raw `cudaGraphExecUpdate` call on the Rust side's exec and graphs.
pub const UPDATE_RAW: &str = cuda_graph_bench_report::operations::UPDATE_RAW;

/// How many times the plan's timed samples (and warm-up) these rows take.
pub const SAMPLES_FACTOR: usize = 3;

/// Measures both sides.
pub fn measure(rust: &mut RustSide, twin: &Twin, plan: &Plan, nodes: u32) -> Result<Vec<Row>> {
    let plan = &Plan { warmup: plan.warmup * SAMPLES_FACTOR, reps: plan.reps * SAMPLES_FACTOR };
    let (graph_one, graph_two) =
        (build_chain(&rust.counter, nodes, 1)?, build_chain(&rust.counter, nodes, 2)?);
    let (cpp_one, cpp_two) = (twin.chain(nodes, 1)?, twin.chain(nodes, 2)?);
    let (generic_one, generic_two) = (twin.chain_via_add_node(nodes, 1)?, twin.chain_via_add_node(nodes, 2)?);

    let rust_instantiate = || {
        let (exec, us) = host_us(|| Ok(graph_one.instantiate::<HostLaunch>(Default::default())?))?;
        drop(exec);
        Ok(us)
    };
    let instantiate = interleave(plan, rust_instantiate, || cpp_one.instantiate())?;
    let instantiate_add_node = interleave(plan, rust_instantiate, || generic_one.instantiate())?;
    let instantiate_raw = interleave(plan, || raw_instantiate(&graph_one, true), || cpp_one.instantiate())?;
    let instantiate_raw_plain =
        interleave(plan, || raw_instantiate(&graph_one, false), || cpp_one.instantiate())?;

    // Uploaded before the updates, as the twin's exec is (`build_chain` in twin.cu).
    let mut exec: GraphExec<HostLaunch> = graph_one.instantiate(Default::default())?;
    exec.upload(&rust.stream)?;
    rust.stream.synchronize()?;
    // Which graph the next update takes its parameters from: two, one, two, … (each side).
    let rust_next_two = Cell::new(true);
    let mut rust_update = || {
        let from = if rust_next_two.replace(!rust_next_two.get()) { &graph_two } else { &graph_one };
        Ok(host_us(|| Ok(exec.update(from)?))?.1)
    };
    let cpp_update = |next_two: &Cell<bool>, one: &TwinChain<'_>, two: &TwinChain<'_>| {
        one.update_from(if next_two.replace(!next_two.get()) { two } else { one })
    };
    let (cpp_next_two, generic_next_two) = (Cell::new(true), Cell::new(true));
    let update = interleave(plan, &mut rust_update, || cpp_update(&cpp_next_two, &cpp_one, &cpp_two))?;
    let update_add_node =
        interleave(plan, &mut rust_update, || cpp_update(&generic_next_two, &generic_one, &generic_two))?;
    // SAFETY: the raw handle is used only below, by this thread, for whole-graph updates
    // from `graph_one`/`graph_two`, whose nodes point at what lives until this function
    // returns, after the exec's last launch; no kernel receives it; the exec outlives it.
    let raw_exec = unsafe { exec.as_raw() };
    let mut raw_update = || {
        let from = if rust_next_two.replace(!rust_next_two.get()) { &graph_two } else { &graph_one };
        let mut info = cuda_graph::sys::cudaGraphExecUpdateResultInfo::default();
        let (status, us) = host_us(|| {
            // SAFETY: the exec and both graphs are alive and used by this thread only; the
            // graphs have the exec's topology; `info` is writable. Both graphs and the counter
            // their nodes use live until this function returns, after the exec's last launch.
            Ok(unsafe { cuda_graph::sys::cudaGraphExecUpdate(raw_exec, from.as_raw(), &mut info) })
        })?;
        if status != cuda_graph::sys::cudaError::cudaSuccess {
            return Err(cuda_graph::CudaError::from_code(status.0 as i32, "cudaGraphExecUpdate").into());
        }
        Ok(us)
    };
    let update_raw = interleave(plan, &mut raw_update, || cpp_update(&cpp_next_two, &cpp_one, &cpp_two))?;

    // The last update gave each exec the values of graph "two" when the next would be "one".
    let value = |next_two: bool| if next_two { 1 } else { 2 };
    rust.begin_sample()?;
    exec.launch(&rust.stream)?;
    rust.end_sample()?;
    expect_count(UPDATE, "Rust", rust.counter()?, nodes * value(rust_next_two.get()))?;
    let (_, counter) = cpp_one.replay(1)?;
    expect_count(UPDATE, "C++", counter, nodes * value(cpp_next_two.get()))?;
    let (_, counter) = generic_one.replay(1)?;
    expect_count(UPDATE_ADD_NODE, "C++", counter, nodes * value(generic_next_two.get()))?;

    Ok(vec![
        Row::new(INSTANTIATE, format!("nodes={nodes}"), "µs", instantiate),
        Row::new(INSTANTIATE_ADD_NODE, format!("nodes={nodes}"), "µs", instantiate_add_node),
        Row::new(INSTANTIATE_RAW, format!("nodes={nodes}"), "µs", instantiate_raw),
        Row::new(INSTANTIATE_RAW_PLAIN, format!("nodes={nodes}"), "µs", instantiate_raw_plain),
        Row::new(UPDATE, format!("nodes={nodes}"), "µs", update),
        Row::new(UPDATE_ADD_NODE, format!("nodes={nodes}"), "µs", update_add_node),
        Row::new(UPDATE_RAW, format!("nodes={nodes}"), "µs", update_raw),
    ])
}

/// One instantiation of `graph` by a raw call, `cudaGraphInstantiateWithParams` (`with_params`,
/// no flags) or `cudaGraphInstantiate` (flags 0), timed, the exec destroyed after the clock
/// stops (as the twin does). The graph's device is current (the bench runs on one device).
fn raw_instantiate(graph: &cuda_graph::graph::Graph, with_params: bool) -> Result<f64> {
    use cuda_graph::sys;
    let mut exec: sys::cudaGraphExec_t = std::ptr::null_mut();
    let (status, us) = host_us(|| {
        Ok(if with_params {
            let mut params = sys::cudaGraphInstantiateParams::default();
            // SAFETY: the graph is alive and used by this thread only; `exec` and `params` are
            // valid for writes.
            unsafe { sys::cudaGraphInstantiateWithParams(&mut exec, graph.as_raw(), &mut params) }
        } else {
            // SAFETY: as above; flags 0.
            unsafe { sys::cudaGraphInstantiate(&mut exec, graph.as_raw(), 0) }
        })
    })?;
    if status != sys::cudaError::cudaSuccess {
        return Err(cuda_graph::CudaError::from_code(status.0 as i32, "cudaGraphInstantiate").into());
    }
    // SAFETY: the exec was just made, never launched, and is destroyed once.
    let status = unsafe { sys::cudaGraphExecDestroy(exec) };
    if status != sys::cudaError::cudaSuccess {
        return Err(cuda_graph::CudaError::from_code(status.0 as i32, "cudaGraphExecDestroy").into());
    }
    Ok(us)
}
