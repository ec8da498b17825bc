//! Executable graphs: `GraphExec<HostLaunch>` and `GraphExec<DeviceLaunch>`.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::ptr;
use std::sync::Arc;

use cudart_graph_sys as sys;

use super::node::kind_of;
use super::{Graph, GraphCore, NodeRef};
use crate::error::{check, record_drop_error, CudaError, Result};
use crate::memory::{fence_keep_alive, KeepAlive, PinnedAllocation};
use crate::stream::Stream;

mod sealed {
    pub trait Sealed {}
}

/// How an exec is launched, chosen at [`Graph::instantiate`]: [`HostLaunch`] or
/// [`DeviceLaunch`].
///
/// ```
/// use cuda_graph::graph::{DeviceLaunch, HostLaunch, LaunchMode};
/// assert!(!HostLaunch::DEVICE_LAUNCH && DeviceLaunch::DEVICE_LAUNCH);
/// ```
pub trait LaunchMode: sealed::Sealed + Send + 'static {
    /// Whether the exec is instantiated with `cudaGraphInstantiateFlagDeviceLaunch`.
    const DEVICE_LAUNCH: bool;
}

/// Instantiated for launch from the host only (the default; every node kind allowed).
///
/// ```no_run
/// let graph = cuda_graph::graph::Graph::new()?;
/// let exec = graph.instantiate::<cuda_graph::graph::HostLaunch>(Default::default())?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug)]
pub enum HostLaunch {}

/// Instantiated with `cudaGraphInstantiateFlagDeviceLaunch`: kernels may launch it with
/// device-side `cudaGraphLaunch` once it is uploaded. CUDA refuses graphs with host, empty,
/// event, child graph, memory and conditional nodes. The `device-launch` crate wraps these
/// execs with the upload typestate; from this crate they can also be launched from the host
/// (which uploads them too), as a self-relaunching scheduler's first launch needs.
///
/// ```no_run
/// let graph = cuda_graph::graph::Graph::new()?;
/// let exec = graph.instantiate::<cuda_graph::graph::DeviceLaunch>(Default::default())?;
/// let handle_for_kernels = exec.as_raw();
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug)]
pub enum DeviceLaunch {}

impl sealed::Sealed for HostLaunch {}
impl sealed::Sealed for DeviceLaunch {}
impl LaunchMode for HostLaunch {
    const DEVICE_LAUNCH: bool = false;
}
impl LaunchMode for DeviceLaunch {
    const DEVICE_LAUNCH: bool = true;
}

/// How to instantiate a graph (`cudaGraphInstantiateParams`); `Default` is none of these.
///
/// ```
/// use cuda_graph::graph::{HostLaunch, InstantiateOptions};
/// let options = InstantiateOptions { auto_free_on_launch: true, ..Default::default() };
/// assert_eq!(options.flags::<HostLaunch>(), 1);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct InstantiateOptions<'s> {
    /// Upload the exec to the device on this stream as part of instantiation
    /// (`cudaGraphInstantiateFlagUpload`).
    pub upload_stream: Option<&'s Stream>,
    /// Free memory that memory alloc nodes left allocated when the exec is launched again
    /// (`cudaGraphInstantiateFlagAutoFreeOnLaunch`).
    pub auto_free_on_launch: bool,
    /// Run nodes by their kernel priority attributes (`cudaGraphInstantiateFlagUseNodePriority`).
    pub use_node_priority: bool,
}

impl InstantiateOptions<'_> {
    /// The `cudaGraphInstantiateFlags` these options and launch mode `M` mean.
    pub fn flags<M: LaunchMode>(&self) -> u64 {
        use sys::cudaGraphInstantiateFlags as F;
        let mut flags = 0;
        for (on, flag) in [
            (M::DEVICE_LAUNCH, F::cudaGraphInstantiateFlagDeviceLaunch),
            (self.upload_stream.is_some(), F::cudaGraphInstantiateFlagUpload),
            (self.auto_free_on_launch, F::cudaGraphInstantiateFlagAutoFreeOnLaunch),
            (self.use_node_priority, F::cudaGraphInstantiateFlagUseNodePriority),
        ] {
            if on {
                flags |= flag.0 as u64;
            }
        }
        flags
    }
}

/// An executable graph (`cudaGraphExec_t`), launched from the host or, for
/// [`DeviceLaunch`], from kernels.
///
/// It keeps the graph family it was instantiated from alive (its nodes name this exec's
/// nodes in the per-node setters) together with everything the nodes point to, and the
/// resources of graphs it was updated from. Execs whose graphs contain host functions wait,
/// on drop, for their last launch to finish (the functions must outlive it). `Send`, not
/// `Sync`.
///
/// ```no_run
/// use cuda_graph::graph::{Graph, HostLaunch};
/// let graph = Graph::new()?;
/// graph.add_empty(&[])?;
/// let exec = graph.instantiate::<HostLaunch>(Default::default())?;
/// let stream = cuda_graph::Stream::new()?;
/// for _ in 0..10 {
///     exec.launch(&stream)?;
/// }
/// stream.synchronize()?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct GraphExec<M: LaunchMode> {
    pub(super) raw: sys::cudaGraphExec_t,
    /// Destroys the exec when dropped, after its last fenced launch. Declared first, so that
    /// it runs before the resources below are released.
    release: ExecRelease,
    /// The family instantiated: its nodes identify this exec's nodes.
    pub(super) source: Arc<GraphCore>,
    /// Families whose parameters this exec may use (the source, and what updates brought).
    pub(super) params_from: Vec<Arc<GraphCore>>,
    /// Owners of what per-node setters pointed nodes at, by node.
    pub(super) overrides: HashMap<NodeRef, Vec<KeepAlive>>,
    /// The pinned host allocations the nodes copy to or from: each launch fences them.
    pub(super) pinned: Vec<KeepAlive>,
    _mode: PhantomData<M>,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

// SAFETY: the exec handle may be used from any thread, one at a time (`!Sync`); the graph
// family it keeps is `Send + Sync` and locked around calls on its nodes.
unsafe impl<M: LaunchMode> Send for GraphExec<M> {}

impl<M: LaunchMode> std::fmt::Debug for GraphExec<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphExec")
            .field("raw", &self.raw)
            .field("device_launch", &M::DEVICE_LAUNCH)
            .field("graph", &self.source.id())
            .finish()
    }
}

/// Owns the exec handle, and the event recorded after each launch when host functions must
/// outlive the launches (so that drop can wait for the last one).
struct ExecRelease {
    raw: sys::cudaGraphExec_t,
    fence: Option<sys::cudaEvent_t>,
}

// SAFETY: exec and event handles may be released from any thread.
unsafe impl Send for ExecRelease {}

impl Drop for ExecRelease {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        if crate::host_fn::in_host_fn() {
            // CUDA calls are not allowed inside a host function: release it elsewhere.
            let moved = ExecRelease {
                raw: std::mem::replace(&mut self.raw, ptr::null_mut()),
                fence: self.fence.take(),
            };
            crate::host_fn::defer_drop(moved);
            return;
        }
        if let Some(event) = self.fence.take() {
            // Host functions (kept by the exec) may still be called by the last launch.
            // SAFETY: the event is ours; waiting on a never-recorded event returns at once.
            record_drop_error(unsafe { sys::cudaEventSynchronize(event) }, "cudaEventSynchronize");
            // SAFETY: destroyed once.
            record_drop_error(unsafe { sys::cudaEventDestroy(event) }, "cudaEventDestroy");
        }
        // SAFETY: the exec is owned and destroyed once; CUDA frees it after launches in flight.
        record_drop_error(unsafe { sys::cudaGraphExecDestroy(self.raw) }, "cudaGraphExecDestroy");
    }
}

impl Graph {
    /// Instantiates this graph for launch mode `M` (`cudaGraphInstantiateWithParams`).
    ///
    /// CUDA allows one exec at a time of a graph with conditional nodes. When CUDA reports
    /// why instantiation failed (`result_out`, `errNode_out`), the error says so and names
    /// the node's kind.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{DeviceLaunch, Graph, HostLaunch, InstantiateOptions};
    /// let stream = cuda_graph::Stream::new()?;
    /// let graph = Graph::new()?;
    /// let host = graph.instantiate::<HostLaunch>(Default::default())?;
    /// let device = graph.instantiate::<DeviceLaunch>(InstantiateOptions {
    ///     upload_stream: Some(&stream),
    ///     ..Default::default()
    /// })?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn instantiate<M: LaunchMode>(&self, options: InstantiateOptions<'_>) -> Result<GraphExec<M>> {
        let mut params = sys::cudaGraphInstantiateParams {
            flags: options.flags::<M>(),
            uploadStream: options.upload_stream.map_or(ptr::null_mut(), Stream::as_raw),
            ..Default::default()
        };
        let (raw, host_work) = self.core().locked("Graph::instantiate", |state| {
            let mut raw = ptr::null_mut();
            // SAFETY: the graph is alive and locked; `raw` and `params` are valid; the upload
            // stream, if any, is borrowed for the call.
            let status = unsafe { sys::cudaGraphInstantiateWithParams(&mut raw, self.as_raw(), &mut params) };
            if status != sys::cudaError::cudaSuccess {
                return Err(instantiate_error(status, params.result_out, params.errNode_out));
            }
            Ok((raw, state.host_work))
        })?;
        let mut exec = GraphExec {
            raw,
            release: ExecRelease { raw, fence: None },
            source: self.core().clone(),
            params_from: vec![self.core().clone()],
            overrides: HashMap::new(),
            pinned: Vec::new(),
            _mode: PhantomData,
            _not_sync: PhantomData,
        };
        exec.need_fence(host_work)?;
        exec.refresh_pinned();
        Ok(exec)
    }
}

/// The instantiation failure, with CUDA's reason and the offending node's kind when given.
fn instantiate_error(
    status: sys::cudaError_t,
    result: sys::cudaGraphInstantiateResult,
    node: sys::cudaGraphNode_t,
) -> CudaError {
    let api = CudaError::from_code(status.0 as i32, "cudaGraphInstantiateWithParams");
    let Some(reason) = instantiate_reason(result) else { return api };
    let at = if node.is_null() {
        String::new()
    } else {
        // The node is one of the graph's (CUDA returned it); its kind is only for the message.
        match kind_of(node) {
            Ok(kind) => format!(" (at a {kind} node)"),
            Err(_) => " (at a node CUDA named)".to_string(),
        }
    };
    CudaError::invalid("cudaGraphInstantiateWithParams", format!("{api}; {reason}{at}"))
}

/// Why instantiation failed, for the results that say more than "error".
fn instantiate_reason(result: sys::cudaGraphInstantiateResult) -> Option<&'static str> {
    use sys::cudaGraphInstantiateResult as R;
    Some(match result {
        R::cudaGraphInstantiateInvalidStructure => "the graph's structure is invalid (a cycle, say)",
        R::cudaGraphInstantiateNodeOperationNotSupported => {
            "a node's operation is not supported for device launch (host, empty, event, child graph, memory \
             and conditional nodes are not)"
        }
        R::cudaGraphInstantiateMultipleDevicesNotSupported => {
            "device launch does not support graphs whose nodes span several devices or contexts"
        }
        R::cudaGraphInstantiateConditionalHandleUnused => {
            "a conditional handle is not used by any conditional node"
        }
        _ => return None,
    })
}

impl<M: LaunchMode> GraphExec<M> {
    /// The raw exec, for calls this crate does not wrap; for [`DeviceLaunch`] execs, the
    /// `cudaGraphExec_t` that kernels launch (the `device-launch` crate hands it out only
    /// once uploaded). The exec still owns it.
    ///
    /// ```no_run
    /// let exec = cuda_graph::graph::Graph::new()?.instantiate::<cuda_graph::graph::DeviceLaunch>(Default::default())?;
    /// assert!(!exec.as_raw().is_null());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn as_raw(&self) -> sys::cudaGraphExec_t {
        self.raw
    }

    /// Uploads the exec to the device on `stream` (`cudaGraphUpload`), so that the first
    /// launch does not pay for it. Required before a device launch.
    ///
    /// ```no_run
    /// let stream = cuda_graph::Stream::new()?;
    /// let exec = cuda_graph::graph::Graph::new()?.instantiate::<cuda_graph::graph::HostLaunch>(Default::default())?;
    /// exec.upload(&stream)?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn upload(&self, stream: &Stream) -> Result<()> {
        // SAFETY: exec and stream are alive.
        check(unsafe { sys::cudaGraphUpload(self.raw, stream.as_raw()) }, "cudaGraphUpload")
    }

    /// Launches the exec on `stream` from the host (`cudaGraphLaunch`). Launches of one exec
    /// run one after another, in launch order. Allowed for [`DeviceLaunch`] execs too (CUDA
    /// allows it, and it uploads them).
    ///
    /// ```no_run
    /// let stream = cuda_graph::Stream::new()?;
    /// let exec = cuda_graph::graph::Graph::new()?.instantiate::<cuda_graph::graph::HostLaunch>(Default::default())?;
    /// exec.launch(&stream)?;
    /// stream.synchronize()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        // SAFETY: exec and stream are alive; everything the nodes use is kept by `self`.
        check(unsafe { sys::cudaGraphLaunch(self.raw, stream.as_raw()) }, "cudaGraphLaunch")?;
        for owner in &self.pinned {
            // Host access to the pinned buffers waits for this launch.
            fence_keep_alive(owner, stream)?;
        }
        if let Some(fence) = self.release.fence {
            // SAFETY: event and stream are alive; the event then completes after this launch.
            check(unsafe { sys::cudaEventRecord(fence, stream.as_raw()) }, "cudaEventRecord")?;
        }
        Ok(())
    }

    /// Lists the pinned allocations the exec's nodes may use (after instantiate, update, set).
    pub(super) fn refresh_pinned(&mut self) {
        let mut pinned: Vec<KeepAlive> = Vec::new();
        let mut add = |owner: &KeepAlive| {
            if owner.downcast_ref::<PinnedAllocation>().is_some()
                && !pinned.iter().any(|p| Arc::ptr_eq(p, owner))
            {
                pinned.push(owner.clone());
            }
        };
        for core in &self.params_from {
            core.state().keep_alive.iter().for_each(&mut add);
        }
        self.overrides.values().flatten().for_each(&mut add);
        self.pinned = pinned;
    }

    /// Starts recording launch fences when the exec's graphs have host functions.
    pub(super) fn need_fence(&mut self, host_work: bool) -> Result<()> {
        if host_work && self.release.fence.is_none() {
            let mut event = ptr::null_mut();
            // SAFETY: `event` is a valid out-pointer; timing is not needed.
            check(
                unsafe { sys::cudaEventCreateWithFlags(&mut event, sys::cudaEventDisableTiming) },
                "cudaEventCreateWithFlags",
            )?;
            self.release.fence = Some(event);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_and_mode_make_the_flags() {
        assert_eq!(InstantiateOptions::default().flags::<HostLaunch>(), 0);
        assert_eq!(InstantiateOptions::default().flags::<DeviceLaunch>(), 4);
        let options =
            InstantiateOptions { auto_free_on_launch: true, use_node_priority: true, ..Default::default() };
        assert_eq!(options.flags::<DeviceLaunch>(), 1 | 4 | 8);
    }

    #[test]
    fn informative_results_are_explained_and_others_are_not() {
        use sys::cudaGraphInstantiateResult as R;
        assert_eq!(instantiate_reason(R::cudaGraphInstantiateSuccess), None);
        assert_eq!(instantiate_reason(R::cudaGraphInstantiateError), None);
        assert!(instantiate_reason(R::cudaGraphInstantiateNodeOperationNotSupported)
            .unwrap()
            .contains("device launch"));
        let err = instantiate_error(
            sys::cudaError::cudaErrorInvalidValue,
            R::cudaGraphInstantiateConditionalHandleUnused,
            ptr::null_mut(),
        );
        let text = err.to_string();
        assert!(text.contains("cudaErrorInvalidValue (1)") && text.contains("conditional handle"), "{text}");
    }
}
