//! The one thing this program needs that `cuda-graph`'s safe API cannot offer, kept in this
//! one module so the `unsafe` is in one place (the rest of the crate denies it):
//! a kernel node that uses a graph allocation. `MemAllocNode::ptr` is `unsafe` because the
//!    memory exists only between the allocation node and its free node while the graph runs;
//!    [`mem_node_graph`] builds the whole graph here, so the one rule that makes it sound (every
//!    user of a pointer is ordered after its allocation and before its free) is checked by
//!    reading one function.
#![allow(unsafe_code)]

use cuda_graph::graph::{AsNode, Graph, KernelNode, MemAllocNode, MemFreeNode};
use cuda_graph::{DeviceBuffer, Result};

use crate::pipeline::{config, gm_stage, Stage};

/// The pipeline as a graph whose scratch buffers are graph allocations. For a pipeline of K
/// stages, with `a_k` the allocation of stage k's output, `s_k` its kernel and `f_k` its free:
///
/// ```text
/// a_0 -> s_0 -> s_1 -> s_2 -> ... -> s_{K-1}         (kernels in a chain)
/// a_k -> s_k                                          (output allocated before its writer)
/// s_{k+1} -> f_k                                      (freed after its reader)
/// f_{k-2} -> a_k                                      (allocated after the free two back)
/// ```
///
/// The last edge is what lets CUDA give `a_k` the memory of `a_{k-2}`: their lifetimes are
/// ordered, so they may share addresses, and at most two scratch buffers are live at once. The
/// last stage writes `y` (ordinary memory); the first reads `x`. Returns the graph and the
/// allocation nodes (their addresses show the reuse).
pub fn mem_node_graph(
    stages: &[Stage], x: &DeviceBuffer<u32>, y: &DeviceBuffer<u32>,
) -> Result<(Graph, Vec<MemAllocNode>)> {
    let n = x.len() as u32;
    let graph = Graph::new()?;
    let mut allocs: Vec<MemAllocNode> = Vec::new();
    let mut frees: Vec<MemFreeNode> = Vec::new();
    let mut previous: Option<KernelNode> = None;
    for (k, stage) in stages.iter().enumerate() {
        let last = k + 1 == stages.len();
        // SAFETY (for both `ptr` calls below): the pointer of allocation `a_{k-1}` is used by
        // kernels s_{k-1} (its writer, which depends on a_{k-1}) and s_k (its reader, which
        // depends on s_{k-1}); its free f_{k-1} depends on s_k. So both users run after the
        // allocation and before the free, in every launch of the graph, and the pointer is
        // given to nothing else (the graph is returned, its nodes hold no other copy).
        let src = if k == 0 { x.ptr() } else { unsafe { allocs[k - 1].ptr::<u32>() } };
        let output = if last {
            None
        } else {
            let deps: Vec<&dyn AsNode> = if k >= 2 { vec![&frees[k - 2]] } else { Vec::new() };
            Some(graph.add_mem_alloc::<u32>(n as usize, &deps)?)
        };
        let dst = match &output {
            // SAFETY: see above (this is a_k, written by s_k, which depends on it).
            Some(alloc) => unsafe { alloc.ptr::<u32>() },
            None => y.ptr(),
        };
        let mut deps: Vec<&dyn AsNode> = Vec::new();
        if let Some(p) = &previous {
            deps.push(p);
        }
        if let Some(a) = &output {
            deps.push(a);
        }
        let kernel = graph.add_kernel(gm_stage(), config(n), (src, dst, n, stage.mul, stage.add), &deps)?;
        if k >= 1 {
            frees.push(graph.add_mem_free(&allocs[k - 1], &[&kernel])?);
        }
        if let Some(a) = output {
            allocs.push(a);
        }
        previous = Some(kernel);
    }
    Ok((graph, allocs))
}
