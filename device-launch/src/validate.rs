//! Which graphs may be launched from the device, checked node by node before instantiating.
//!
//! CUDA 13.0 answers a device-launch instantiation of a graph with a node it does not allow
//! with `cudaErrorInvalidValue` and nothing more (see `CUDA_FACTS.md`). [`validate`] finds the
//! node first and names it: its index in [`GraphBuilder::nodes`](cuda_graph::graph::GraphBuilder::nodes), its kind and why.
//!
//! Child graphs: the CUDA 13.0 header (`cudaGraphInstantiate`) lists "kernel nodes, memcpy
//! nodes, memset nodes, and child graph nodes" as what a device-launched graph may hold, and
//! the H100 agrees: `device-launch/repro/child_graph_device_launch.cu` (plain CUDA C++)
//! instantiated, uploaded and launched from a kernel graphs whose child held a kernel, a
//! memset, a kernel + memset + memcpy chain, a nested child, or nothing, and every node ran
//! (`device-launch/repro/child_graph_device_launch.h100.txt`). So [`validate`] accepts child
//! graphs and applies its checks inside them, to any depth.

/// Whether [`validate`] accepts child-graph nodes whose own nodes it would accept (checked
/// inside, to any depth): `true`, as measured on CUDA 13.0 (see the module docs). When it is
/// `false` (a driver that refuses them), every child-graph node is refused.
///
/// ```
/// assert!(device_launch::CHILD_GRAPH_NODES_ALLOWED);
/// ```
pub const CHILD_GRAPH_NODES_ALLOWED: bool = true;

use std::ffi::c_void;

use cuda_graph::graph::{AsNode, Graph, NodeKind};
use cuda_graph::sys;
use cuda_graph::CudaError;

use crate::error::{Error, Result};

/// Checks that `graph` may be instantiated for device launch: only kernel, memcpy and memset
/// nodes (and child graphs of such nodes when [`CHILD_GRAPH_NODES_ALLOWED`]), and memcpy
/// nodes only between device (or managed) memory.
///
/// Refused, each with [`Error::UnsupportedNode`] naming the first offending node: host,
/// empty, event record and wait, child graph (unless allowed), memory alloc and free,
/// conditional, external semaphore and batch memory operation nodes, and kinds this crate
/// does not know. A memcpy from or to host memory (pageable, or pinned: see
/// [`Error::UnsupportedMemcpy`]) or a CUDA array is [`Error::UnsupportedMemcpy`]. When child
/// graphs are allowed, an offending node inside one is [`Error::UnsupportedInChildGraph`].
///
/// Not checked (CUDA's to refuse or to misbehave): kernels that use dynamic parallelism
/// (CDP kernel launches) inside a device-launched graph, and nodes on another device.
///
/// [`instantiate_for_device`](crate::instantiate_for_device) calls this first.
///
/// ```no_run
/// use cuda_graph::graph::Graph;
/// use device_launch::Error;
/// let graph = Graph::new()?;
/// graph.add_empty(&[])?;
/// match device_launch::validate(&graph) {
///     Err(Error::UnsupportedNode { index: 0, .. }) => {} // "node 0 is an empty node (...)"
///     other => panic!("{other:?}"),
/// }
/// # Ok::<(), device_launch::Error>(())
/// ```
pub fn validate(graph: &Graph) -> Result<()> {
    let nodes = graph.nodes()?;
    // Kinds first: no CUDA call on a node is made while a refused node (a conditional one,
    // whose bodies other threads may be building) is in the graph.
    for info in &nodes {
        if !allowed(info.kind()) {
            return Err(Error::UnsupportedNode { index: info.index(), kind: info.kind() });
        }
    }
    for info in nodes.iter().filter(|info| info.kind() == NodeKind::Memcpy) {
        // SAFETY: the node belongs to `graph`, a root graph alive and borrowed for this call.
        // It has no conditional node (refused above), so its family has no body that another
        // thread could be changing; `graph.nodes()` succeeded, so no capture into it is running
        // on this thread; and `Graph` is not `Sync`, so no other thread uses it meanwhile.
        let problem = unsafe { memcpy_problem(info.as_node().as_raw()) }?;
        if let Some(problem) = problem {
            return Err(Error::UnsupportedMemcpy { index: info.index(), problem });
        }
    }
    if CHILD_GRAPH_NODES_ALLOWED {
        for info in nodes.iter().filter(|info| info.kind() == NodeKind::ChildGraph) {
            let mut path = Vec::new();
            // SAFETY: as for the memcpy nodes above: a child-graph node of `graph`, which no
            // one else uses during this call.
            if let Some(problem) = unsafe { child_problem(info.as_node().as_raw(), &mut path) }? {
                return Err(Error::UnsupportedInChildGraph { index: info.index(), path, problem });
            }
        }
    }
    Ok(())
}

/// Why the memcpy node `node` cannot be part of a device-launched graph, if it cannot.
///
/// # Safety
/// `node` is a live memcpy node of a graph that no other thread uses during the call.
unsafe fn memcpy_problem(node: sys::cudaGraphNode_t) -> Result<Option<String>> {
    let mut params = sys::cudaMemcpy3DParms::default();
    // SAFETY: `node` is a live memcpy node used by no one else (the caller's promise);
    // `params` is writable.
    let status = unsafe { sys::cudaGraphMemcpyNodeGetParams(node, &mut params) };
    if status != sys::cudaError::cudaSuccess {
        return Err(CudaError::from_code(status.0 as i32, "cudaGraphMemcpyNodeGetParams").into());
    }
    let sides = [
        ("source", params.srcArray.is_null(), params.srcPtr.ptr.cast_const()),
        ("destination", params.dstArray.is_null(), params.dstPtr.ptr.cast_const()),
    ];
    for (side, plain, ptr) in sides {
        let problem = if !plain {
            Some(format!("has a CUDA array as its {side}"))
        } else {
            memory_problem(memory_type(ptr)?, side)
        };
        if problem.is_some() {
            return Ok(problem);
        }
    }
    Ok(None)
}

/// Why the child-graph node `node` cannot be part of a device-launched graph, if it cannot:
/// the first node inside it (at any depth) that could not, with `path` its indices from the
/// child's node list down.
///
/// # Safety
/// `node` is a live child-graph node of a graph that no other thread uses during the call.
unsafe fn child_problem(node: sys::cudaGraphNode_t, path: &mut Vec<usize>) -> Result<Option<String>> {
    let cuda = |status: sys::cudaError_t, call: &'static str| -> Result<()> {
        if status == sys::cudaError::cudaSuccess {
            Ok(())
        } else {
            Err(CudaError::from_code(status.0 as i32, call).into())
        }
    };
    let mut child = std::ptr::null_mut();
    cuda(
        // SAFETY: `node` is a live child-graph node (the caller's promise); `child` is
        // writable. The graph returned is owned by the node, alive as long as it, and used
        // only here.
        unsafe { sys::cudaGraphChildGraphNodeGetGraph(node, &mut child) },
        "cudaGraphChildGraphNodeGetGraph",
    )?;
    let mut count = 0usize;
    // SAFETY: `child` is alive (see above); a null array asks for the count alone.
    cuda(unsafe { sys::cudaGraphGetNodes(child, std::ptr::null_mut(), &mut count) }, "cudaGraphGetNodes")?;
    let mut inner = vec![std::ptr::null_mut(); count];
    if count > 0 {
        // SAFETY: `inner` has room for `count` node handles.
        cuda(unsafe { sys::cudaGraphGetNodes(child, inner.as_mut_ptr(), &mut count) }, "cudaGraphGetNodes")?;
        inner.truncate(count);
    }
    for (index, &inner_node) in inner.iter().enumerate() {
        path.push(index);
        let mut raw_kind = sys::cudaGraphNodeType::cudaGraphNodeTypeKernel;
        // SAFETY: a live node of `child`; `raw_kind` is writable.
        cuda(unsafe { sys::cudaGraphNodeGetType(inner_node, &mut raw_kind) }, "cudaGraphNodeGetType")?;
        let kind = NodeKind::from_raw(raw_kind);
        let problem = if !allowed(kind) {
            Some(format!("{} ({})", crate::error::describe(kind), crate::error::refusal(kind)))
        } else if kind == NodeKind::Memcpy {
            // SAFETY: a live memcpy node of `child`, which only this call uses.
            unsafe { memcpy_problem(inner_node) }?.map(|problem| format!("a memcpy node that {problem}"))
        } else if kind == NodeKind::ChildGraph {
            // SAFETY: a live child-graph node of `child`, which only this call uses.
            unsafe { child_problem(inner_node, path) }?
        } else {
            None
        };
        if problem.is_some() {
            return Ok(problem);
        }
        path.pop();
    }
    Ok(None)
}

/// The node kinds a device-launch graph may contain (CUDA_FACTS.md).
pub(crate) fn allowed(kind: NodeKind) -> bool {
    matches!(kind, NodeKind::Kernel | NodeKind::Memcpy | NodeKind::Memset)
        || (CHILD_GRAPH_NODES_ALLOWED && kind == NodeKind::ChildGraph)
}

/// What memory `ptr` points to (`cudaPointerGetAttributes`).
fn memory_type(ptr: *const c_void) -> Result<sys::cudaMemoryType> {
    // SAFETY: an all-zero `cudaPointerAttributes` is valid (integers and raw pointers).
    let mut attributes: sys::cudaPointerAttributes = unsafe { std::mem::zeroed() };
    // SAFETY: `attributes` is writable; CUDA only inspects the address `ptr`, it does not
    // dereference it.
    let status = unsafe { sys::cudaPointerGetAttributes(&mut attributes, ptr) };
    if status != sys::cudaError::cudaSuccess {
        return Err(CudaError::from_code(status.0 as i32, "cudaPointerGetAttributes").into());
    }
    Ok(attributes.type_)
}

/// Why memory of type `kind` cannot be one side of a device-launched copy, if it cannot.
pub(crate) fn memory_problem(kind: sys::cudaMemoryType, side: &str) -> Option<String> {
    use sys::cudaMemoryType as T;
    match kind {
        T::cudaMemoryTypeDevice | T::cudaMemoryTypeManaged => None,
        // CUDA can copy pinned memory from a device-launched graph, but nothing on the host
        // could then keep slices of the PinnedBuffer away from a copy the device starts.
        T::cudaMemoryTypeHost => Some(format!(
            "has pinned host memory as its {side}: a launch from the device cannot be fenced against the \
             host's slices of the buffer, so copy between host and device outside device-launched graphs"
        )),
        T::cudaMemoryTypeUnregistered => Some(format!("has pageable host memory as its {side}")),
        other => Some(format!("has memory of unknown type {} as its {side}", other.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_kernel_memcpy_and_memset_nodes_are_allowed() {
        let allowed_kinds: Vec<u32> =
            (0..16).filter(|&raw| allowed(NodeKind::from_raw(sys::cudaGraphNodeType(raw)))).collect();
        // 4 is cudaGraphNodeTypeGraph (a child graph).
        let expected: &[u32] = if CHILD_GRAPH_NODES_ALLOWED { &[0, 1, 2, 4] } else { &[0, 1, 2] };
        assert_eq!(allowed_kinds, expected);
    }

    #[test]
    fn host_memory_is_refused_and_device_memory_is_not() {
        use sys::cudaMemoryType as T;
        assert_eq!(memory_problem(T::cudaMemoryTypeDevice, "source"), None);
        assert_eq!(memory_problem(T::cudaMemoryTypeManaged, "source"), None);
        let pinned = memory_problem(T::cudaMemoryTypeHost, "source").unwrap();
        assert!(pinned.contains("pinned host memory as its source"), "{pinned}");
        let problem = memory_problem(T::cudaMemoryTypeUnregistered, "destination").unwrap();
        assert!(problem.contains("pageable host memory as its destination"), "{problem}");
        let err = Error::UnsupportedMemcpy { index: 4, problem };
        assert!(err.to_string().contains("node 4 (memcpy) has pageable host memory"), "{err}");
    }
}
