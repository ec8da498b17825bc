//! Raw exec handles in and out: adopting an exec made elsewhere
//! ([`GraphExec::<HostLaunch>::from_raw`](GraphExec::from_raw)) and handing one over
//! ([`GraphExec::into_raw`]). Borrowing one is [`GraphExec::as_raw`].

use std::mem::ManuallyDrop;

use crate::runtime as sys;

use super::{GraphExec, HostLaunch, LaunchMode};
use crate::error::refusal::ExecRefusal;
use crate::error::{check, CudaError, Refusal, Result};
use crate::graph::Graph;

impl GraphExec<HostLaunch> {
    /// Takes ownership of an exec instantiated by calls this crate does not wrap (another
    /// library's capture, say), to launch it on this crate's streams and update it. It is
    /// destroyed on drop, after its last launch (each launch is fenced, since nothing tells
    /// what its nodes call). It has no nodes this crate knows, so per-node setters refuse
    /// every node; [`update`](GraphExec::update) from a graph of the same topology works.
    /// An exec instantiated for device launch is refused (`cudaGraphExecGetFlags`): device
    /// launch needs the upload typestate of `GraphExec<DeviceLaunch>`.
    ///
    /// # Safety
    /// `raw` must be a live exec of the current device, which nothing else destroys
    /// (ownership passes to the returned value), and everything its nodes use (memory, host
    /// functions, events) must stay valid for as long as it may be launched: until the
    /// returned exec, and any launch queued through it, are gone.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{Graph, GraphExec, HostLaunch};
    /// let graph = Graph::new()?;
    /// graph.add_empty(&[])?;
    /// let raw = graph.instantiate_default()?.into_raw();
    /// // SAFETY: a live host-launch exec owned by nobody else; its one node uses nothing.
    /// let exec = unsafe { GraphExec::<HostLaunch>::from_raw(raw) }?;
    /// let stream = cuda_graph::Stream::new()?;
    /// exec.launch(&stream)?;
    /// stream.synchronize()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn from_raw(raw: sys::cudaGraphExec_t) -> Result<GraphExec<HostLaunch>> {
        const CALL: &str = "GraphExec::from_raw";
        if raw.is_null() {
            return Err(CudaError::refused(CALL, Refusal::NullHandle { what: "exec" }));
        }
        let mut flags = 0u64;
        // SAFETY: the caller promises a live exec; `flags` is a writable u64.
        check(unsafe { sys::cudaGraphExecGetFlags(raw, &mut flags) }, "cudaGraphExecGetFlags")?;
        let device_launch = sys::cudaGraphInstantiateFlags::cudaGraphInstantiateFlagDeviceLaunch.0 as u64;
        if flags & device_launch != 0 {
            return Err(CudaError::refused(CALL, ExecRefusal::DeviceLaunchNotAdoptable));
        }
        // An empty graph stands for the unknown source: no node of it names a node of the
        // exec, so no setter can reach one.
        let source = Graph::new()?;
        let mut exec = source.wrap_exec::<HostLaunch>(raw, None, None);
        exec.release.ensure_fence(true)?;
        Ok(exec)
    }
}

impl<M: LaunchMode> GraphExec<M> {
    /// Hands the exec over: returns the raw handle without destroying (or, for
    /// [`DeviceLaunch`](crate::graph::DeviceLaunch), parking) it, for another library to own
    /// (destroy it with `cudaGraphExecDestroy`). Launches already queued run on.
    ///
    /// Everything the exec kept alive (the graphs it came from, the buffers, host functions
    /// and events its nodes use) is leaked, never released, since the new owner may launch
    /// it at any time. A launch through the raw handle bypasses what [`launch`](GraphExec::launch)
    /// does: it neither locks the pinned host buffers its nodes copy to or from (do not use
    /// their host slices while it may run) nor fences.
    ///
    /// ```no_run
    /// use cuda_graph::{graph::Graph, sys};
    /// let graph = Graph::new()?;
    /// let raw = graph.instantiate_default()?.into_raw();
    /// // SAFETY: `raw` is a live exec owned by nobody else now.
    /// assert_eq!(unsafe { sys::cudaGraphExecDestroy(raw) }, sys::cudaError::cudaSuccess);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn into_raw(self) -> sys::cudaGraphExec_t {
        // Leaks every field: the release (no destroy, no parking), the families and owners.
        ManuallyDrop::new(self).raw
    }
}
