//! Handing a graph's raw handle over ([`Graph::into_raw`]); adopting one is
//! [`Graph::from_raw`].

use std::mem::ManuallyDrop;
use std::sync::Arc;

use crate::runtime as sys;

use super::Graph;

impl Graph {
    /// Hands the graph over: returns the raw handle without destroying it, for another
    /// library to own (destroy it with `cudaGraphDestroy`). Refused, giving the graph back,
    /// while anything else of this crate shares the graph: a conditional body's
    /// [`GraphBuilder`](super::GraphBuilder), an exec instantiated from it (or parked for
    /// reuse), a capture into it.
    ///
    /// What the nodes point to (the buffers this crate kept alive for them) is leaked, never
    /// freed: the graph, and execs the new owner instantiates from it, may use it at any
    /// time from now on.
    ///
    /// ```no_run
    /// use cuda_graph::{graph::Graph, sys};
    /// let graph = Graph::new()?;
    /// graph.add_empty(&[])?;
    /// let raw = graph.into_raw().expect("nothing else shares the graph");
    /// // SAFETY: `raw` is a live graph owned by nobody else now.
    /// assert_eq!(unsafe { sys::cudaGraphDestroy(raw) }, sys::cudaError::cudaSuccess);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn into_raw(self) -> std::result::Result<sys::cudaGraph_t, Graph> {
        // Only this value holds the family: no other owner (body, exec, capture, pool) can
        // appear after this check, since nothing else can clone it.
        if Arc::strong_count(self.core()) != 1 {
            return Err(self);
        }
        let raw = self.as_raw();
        // The family (its keep-alive list included) is leaked, so its drop never destroys
        // the graph nor frees what its nodes use.
        let _leaked = ManuallyDrop::new(self);
        Ok(raw)
    }
}
