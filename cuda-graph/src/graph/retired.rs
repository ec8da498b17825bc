//! What an exec's whole-graph updates and per-node setters replaced, kept until the launches
//! that may still use it have completed.
//!
//! CUDA keeps launches already queued on the parameters they were launched with: an update
//! changes later launches only. So a replaced graph family (its host closures, buffers,
//! events) and what a setter pointed a node at must outlive every earlier launch. An exec
//! that keeps anything needing it records a fence after each launch
//! ([`CoreState::execs_need_fence`](super::CoreState::execs_need_fence)); launches of one exec
//! run one after another, so the fence's last record covers all earlier launches. The list
//! is released when that fence has completed: checked (`cudaEventQuery`, no waiting) at each
//! later update and setter, waited for when the list grows past [`RETIRED_BEFORE_WAIT`], and
//! waited for when the exec is dropped. Not at launches: releasing can free memory, and a
//! `cudaMalloc` buffer's free waits for the device, which a launch must not.
//!
//! An exec without a fence never held anything that needs one (the fence is created before
//! an update or setter brings such a resource in, so before any launch uses it), so what it
//! replaces is released at once: `cudaMalloc` memory waits for the device when freed, pinned
//! memory waits for its own fences, and memory from a non-blocking stream waits for the
//! device.

use std::sync::Arc;

use super::{exec_pool, GraphCore};
use crate::memory::KeepAlive;

/// How many replaced sets an exec keeps while its launches run; the update or setter that
/// would keep more waits for the last launch instead, so that an exec updated in a loop
/// while always busy does not keep every graph it was ever updated from.
pub(super) const RETIRED_BEFORE_WAIT: usize = 16;

/// One thing an update or setter replaced.
enum Retired {
    /// A graph family an update replaced: its nodes' resources.
    Params(Arc<GraphCore>),
    /// What a per-node setter had pointed a node at.
    Overrides(Vec<KeepAlive>),
}

/// The exec's replaced resources, oldest first. Dropping a non-empty list leaks it (no
/// launch is known to be done with it): the exec releases it explicitly.
#[derive(Default)]
pub(super) struct RetiredList(Vec<Retired>);

impl RetiredList {
    /// Keeps a family an update replaced (one of the exec's references to it).
    pub(super) fn push_graph(&mut self, graph: Arc<GraphCore>) {
        self.0.push(Retired::Params(graph));
    }

    /// Keeps what a setter had pointed a node at.
    pub(super) fn push_overrides(&mut self, keep: Vec<KeepAlive>) {
        if !keep.is_empty() {
            self.0.push(Retired::Overrides(keep));
        }
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Releases everything. Call only once no launch of the exec may use it: the fence
    /// completed, or the exec never needed one.
    pub(super) fn release(&mut self) {
        // Drained, not taken: the list keeps its capacity, so an exec updated in a loop does
        // not allocate for its next replaced graph.
        for item in self.0.drain(..) {
            match item {
                Retired::Params(graph) => {
                    // If only execs naming their nodes by it are left, what its nodes point
                    // to goes too (see `exec_pool`).
                    exec_pool::owner_leaving(&graph, 1);
                    drop(graph);
                }
                Retired::Overrides(keep) => drop(keep),
            }
        }
    }

    /// Moves the list out, leaving this one empty (for an exec dropped elsewhere).
    pub(super) fn take(&mut self) -> RetiredList {
        RetiredList(std::mem::take(&mut self.0))
    }
}

impl Drop for RetiredList {
    fn drop(&mut self) {
        // Not released explicitly: a launch may still use it. A leak is safe.
        std::mem::forget(std::mem::take(&mut self.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_bound_is_the_one_used() {
        // GraphExec::update's docs name it.
        assert_eq!(RETIRED_BEFORE_WAIT, 16);
    }

    #[test]
    fn released_lists_drop_their_items_and_unreleased_ones_leak_them() {
        let owner: KeepAlive = Arc::new(5u32);
        let mut list = RetiredList::default();
        list.push_overrides(Vec::new());
        assert!(list.is_empty(), "an empty set is not kept");
        list.push_overrides(vec![owner.clone()]);
        assert_eq!((list.len(), Arc::strong_count(&owner)), (1, 2));
        list.release();
        assert_eq!((list.len(), Arc::strong_count(&owner)), (0, 1));

        let mut leaked = RetiredList::default();
        leaked.push_overrides(vec![owner.clone()]);
        let moved = leaked.take();
        assert!(leaked.is_empty());
        drop(moved);
        assert_eq!(Arc::strong_count(&owner), 2, "dropping an unreleased list leaks it");
    }
}
