//! Cloning a graph (`cudaGraphClone`) and finding an original node's copy in the clone.
//!
//! A clone is a graph family of its own: its nodes carry its ids, so a node of the original
//! given to the clone (or to an exec of the clone) is refused, and the other way round. The
//! one way across is [`Graph::cloned_node`], which maps a handle of the original to the
//! clone's node of the same kind, typed as the handle was.

use std::collections::HashMap;
use std::ptr;

use crate::runtime as sys;

use super::{list_nodes, lock_pair, AsNode, ChildGraphNode, EmptyNode, EventRecordNode, EventWaitNode};
use super::{Graph, HostNode, KernelNode, MemcpyNode, MemsetNode, NodeRef};
use crate::error::refusal::{EditRefusal, NodeRefusal};
use crate::error::{check, CudaError, Result};

/// Where a clone came from: the original family, its removal epoch when cloned, and which
/// clone node each original node (by address) became.
pub(crate) struct CloneOrigin {
    original: u64,
    epoch: u64,
    nodes: HashMap<usize, usize>,
}

mod sealed {
    pub trait Sealed {
        fn with_node(node: super::NodeRef) -> Self;
    }
}

/// A node handle type a clone can map ([`Graph::cloned_node`]): every kind a graph CUDA can
/// clone holds (CUDA clones no graph with conditional or memory alloc/free nodes).
///
/// ```
/// fn takes<N: cuda_graph::graph::CloneableNode>() {}
/// takes::<cuda_graph::graph::KernelNode>();
/// takes::<cuda_graph::graph::NodeRef>();
/// ```
pub trait CloneableNode: AsNode + sealed::Sealed {}

macro_rules! cloneable {
    ($($name:ident),*) => { $(
        impl sealed::Sealed for $name {
            fn with_node(node: NodeRef) -> $name {
                $name(node)
            }
        }
        impl CloneableNode for $name {}
    )* };
}
cloneable!(
    KernelNode,
    MemcpyNode,
    MemsetNode,
    EmptyNode,
    ChildGraphNode,
    HostNode,
    EventRecordNode,
    EventWaitNode
);

impl sealed::Sealed for NodeRef {
    fn with_node(node: NodeRef) -> NodeRef {
        node
    }
}
impl CloneableNode for NodeRef {}

impl Graph {
    /// A copy of this graph, every node with its parameters and edges (`cudaGraphClone`;
    /// child graphs are copied too). The clone is independent: editing either leaves the
    /// other as it was, and the clone keeps alive everything this graph's nodes use. CUDA
    /// refuses graphs with conditional or memory alloc/free nodes. The way to edit a graph
    /// an exec was instantiated from (whose nodes cannot be removed) is to edit a clone.
    ///
    /// ```no_run
    /// use cuda_graph::graph::Graph;
    /// let graph = Graph::new()?;
    /// let first = graph.add_empty(&[])?;
    /// graph.add_empty(&[&first])?;
    /// let copy = graph.clone_graph()?;
    /// copy.remove_node(copy.cloned_node(&graph, &first)?)?;
    /// assert_eq!((graph.node_count()?, copy.node_count()?), (2, 1));
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn clone_graph(&self) -> Result<Graph> {
        const CALL: &str = "Graph::clone_graph";
        self.core().locked(CALL, |state| {
            let mut raw = ptr::null_mut();
            // SAFETY: the graph is alive and locked; `raw` is a valid out-pointer.
            check(unsafe { sys::cudaGraphClone(&mut raw, self.as_raw()) }, "cudaGraphClone")?;
            // Owned from here on: dropping `clone` destroys it if the mapping below fails.
            let owners = state.keep_alive.iter().cloned().collect();
            let clone = Graph::from_parts(raw, owners, state.host_work, self.device());
            let (status, originals) = list_nodes(self.as_raw());
            check(status, "cudaGraphGetNodes")?;
            let mut nodes = HashMap::with_capacity(originals.len());
            for original in originals {
                let mut copy = ptr::null_mut();
                check(
                    // SAFETY: `original` is a node of this locked graph, in it when it was
                    // cloned; `raw` is that clone, alive (owned by `clone`) and nobody else's.
                    unsafe { sys::cudaGraphNodeFindInClone(&mut copy, original, raw) },
                    "cudaGraphNodeFindInClone",
                )?;
                nodes.insert(original as usize, copy as usize);
            }
            let origin = CloneOrigin { original: self.core().id(), epoch: self.core().epoch(), nodes };
            let mut clone_state = clone.core().state();
            clone_state.clone_of = Some(origin);
            // CUDA clones no graph with conditional nodes, so a handle made here is tested by
            // no node of the clone: `update` refuses the clone as it refuses this graph.
            clone_state.handles = state.handles.clone();
            drop(clone_state);
            Ok(clone)
        })
    }

    /// The node of this clone that `node`, a node of `original`, was copied to, typed like
    /// `node`. Refused unless this graph was cloned from `original` (by
    /// [`clone_graph`](Self::clone_graph)), `node` was in it then and still is, and its copy
    /// was not removed from the clone.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{Graph, NodeKind};
    /// let graph = Graph::new()?;
    /// let join = graph.add_empty(&[])?;
    /// let copy = graph.clone_graph()?;
    /// let copied = copy.cloned_node(&graph, &join)?;
    /// assert_eq!(copy.node_kind(&copied)?, NodeKind::Empty);
    /// assert!(graph.node_kind(&copied).is_err()); // a node of the clone, not of `graph`
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn cloned_node<N: CloneableNode>(&self, original: &Graph, node: &N) -> Result<N> {
        const CALL: &str = "Graph::cloned_node";
        let node = node.as_node();
        if node.graph_id() != original.core().id() {
            return Err(CudaError::refused(CALL, NodeRefusal::NotOfOriginal));
        }
        let (mine, theirs) = lock_pair(CALL, self.core(), original.core())?;
        let theirs = theirs.ok_or_else(|| CudaError::refused(CALL, EditRefusal::CloneOfItself))?;
        let origin = mine
            .clone_of
            .as_ref()
            .filter(|origin| origin.original == original.core().id())
            .ok_or_else(|| CudaError::refused(CALL, EditRefusal::NotClonedFrom))?;
        let raw = theirs.live(CALL, &[node])?[0];
        // A removal of this address since the clone means the node there now is a newer one.
        if theirs.removed.get(&(raw as usize)).is_some_and(|&removed| removed > origin.epoch) {
            return Err(CudaError::refused(CALL, NodeRefusal::AddedAfterClone));
        }
        let copy = *origin
            .nodes
            .get(&(raw as usize))
            .ok_or_else(|| CudaError::refused(CALL, NodeRefusal::AddedAfterClone))?;
        if mine.removed.contains_key(&copy) {
            return Err(CudaError::refused(CALL, NodeRefusal::CopyRemovedFromClone));
        }
        Ok(N::with_node(self.node_ref(copy as sys::cudaGraphNode_t)))
    }
}
