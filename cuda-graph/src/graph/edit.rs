//! Editing a graph after its nodes exist: removing a node, adding and removing dependencies,
//! and listing a node's dependents, with what keeps node handles honest.
//!
//! # A removed node's handles
//! Node handles are `Copy`, so removing a node cannot take every copy away. Instead each
//! handle remembers the family's removal epoch when it was made, and the family remembers,
//! per node address, the epoch of its removal: a handle made before its node's removal is
//! refused by every call that takes a node ([`CudaError::InvalidArgument`], "the node was
//! removed"), even once CUDA reuses the address for a new node.
//!
//! # What may be removed
//! - Not after instantiation: CUDA names an exec's nodes by the graph's nodes (per-node
//!   setters, and the device-launch exec pool's reuse), so a family that was instantiated
//!   refuses node removal. Edit a clone ([`Graph::clone_graph`](super::Graph::clone_graph))
//!   and instantiate that, or update an exec from it.
//! - Not a conditional node (CUDA would destroy its bodies under their builders) and not a
//!   memory alloc or free node (pointers from [`MemAllocNode::ptr`](super::MemAllocNode::ptr)
//!   were promised to be used only by nodes ordered after the allocation).
//! - What a removed node pointed to (buffers, host closures, events) stays kept with the
//!   family until it is dropped, like everything its nodes ever used.
//! - A [`ChildGraph`](super::ChildGraph) view reads nothing once a node of its family was
//!   removed (the removed node may have held the graph it shows).
//!
//! Neither dependencies nor nodes are removed from graphs holding memory alloc or free nodes
//! (CUDA refuses the first, and an edge, or a node's edges, may be what orders a use of graph
//! memory after its allocation).

use crate::runtime as sys;

use super::edges::{edge_list, Dependency, Edge};
use super::node::{kind_of, raw_deps};
use super::{list_nodes, AsNode, CoreState, GraphBuilder, NodeKind, NodeRef};
use crate::error::refusal::{EditRefusal, NodeRefusal, Unremovable};
use crate::error::{check, CudaError, Result};

impl CoreState {
    /// The raw handles of `nodes`, each refused if its node was removed after the handle was
    /// made. The caller holds this family's lock and has checked the nodes' graph ids.
    pub(crate) fn live(&self, call: &'static str, nodes: &[NodeRef]) -> Result<Vec<sys::cudaGraphNode_t>> {
        nodes
            .iter()
            .map(|node| match self.removed.get(&(node.as_raw() as usize)) {
                Some(&removed) if removed > node.epoch() => {
                    Err(CudaError::refused(call, NodeRefusal::Removed))
                }
                _ => Ok(node.as_raw()),
            })
            .collect()
    }
}

/// Refuses removing `what` (a node or an edge) from `graph` when it holds memory alloc or free
/// nodes: the edges removed may be what orders a use of graph memory after its allocation and
/// before its free ([`MemAllocNode::ptr`](super::MemAllocNode::ptr)'s promise rests on them).
fn refuse_beside_memory_nodes(call: &'static str, graph: sys::cudaGraph_t, what: &'static str) -> Result<()> {
    let (status, all) = list_nodes(graph);
    check(status, "cudaGraphGetNodes")?;
    for node in all {
        if matches!(kind_of(node)?, NodeKind::MemAlloc | NodeKind::MemFree) {
            return Err(CudaError::refused(call, EditRefusal::BesideMemoryNodes { what }));
        }
    }
    Ok(())
}

/// The kinds a removal refuses, with the reason (each kind's rule, `graph::nodes`).
fn refuse_removal(kind: NodeKind) -> Option<Unremovable> {
    kind.removal_refusal()
}

impl GraphBuilder {
    /// Removes `node` from this graph, with every edge into and out of it
    /// (`cudaGraphDestroyNode`). Every handle of the node is refused afterwards, by every
    /// call. Refused for a node of another graph, a node already removed, a conditional,
    /// memory alloc or memory free node, and in a graph an exec was instantiated from
    /// (clone it and edit the clone). What the node used stays kept with the graph.
    ///
    /// ```no_run
    /// use cuda_graph::graph::Graph;
    /// let graph = Graph::new()?;
    /// let first = graph.add_empty(&[])?;
    /// let second = graph.add_empty(&[&first])?;
    /// graph.remove_node(first)?;
    /// assert_eq!(graph.node_count()?, 1);
    /// assert!(graph.dependencies(&second)?.is_empty());
    /// assert!(graph.node_kind(&first).is_err()); // a copy of the handle: refused
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn remove_node<N: AsNode>(&self, node: N) -> Result<()> {
        const CALL: &str = "GraphBuilder::remove_node";
        let node = raw_deps(CALL, self.id, &[&node])?[0];
        self.core.locked(CALL, |state| {
            if state.instantiated {
                return Err(CudaError::refused(CALL, EditRefusal::Instantiated));
            }
            let raw = state.live(CALL, &[node])?[0];
            if let Some(reason) = refuse_removal(kind_of(raw)?) {
                return Err(CudaError::refused(CALL, reason));
            }
            // Removing a node removes its edges, which may be what orders a use of graph
            // memory after its allocation (alloc -> a -> use): refused as edge removal is.
            refuse_beside_memory_nodes(CALL, self.raw, "a node")?;
            // SAFETY: `raw` is a live node of this graph (checked by id and epoch), its family
            // locked; it is no conditional node (whose bodies have builders) and no memory
            // node; no exec names it (the family was never instantiated); handles of it are
            // refused from here on (below, under the same lock).
            check(unsafe { sys::cudaGraphDestroyNode(raw) }, "cudaGraphDestroyNode")?;
            let epoch = self.core.removals.fetch_add(1, std::sync::atomic::Ordering::AcqRel) + 1;
            state.removed.insert(raw as usize, epoch);
            Ok(())
        })
    }

    /// The nodes that depend on `node`, each with the edge from `node` into it
    /// (`cudaGraphNodeGetDependentNodes`): [`Dependency::node`] is the dependent node.
    /// `node` must be a live node of this graph.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{AsNode, Edge, Graph};
    /// let graph = Graph::new()?;
    /// let first = graph.add_empty(&[])?;
    /// let second = graph.add_empty(&[&first])?;
    /// let after = graph.dependents(&first)?;
    /// assert_eq!((after[0].node(), after[0].edge()), (second.as_node(), Edge::Full));
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn dependents(&self, node: &dyn AsNode) -> Result<Vec<Dependency>> {
        const CALL: &str = "GraphBuilder::dependents";
        let node = raw_deps(CALL, self.id, &[node])?[0];
        self.core.locked(CALL, |state| {
            let raw = state.live(CALL, &[node])?[0];
            // SAFETY: `raw` is a live node of this graph (checked by id and epoch), locked.
            let list = unsafe {
                edge_list(raw, sys::cudaGraphNodeGetDependentNodes, "cudaGraphNodeGetDependentNodes")
            }?;
            Ok(list.into_iter().map(|(to, edge)| Dependency::new(self.node_ref(to), edge)).collect())
        })
    }

    /// Adds edges into `to` from each of `deps` (`cudaGraphAddDependencies`, with edge data):
    /// `to` then also waits for those nodes. Programmatic edges need a kernel node `to` (and
    /// an sm_90 device), like [`add_kernel_with`](Self::add_kernel_with). CUDA refuses an
    /// edge that exists already, and a cycle.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{Dependency, Graph};
    /// let graph = Graph::new()?;
    /// let (a, b) = (graph.add_empty(&[])?, graph.add_empty(&[])?);
    /// graph.add_dependencies(&b, &[Dependency::from(&a)])?;
    /// assert_eq!(graph.dependencies(&b)?.len(), 1);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_dependencies(&self, to: &dyn AsNode, deps: &[Dependency]) -> Result<()> {
        const CALL: &str = "GraphBuilder::add_dependencies";
        if deps.iter().any(|dep| dep.edge() != Edge::Full) {
            crate::kernel::require_programmatic_launch(CALL)?;
        }
        self.change_edges(CALL, "cudaGraphAddDependencies", to, deps, |graph, from, to, data, count| {
            // SAFETY: see `change_edges`: live nodes of this locked graph, arrays of `count`.
            unsafe { sys::cudaGraphAddDependencies(graph, from, to, data, count) }
        })
    }

    /// Removes the edges into `to` from each of `deps`, matched with their edge data
    /// (`cudaGraphRemoveDependencies`): pass what [`dependencies`](Self::dependencies)
    /// returned. CUDA refuses an edge that does not exist. Refused in a graph holding memory
    /// alloc or free nodes.
    ///
    /// ```no_run
    /// use cuda_graph::graph::Graph;
    /// let graph = Graph::new()?;
    /// let a = graph.add_empty(&[])?;
    /// let b = graph.add_empty(&[&a])?;
    /// graph.remove_dependencies(&b, &graph.dependencies(&b)?)?;
    /// assert!(graph.dependencies(&b)?.is_empty());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn remove_dependencies(&self, to: &dyn AsNode, deps: &[Dependency]) -> Result<()> {
        const CALL: &str = "GraphBuilder::remove_dependencies";
        self.change_edges(CALL, "cudaGraphRemoveDependencies", to, deps, |graph, from, to, data, count| {
            // SAFETY: see `change_edges`: live nodes of this locked graph, arrays of `count`.
            unsafe { sys::cudaGraphRemoveDependencies(graph, from, to, data, count) }
        })
    }

    /// Checks `to` and `deps` (nodes of this graph, live; programmatic edges only into a
    /// kernel node; no edge removal beside memory nodes), then runs `call_cuda` with the raw
    /// graph and arrays `from`, `to` and edge data of `count` entries, under the lock.
    fn change_edges(
        &self, call: &'static str, cuda_call: &'static str, to: &dyn AsNode, deps: &[Dependency],
        call_cuda: impl FnOnce(
            sys::cudaGraph_t,
            *const sys::cudaGraphNode_t,
            *const sys::cudaGraphNode_t,
            *const sys::cudaGraphEdgeData,
            usize,
        ) -> sys::cudaError_t,
    ) -> Result<()> {
        let to = raw_deps(call, self.id, &[to])?[0];
        let nodes: Vec<NodeRef> = deps.iter().map(Dependency::node).collect();
        let refs: Vec<&dyn AsNode> = nodes.iter().map(|node| node as &dyn AsNode).collect();
        let from = raw_deps(call, self.id, &refs)?;
        let edges: Vec<sys::cudaGraphEdgeData> = deps.iter().map(|dep| dep.edge().raw()).collect();
        self.core.locked(call, |state| {
            let to = state.live(call, &[to])?[0];
            let from = state.live(call, &from)?;
            if deps.iter().any(|dep| dep.edge() != Edge::Full) && kind_of(to)? != NodeKind::Kernel {
                return Err(CudaError::refused(call, EditRefusal::ProgrammaticEdgeTarget));
            }
            if cuda_call == "cudaGraphRemoveDependencies" {
                refuse_beside_memory_nodes(call, self.raw, "an edge")?;
            }
            let targets = vec![to; from.len()];
            check(call_cuda(self.raw, from.as_ptr(), targets.as_ptr(), edges.as_ptr(), from.len()), cuda_call)
        })
    }
}
