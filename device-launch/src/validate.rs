//! Which graphs may be launched from the device, checked node by node before instantiating.
//!
//! CUDA 13.0 answers a device-launch instantiation of a graph with a node it does not allow
//! with `cudaErrorInvalidValue` and nothing more (ARCHITECTURE.md, "What a device-launched graph
//! may hold"; `tests/validate.rs` pins each refusal). [`validate`] finds the
//! node first and names it: its index in [`GraphBuilder::nodes`](cuda_graph::graph::GraphBuilder::nodes), its kind and why.
//!
//! Child graphs: the CUDA 13.0 header (`cudaGraphInstantiate`) lists "kernel nodes, memcpy
//! nodes, memset nodes, and child graph nodes" as what a device-launched graph may hold, and
//! the H100 agrees: `device-launch/repro/child_graph_device_launch.cu` (plain CUDA C++)
//! instantiated, uploaded and launched from a kernel graphs whose child held a kernel, a
//! memset, a kernel + memset + memcpy chain, a nested child, or nothing, and every node ran
//! (`device-launch/repro/child_graph_device_launch.h100.txt`). So [`validate`] accepts child
//! graphs and applies its checks inside them, to any depth.
//!
//! Programmatic edges (programmatic dependent launch between kernel nodes,
//! [`Dependency::programmatic`](cuda_graph::graph::Dependency::programmatic)): CUDA 13.0
//! instantiated a two-kernel graph joined by one for device launch, and a kernel launched it
//! fire-and-forget with both kernels run, on an H200 (`bench/profile/chain_shape.cu`, run by
//! `bash scripts/run-standalone profile-chain-shape`) and in the H100 run of
//! `device-launch/tests/validate.rs`. So [`validate`] accepts them
//! ([`PROGRAMMATIC_EDGES_ALLOWED`]).

use cuda_graph::graph::{AsNode, ChildGraph, Edge, Graph, MemcpyEndpoint, MemcpyParams, NodeKind};
use cuda_graph::memory::MemoryKind;

use crate::error::{Error, Result};
use crate::node_rules::{allowed, describe, refusal, CHILD_GRAPH_NODES_ALLOWED, PROGRAMMATIC_EDGES_ALLOWED};

/// Checks that `graph` may be instantiated for device launch: only kernel, memcpy and memset
/// nodes (and child graphs of such nodes when [`CHILD_GRAPH_NODES_ALLOWED`]), and memcpy
/// nodes only between device (or managed) memory.
///
/// Programmatic edges between kernel nodes are accepted ([`PROGRAMMATIC_EDGES_ALLOWED`]).
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
    // Kinds first: a refused node is named before any node's parameters are read.
    for info in &nodes {
        if !allowed(info.kind()) {
            return Err(Error::UnsupportedNode { index: info.index(), kind: info.kind() });
        }
    }
    for info in nodes.iter().filter(|info| info.kind() == NodeKind::Memcpy) {
        if let Some(problem) = memcpy_problem(&graph.memcpy_params(info)?) {
            return Err(Error::UnsupportedMemcpy { index: info.index(), problem });
        }
    }
    if !PROGRAMMATIC_EDGES_ALLOWED {
        for info in nodes.iter().filter(|info| info.kind() == NodeKind::Kernel) {
            let dependencies = graph.dependencies(info)?;
            if let Some(dep) = dependencies.iter().find(|dep| dep.edge() != Edge::Full) {
                let from = nodes.iter().position(|n| n.as_node() == dep.node()).unwrap_or(usize::MAX);
                return Err(Error::UnsupportedEdge { index: info.index(), from, edge: dep.edge() });
            }
        }
    }
    if CHILD_GRAPH_NODES_ALLOWED {
        for info in nodes.iter().filter(|info| info.kind() == NodeKind::ChildGraph) {
            let mut path = Vec::new();
            if let Some(problem) = child_problem(&graph.child_graph(info)?, &mut path)? {
                return Err(Error::UnsupportedInChildGraph { index: info.index(), path, problem });
            }
        }
    }
    Ok(())
}

/// Why a memcpy node copying as `params` says cannot be part of a device-launched graph, if
/// it cannot.
fn memcpy_problem(params: &MemcpyParams) -> Option<String> {
    params.sides().into_iter().find_map(|(side, endpoint)| match endpoint {
        MemcpyEndpoint::Linear { memory, .. } => memory_problem(memory, side),
        MemcpyEndpoint::Array { .. } => Some(format!("has a CUDA array as its {side}")),
        other => Some(format!("has {other} as its {side}")),
    })
}

/// Why the child graph `child` cannot be part of a device-launched graph, if it cannot: the
/// first node inside it (at any depth) that could not, with `path` its indices from the
/// child's node list down.
fn child_problem(child: &ChildGraph<'_>, path: &mut Vec<usize>) -> Result<Option<String>> {
    for info in child.nodes()? {
        path.push(info.index());
        let kind = info.kind();
        let problem = if !allowed(kind) {
            Some(format!("{} ({})", describe(kind), refusal(kind)))
        } else if kind == NodeKind::Memcpy {
            memcpy_problem(&child.memcpy_params(&info)?)
                .map(|problem| format!("a memcpy node that {problem}"))
        } else if kind == NodeKind::ChildGraph {
            child_problem(&child.child_graph(&info)?, path)?
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

/// Why memory of type `kind` cannot be one side of a device-launched copy, if it cannot.
pub(crate) fn memory_problem(kind: MemoryKind, side: &str) -> Option<String> {
    match kind {
        MemoryKind::Device | MemoryKind::Managed => None,
        // CUDA can copy pinned memory from a device-launched graph, but nothing on the host
        // could then keep slices of the PinnedBuffer away from a copy the device starts.
        MemoryKind::Pinned => Some(format!(
            "has pinned host memory as its {side}: a launch from the device cannot be fenced against the \
             host's slices of the buffer, so copy between host and device outside device-launched graphs"
        )),
        MemoryKind::Pageable => Some(format!("has pageable host memory as its {side}")),
        MemoryKind::Unknown(code) => Some(format!("has memory of unknown type {code} as its {side}")),
        other => Some(format!("has {other} memory as its {side}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_memory_is_refused_and_device_memory_is_not() {
        assert_eq!(memory_problem(MemoryKind::Device, "source"), None);
        assert_eq!(memory_problem(MemoryKind::Managed, "source"), None);
        let pinned = memory_problem(MemoryKind::Pinned, "source").unwrap();
        assert!(pinned.contains("pinned host memory as its source"), "{pinned}");
        let unknown = memory_problem(MemoryKind::Unknown(7), "source").unwrap();
        assert!(unknown.contains("memory of unknown type 7 as its source"), "{unknown}");
        let problem = memory_problem(MemoryKind::Pageable, "destination").unwrap();
        assert!(problem.contains("pageable host memory as its destination"), "{problem}");
        let err = Error::UnsupportedMemcpy { index: 4, problem };
        assert!(err.to_string().contains("node 4 (memcpy) has pageable host memory"), "{err}");
    }
}
