//! Naming an exec's nodes by the graph it was first instantiated from: the references that
//! keep that graph only for its node names ([`OriginRef`]), the release of what its nodes
//! point to once only those are left ([`owner_leaving`]), and the translation of a reused
//! exec's nodes to the origin's ([`NodeAlias`]).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::runtime as sys;

use crate::graph::GraphCore;

/// A raw node handle of an origin graph, which the pool keeps alive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::graph) struct NodeHandle(pub(in crate::graph) sys::cudaGraphNode_t);

// SAFETY: an identifier of a node of a graph the holder keeps alive; passed to CUDA only under
// the family's lock.
unsafe impl Send for NodeHandle {}
// SAFETY: as above; shared access only copies the identifier.
unsafe impl Sync for NodeHandle {}

/// Serializes every change of a graph's [`OriginRef`] count with the reading of both counts
/// in [`owner_leaving`], so that the two are read consistently.
static ORIGIN_COUNTS: Mutex<()> = Mutex::new(());

fn origin_counts() -> MutexGuard<'static, ()> {
    ORIGIN_COUNTS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Releases what the nodes of `graph` point to when an owner is going (holding `leaving`
/// of its references, about to drop them) and nothing but [`OriginRef`]s would be left: no
/// one could then launch `graph` or instantiate it, and the execs that name their nodes by
/// it take their parameters from other graphs (or are parked).
///
/// Other references are only made from other references that are not `OriginRef`s, so once
/// none but the leaving owner's is left, none can appear. `OriginRef`s change both counts
/// under [`ORIGIN_COUNTS`] (a new one) or drop their reference after lowering the count (a
/// dropped one), so the check never counts fewer references than there are. It never waits
/// for the graph's lock (another thread may hold it while waiting for a capture): if the lock
/// is taken, the release is left to a later owner.
pub(in crate::graph) fn owner_leaving(graph: &Arc<GraphCore>, leaving: usize) {
    if graph.name_refs.load(Ordering::Acquire) == 0 {
        // No name reference: nothing to release (the check below, without the lock; one made
        // right after this load is ordered after this call, as under the lock).
        return;
    }
    let released = {
        let _counts = origin_counts();
        let names = graph.name_refs.load(Ordering::Acquire);
        if names == 0 || Arc::strong_count(graph) > names + leaving {
            return;
        }
        match graph.try_lock_state() {
            Some(mut state) => state.keep_alive.take(),
            None => return,
        }
    };
    drop(released); // outside the locks: freeing calls CUDA
}

/// A reference to a graph kept only because its nodes name an exec's nodes (a parked exec's
/// origin, or a reused exec's): counted apart, so that what the graph's nodes point to can
/// be released once only such references are left.
pub(in crate::graph) struct OriginRef(Option<Arc<GraphCore>>);

impl OriginRef {
    pub(in crate::graph) fn new(graph: &Arc<GraphCore>) -> OriginRef {
        let _counts = origin_counts();
        graph.name_refs.fetch_add(1, Ordering::AcqRel);
        OriginRef(Some(graph.clone()))
    }

    pub(in crate::graph) fn graph(&self) -> &Arc<GraphCore> {
        self.0.as_ref().expect("an OriginRef holds its graph until dropped")
    }
}

impl Clone for OriginRef {
    fn clone(&self) -> OriginRef {
        OriginRef::new(self.graph())
    }
}

impl Drop for OriginRef {
    fn drop(&mut self) {
        let graph = self.0.take();
        if let Some(graph) = &graph {
            let _counts = origin_counts();
            graph.name_refs.fetch_sub(1, Ordering::AcqRel);
        }
        // Dropped after the count and outside the lock: dropping the last reference releases
        // the graph, which may drop execs (their owners), which take the lock again.
        drop(graph);
    }
}

/// Which node of the origin graph (the one CUDA names the exec's nodes by) each node of the
/// graph instantiated is.
pub(in crate::graph) struct NodeAlias {
    pub(in crate::graph) origin: OriginRef,
    by_node: HashMap<usize, NodeHandle>,
}

impl NodeAlias {
    /// Pairs nodes by position in CUDA's order, as CUDA's update pairs same-shaped graphs.
    pub(super) fn new(
        origin: OriginRef, nodes: &[sys::cudaGraphNode_t], origin_nodes: &[NodeHandle],
    ) -> NodeAlias {
        let by_node =
            nodes.iter().zip(origin_nodes).map(|(&node, &handle)| (node as usize, handle)).collect();
        NodeAlias { origin, by_node }
    }

    /// The origin's node for `node` (a node of the graph instantiated, checked by the caller).
    pub(in crate::graph) fn origin_node(&self, node: sys::cudaGraphNode_t) -> Option<sys::cudaGraphNode_t> {
        self.by_node.get(&(node as usize)).map(|handle| handle.0)
    }
}
