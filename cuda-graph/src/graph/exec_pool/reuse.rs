//! Taking a parked exec back for a graph of its shape.

use std::sync::Arc;

use crate::runtime as sys;

use super::NodeAlias;
use super::{Parked, Recyclable, Shape};
use crate::error::Result;
use crate::graph::{Graph, GraphExec, InstantiateOptions, LaunchMode};

impl Graph {
    /// Makes the parked exec run this graph (of the same shape): `cudaGraphExecUpdate`, every
    /// node enabled, uploaded if asked. `None` when it was not reused: the exec goes back to
    /// the pool (CUDA refused the update, or the origin graph was busy) or, after an unexpected
    /// error, is left alone; the caller then instantiates anew.
    pub(in crate::graph) fn reuse<M: LaunchMode>(
        &self, parked: Parked, shape: &Shape, options: &InstantiateOptions<'_>,
    ) -> Result<Option<GraphExec<M>>> {
        const CALL: &str = "Graph::instantiate";
        let state = match self.core().acquire(CALL) {
            Ok(state) => state,
            Err(err) => {
                super::put_back(parked, false);
                return Err(err);
            }
        };
        // Enabling nodes names them by the origin's nodes: that family must be ours for the
        // calls. Never wait for it (a capture into it may be running, and waiting while
        // holding this graph's lock could deadlock): if busy, this exec is not reused.
        let toggled = parked.recyclable.nodes_toggled;
        let origin = parked.recyclable.origin.clone();
        let same_family = Arc::ptr_eq(origin.graph(), self.core());
        let origin_state = if toggled && !same_family {
            match origin.graph().try_acquire_idle() {
                Some(origin_state) => Some(origin_state),
                None => {
                    drop(state);
                    super::put_back(parked, false);
                    return Ok(None);
                }
            }
        } else {
            None
        };
        let mut info = sys::cudaGraphExecUpdateResultInfo::default();
        // SAFETY: the parked exec is ours alone, its last launch finished, and nothing launches
        // it; this graph is alive and locked; `info` is writable.
        let mut status = unsafe { sys::cudaGraphExecUpdate(parked.raw, self.as_raw(), &mut info) };
        if status == sys::cudaError::cudaSuccess && toggled {
            for node in parked.recyclable.origin_nodes.iter() {
                // SAFETY: a node of the origin graph (kept by the parked exec, its family
                // locked above), which names one of the exec's nodes.
                status = unsafe { sys::cudaGraphNodeSetEnabled(parked.raw, node.0, 1) };
                if status != sys::cudaError::cudaSuccess {
                    break;
                }
            }
        }
        let need_fence = state.execs_need_fence(self.device());
        drop(origin_state);
        drop(state);
        if status != sys::cudaError::cudaSuccess {
            // The refusal must not be reported as the instantiation's that follows.
            crate::error::forget_last_error();
            if status == sys::cudaError::cudaErrorGraphExecUpdateFailure {
                super::put_back(parked, true);
            } else {
                // The exec may be half updated, with nodes disabled: leave it (dropping
                // `Parked` does not destroy it) and never use it again.
                drop(parked);
            }
            return Ok(None);
        }
        let Parked { raw, recyclable } = parked;
        let alias = (!same_family)
            .then(|| NodeAlias::new(recyclable.origin.clone(), &shape.nodes, &recyclable.origin_nodes));
        let recyclable = Recyclable { nodes_toggled: false, ..recyclable };
        let mut exec = self.wrap_exec::<M>(raw, Some(recyclable), alias);
        exec.recycled = true;
        super::count_reuse();
        // From here on, a failure drops `exec`, which parks it again.
        exec.ensure_fence(need_fence || M::DEVICE_LAUNCH)?;
        exec.refresh_pinned();
        if let Some(stream) = options.upload_stream {
            exec.upload(stream)?;
        }
        Ok(Some(exec))
    }
}
