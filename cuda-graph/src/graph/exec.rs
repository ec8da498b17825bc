//! Executable graphs: `GraphExec<HostLaunch>` and `GraphExec<DeviceLaunch>`.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::ptr;
use std::sync::Arc;

use cudart_graph_sys as sys;

use super::node::kind_of;
use super::recycle::{self, NodeHandle, OriginRef, Parked, Recyclable, Shape};
use super::retired::{RetiredList, RETIRED_BEFORE_WAIT};
use super::{CoreState, Graph, GraphCore, NodeRef};
use crate::error::{check, CudaError, Result};
use crate::memory::{as_pinned, KeepAlive, LaunchLock, PinnedAllocation};
use crate::release::record_drop_error;
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
/// event, child graph, memory and conditional nodes; this crate refuses graphs that copy to
/// or from a [`PinnedBuffer`](crate::PinnedBuffer), since nothing could fence device-side
/// launches against host slices. The `device-launch` crate wraps these execs with the upload
/// typestate; from this crate they can also be launched from the host
/// (which uploads them too), as a self-relaunching scheduler's first launch needs.
///
/// Dropping such an exec waits for its last host launch (each is fenced), and then keeps it
/// for reuse by [`Graph::instantiate`] instead of destroying it. So a raw handle
/// ([`GraphExec::as_raw`]) of a dropped exec may later name another graph's exec; a reused
/// exec is uploaded only if [`InstantiateOptions::upload_stream`] says so (upload it before a
/// kernel launches it, as for a new one); and nodes disabled through raw calls stay disabled.
///
/// ```no_run
/// let graph = cuda_graph::graph::Graph::new()?;
/// let exec = graph.instantiate::<cuda_graph::graph::DeviceLaunch>(Default::default())?;
/// // SAFETY: no kernel receives the handle before the exec is uploaded, and the exec is
/// // neither updated nor dropped while one may launch it (see `GraphExec::as_raw`).
/// let handle_for_kernels = unsafe { exec.as_raw() };
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
/// resources of graphs it was updated from. Execs whose nodes call host functions, record or
/// wait for events, or use stream-ordered memory from a blocking stream
/// ([`DeviceBuffer::alloc_async`](crate::DeviceBuffer::alloc_async)) record an event after
/// each launch, and wait, on drop, for their last launch to finish: the functions and events
/// must outlive it, and that memory's free (queued on the legacy default stream) would not
/// be ordered after a launch on a non-blocking stream. So do [`DeviceLaunch`] execs (see
/// there: they are then kept for reuse). Other execs record nothing per launch and do not
/// wait.
///
/// What [`update`](Self::update) and the per-node setters replace is kept until the
/// launches queued before them, which still use it, have completed: released at a later
/// update or setter that finds the last launch done, or when the exec is dropped.
/// `Send`, not `Sync`.
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
    /// For an exec reused from the pool: the graph whose nodes CUDA knows this exec's nodes
    /// by, and which of them each of `source`'s nodes is.
    pub(super) alias: Option<NodeAlias>,
    /// Whether the exec was reused from the pool rather than newly instantiated.
    recycled: bool,
    /// Families whose parameters this exec may use (the source, and what updates brought).
    pub(super) params_from: Vec<Arc<GraphCore>>,
    /// Owners of what per-node setters pointed nodes at, by node.
    pub(super) overrides: HashMap<NodeRef, Vec<KeepAlive>>,
    /// What updates and setters replaced, until the launches that may use it completed.
    pub(super) retired: RetiredList,
    /// The pinned host allocations the nodes copy to or from, sorted by address: each launch
    /// locks them (refusing one the host borrows) and fences them.
    pub(super) pinned: Vec<Arc<PinnedAllocation>>,
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

/// Owns the exec handle, and the event recorded after each launch when what the exec keeps
/// must outlive the launches (so that drop can wait for the last one; see
/// [`CoreState::execs_need_fence`](super::CoreState::execs_need_fence)).
struct ExecRelease {
    raw: sys::cudaGraphExec_t,
    fence: Option<sys::cudaEvent_t>,
    /// Set when a launch could be neither fenced nor waited for: drop then leaks what the
    /// exec keeps instead of releasing it under that launch.
    unfenced_launch: std::cell::Cell<bool>,
    /// For device-launch execs: drop parks the exec for reuse instead of destroying it.
    recycle: Option<Recyclable>,
}

/// Which node of the origin graph (the one CUDA names the exec's nodes by) each node of the
/// graph instantiated is.
pub(super) struct NodeAlias {
    pub(super) origin: OriginRef,
    by_node: HashMap<usize, NodeHandle>,
}

impl NodeAlias {
    /// Pairs nodes by position in CUDA's order, as CUDA's update pairs same-shaped graphs.
    fn new(origin: OriginRef, nodes: &[sys::cudaGraphNode_t], origin_nodes: &[NodeHandle]) -> NodeAlias {
        let by_node =
            nodes.iter().zip(origin_nodes).map(|(&node, &handle)| (node as usize, handle)).collect();
        NodeAlias { origin, by_node }
    }

    /// The origin's node for `node` (a node of the graph instantiated, checked by the caller).
    pub(super) fn origin_node(&self, node: sys::cudaGraphNode_t) -> Option<sys::cudaGraphNode_t> {
        self.by_node.get(&(node as usize)).map(|handle| handle.0)
    }
}

// SAFETY: exec and event handles may be released from any thread.
unsafe impl Send for ExecRelease {}

impl Drop for ExecRelease {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        if crate::release::in_host_fn() {
            // CUDA calls are not allowed inside a host function: release it elsewhere.
            let moved = ExecRelease {
                raw: std::mem::replace(&mut self.raw, ptr::null_mut()),
                fence: self.fence.take(),
                unfenced_launch: self.unfenced_launch.clone(),
                recycle: self.recycle.take(),
            };
            crate::release::defer_drop(moved);
            return;
        }
        if let Some(event) = self.fence.take() {
            // `GraphExec::drop` waited for the last launch before this runs.
            // SAFETY: the event is ours and destroyed once.
            record_drop_error(unsafe { sys::cudaEventDestroy(event) }, "cudaEventDestroy");
        }
        if let Some(recyclable) = self.recycle.take() {
            // `GraphExec::drop` waited for its last host launch (device-launch execs are
            // always fenced), and nothing launches it from the host after this; kernels must
            // not either (the `device-launch` crate waits for them before dropping).
            recycle::park(self.raw, recyclable);
            return;
        }
        // SAFETY: the exec is owned and destroyed once; CUDA frees it after launches in flight.
        record_drop_error(unsafe { sys::cudaGraphExecDestroy(self.raw) }, "cudaGraphExecDestroy");
    }
}

impl ExecRelease {
    /// Creates the launch fence if `needed` and not there yet. Call it before the exec's nodes
    /// may use what needs it, so that no launch goes unfenced.
    fn ensure_fence(&mut self, needed: bool) -> Result<()> {
        if needed && self.fence.is_none() {
            let mut event = ptr::null_mut();
            check(
                // SAFETY: `event` is a valid out-pointer; timing is not needed.
                unsafe { sys::cudaEventCreateWithFlags(&mut event, sys::cudaEventDisableTiming) },
                "cudaEventCreateWithFlags",
            )?;
            self.fence = Some(event);
        }
        Ok(())
    }

    /// Whether every launch so far has completed, as far as what the exec replaced is
    /// concerned: true for an exec that never fenced (nothing it held needed a fence; see
    /// `retired`), else whether the fence completed: checked with `cudaEventQuery`, or
    /// waited for with `cudaEventSynchronize` when `wait`. False after a launch that could
    /// be neither fenced nor waited for, and when CUDA reports an error (then nothing is
    /// released, which is safe).
    fn last_launch_finished(&self, wait: bool) -> bool {
        let Some(event) = self.fence else { return true };
        if self.unfenced_launch.get() {
            return false;
        }
        let status = if wait {
            // SAFETY: the event is ours and alive; launches of one exec run in launch order,
            // so its last record covers all launches since it was created.
            unsafe { sys::cudaEventSynchronize(event) }
        } else {
            // SAFETY: as above; only queries.
            unsafe { sys::cudaEventQuery(event) }
        };
        status == sys::cudaError::cudaSuccess
    }

    /// Waits for the last launch, if launches are fenced, and destroys the fence. Returns
    /// false when waiting failed: the launch may then still use what the exec keeps. Not for
    /// host functions (it calls CUDA).
    fn wait_for_last_launch(&mut self) -> bool {
        let Some(event) = self.fence.take() else { return true };
        if self.unfenced_launch.get() {
            // SAFETY: the event is ours and destroyed once (taken out of `fence`).
            record_drop_error(unsafe { sys::cudaEventDestroy(event) }, "cudaEventDestroy");
            return false;
        }
        // SAFETY: the event is ours and alive; waiting on a never-recorded event returns at
        // once. Launches of one exec run in launch order, so the last one's fence covers all.
        let status = unsafe { sys::cudaEventSynchronize(event) };
        // SAFETY: destroyed once (taken out of `fence` above); a pending record is fine.
        record_drop_error(unsafe { sys::cudaEventDestroy(event) }, "cudaEventDestroy");
        if status == sys::cudaError::cudaSuccess {
            return true;
        }
        record_drop_error(status, "cudaEventSynchronize");
        false
    }
}

impl<M: LaunchMode> Drop for GraphExec<M> {
    fn drop(&mut self) {
        let waits_or_parks = self.release.fence.is_some() || self.release.recycle.is_some();
        if waits_or_parks && crate::release::in_host_fn() {
            // CUDA calls are not allowed inside a host function: wait, then release (or park)
            // it all, on another thread, so that the graphs it keeps are released after it is
            // parked, never before. `self` is left with nothing to release.
            let moved = GraphExec::<M> {
                raw: self.raw,
                release: ExecRelease {
                    raw: std::mem::replace(&mut self.release.raw, ptr::null_mut()),
                    fence: self.release.fence.take(),
                    unfenced_launch: self.release.unfenced_launch.clone(),
                    recycle: self.release.recycle.take(),
                },
                source: self.source.clone(),
                alias: self.alias.take(),
                recycled: self.recycled,
                params_from: std::mem::take(&mut self.params_from),
                overrides: std::mem::take(&mut self.overrides),
                retired: self.retired.take(),
                pinned: std::mem::take(&mut self.pinned),
                _mode: PhantomData,
                _not_sync: PhantomData,
            };
            crate::release::defer_drop(moved);
            return;
        }
        if self.release.wait_for_last_launch() {
            self.retired.release();
            self.release_graphs_only_named();
            return; // `release` destroys or parks the exec, then the fields release what it kept
        }
        // The last launch may still use host functions or memory the exec keeps: leak them
        // rather than free them under that launch (`retired` leaks itself when dropped). A
        // device-launch exec is leaked too (neither reused nor destroyed).
        if M::DEVICE_LAUNCH {
            self.release.raw = ptr::null_mut();
        }
        self.release.recycle = None;
        std::mem::forget(self.source.clone());
        std::mem::forget(std::mem::take(&mut self.params_from));
        std::mem::forget(std::mem::take(&mut self.overrides));
        std::mem::forget(std::mem::take(&mut self.pinned));
    }
}

impl Graph {
    /// Instantiates this graph for launch mode `M` (`cudaGraphInstantiateWithParams`).
    ///
    /// CUDA allows one exec at a time of a graph with conditional nodes. When CUDA reports
    /// why instantiation failed (`result_out`, `errNode_out`), the error says so and names
    /// the node's kind.
    ///
    /// For [`DeviceLaunch`], a dropped exec of a graph with the same shape (node kinds and
    /// kernels in node order, edges), device and options is reused when there is one: it is
    /// updated to this graph (`cudaGraphExecUpdate`), every node enabled, and it behaves as a
    /// new exec of this graph ([`GraphExec::is_recycled`] tells). Dropped device-launch execs
    /// are kept for this instead of destroyed, because destroying them breaks later device
    /// launches on CUDA 13.0 (see [`set_exec_pool_capacity`](super::set_exec_pool_capacity)).
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
        let flags = options.flags::<M>();
        // Device-launch execs are reused rather than destroyed (see `recycle`): find one of
        // this graph's shape first.
        let shape = if M::DEVICE_LAUNCH {
            let upload = sys::cudaGraphInstantiateFlags::cudaGraphInstantiateFlagUpload.0 as u64;
            self.core().locked("Graph::instantiate", |state| {
                refuse_pinned_for_device_launch::<M>(state, "Graph::instantiate")?;
                Ok(recycle::shape_of(self.as_raw(), flags & !upload))
            })?
        } else {
            None
        };
        if let Some(shape) = &shape {
            if let Some(parked) = recycle::take(&shape.key) {
                if let Some(exec) = self.reuse(parked, shape, &options)? {
                    return Ok(exec);
                }
            }
        }
        let mut params = sys::cudaGraphInstantiateParams {
            flags,
            uploadStream: options.upload_stream.map_or(ptr::null_mut(), Stream::as_raw),
            ..Default::default()
        };
        let (raw, need_fence, shape) = self.core().locked("Graph::instantiate", |state| {
            refuse_pinned_for_device_launch::<M>(state, "Graph::instantiate")?;
            let mut raw = ptr::null_mut();
            // SAFETY: the graph is alive and locked; `raw` and `params` are valid; the upload
            // stream, if any, is borrowed for the call.
            let status = unsafe { sys::cudaGraphInstantiateWithParams(&mut raw, self.as_raw(), &mut params) };
            if status != sys::cudaError::cudaSuccess {
                return Err(instantiate_error(status, params.result_out, params.errNode_out));
            }
            // Read again under this lock: the shape the exec has, should nodes have been
            // added (by a capture on another thread) since the first read.
            let shape = shape.and_then(|first| recycle::shape_of(self.as_raw(), first.key_flags()));
            Ok((raw, state.execs_need_fence(), shape))
        })?;
        let recycle = shape.map(|shape| Recyclable {
            key: shape.key,
            origin: OriginRef::new(self.core()),
            origin_nodes: shape.nodes.iter().map(|&node| NodeHandle(node)).collect(),
            nodes_toggled: false,
        });
        let mut exec = self.wrap_exec(raw, recycle, None);
        // No launch happened yet: if this fails, the exec is dropped unlaunched. Device-launch
        // execs always fence their host launches: drop waits for the last one before the exec
        // is parked for reuse.
        exec.release.ensure_fence(need_fence || M::DEVICE_LAUNCH)?;
        exec.refresh_pinned();
        Ok(exec)
    }

    fn wrap_exec<M: LaunchMode>(
        &self,
        raw: sys::cudaGraphExec_t,
        recycle: Option<Recyclable>,
        alias: Option<NodeAlias>,
    ) -> GraphExec<M> {
        GraphExec {
            raw,
            release: ExecRelease { raw, fence: None, unfenced_launch: Default::default(), recycle },
            source: self.core().clone(),
            alias,
            recycled: false,
            params_from: vec![self.core().clone()],
            overrides: HashMap::new(),
            retired: RetiredList::default(),
            pinned: Vec::new(),
            _mode: PhantomData,
            _not_sync: PhantomData,
        }
    }

    /// Makes the parked exec run this graph (of the same shape): `cudaGraphExecUpdate`, every
    /// node enabled, uploaded if asked. `None` when it was not reused: the exec goes back to
    /// the pool (CUDA refused the update, or the origin graph was busy) or, after an unexpected
    /// error, is left alone; the caller then instantiates anew.
    fn reuse<M: LaunchMode>(
        &self,
        parked: Parked,
        shape: &Shape,
        options: &InstantiateOptions<'_>,
    ) -> Result<Option<GraphExec<M>>> {
        const CALL: &str = "Graph::instantiate";
        let state = match self.core().acquire(CALL) {
            Ok(state) => state,
            Err(err) => {
                recycle::put_back(parked, false);
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
                    recycle::put_back(parked, false);
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
        let need_fence = state.execs_need_fence();
        drop(origin_state);
        drop(state);
        if status != sys::cudaError::cudaSuccess {
            // SAFETY: plain call; clears this thread's last error (the refusal), which the
            // instantiation that follows must not report as its own.
            let _ = unsafe { sys::cudaGetLastError() };
            if status == sys::cudaError::cudaErrorGraphExecUpdateFailure {
                recycle::put_back(parked, true);
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
        recycle::count_reuse();
        // From here on, a failure drops `exec`, which parks it again.
        exec.release.ensure_fence(need_fence || M::DEVICE_LAUNCH)?;
        exec.refresh_pinned();
        if let Some(stream) = options.upload_stream {
            exec.upload(stream)?;
        }
        Ok(Some(exec))
    }
}

/// Refuses, for [`DeviceLaunch`], graphs whose nodes use pinned host memory: launches from
/// the device pass no [`GraphExec::launch`], so nothing could keep host slices away from them.
pub(super) fn refuse_pinned_for_device_launch<M: LaunchMode>(
    state: &CoreState,
    call: &'static str,
) -> Result<()> {
    if M::DEVICE_LAUNCH && state.keep_alive.iter().any(|owner| owner.is::<PinnedAllocation>()) {
        return Err(CudaError::invalid(
            call,
            "the graph copies to or from a PinnedBuffer, which launches from the device could race host \
             slices of: instantiate it for HostLaunch",
        ));
    }
    Ok(())
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
    /// Whether this exec was a dropped device-launch exec, reused by [`Graph::instantiate`]
    /// for a graph of the same shape, rather than newly instantiated.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{DeviceLaunch, Graph};
    /// let build = || -> cuda_graph::Result<Graph> {
    ///     let data = cuda_graph::DeviceBuffer::<u32>::zeroed(16)?;
    ///     let graph = Graph::new()?;
    ///     graph.add_memset(&data.ptr(), 1u32, 16, &[])?;
    ///     Ok(graph)
    /// };
    /// drop(build()?.instantiate::<DeviceLaunch>(Default::default())?);
    /// let again = build()?.instantiate::<DeviceLaunch>(Default::default())?;
    /// assert!(again.is_recycled());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn is_recycled(&self) -> bool {
        self.recycled
    }

    /// The raw exec, for calls this crate does not wrap; for [`DeviceLaunch`] execs, the
    /// `cudaGraphExec_t` that kernels launch (the `device-launch` crate hands it out safely,
    /// once uploaded, as a kernel argument that keeps the exec alive and blocks updates). The
    /// exec still owns it, and knows nothing of what is done with the raw value: updating,
    /// dropping (which may park the exec for reuse by another graph) or moving it out of a
    /// wrapper does not wait for kernels that were given the value.
    ///
    /// # Safety
    /// Every use of the returned handle must end before this exec is updated (whole graph or
    /// per node), dropped, or replaced: in particular, a kernel or graph given the value may
    /// launch it from the device only while the exec is alive, unchanged and uploaded, and the
    /// caller must wait for such kernels (and the launches they made) to complete before any
    /// of those. Raw calls must not destroy the handle, and a raw update or node change must
    /// point the nodes only at what outlives every later launch of the exec (the exec keeps
    /// alive only what this crate's calls gave it).
    ///
    /// ```no_run
    /// let exec = cuda_graph::graph::Graph::new()?.instantiate::<cuda_graph::graph::DeviceLaunch>(Default::default())?;
    /// // SAFETY: the handle is only compared, never used.
    /// assert!(!unsafe { exec.as_raw() }.is_null());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn as_raw(&self) -> sys::cudaGraphExec_t {
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
    ///
    /// Refused (`CudaError::InvalidArgument`, before anything is queued) while a slice of a
    /// [`PinnedBuffer`](crate::PinnedBuffer) that the nodes copy to or from is alive
    /// ([`PinnedBuffer::as_slice`](crate::PinnedBuffer::as_slice) and `as_mut_slice`): the
    /// launch would race it. Slices taken after the launch wait for it. Refused too on a
    /// stream that a capture of this crate records: add the graph as a child graph node
    /// ([`GraphBuilder::add_child_graph`](super::GraphBuilder::add_child_graph)) instead.
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        // Held until the launch is queued: no capture begins on `stream` after the check.
        let _gate = crate::capture_gate::enter_queue("GraphExec::launch")?;
        if crate::capture_gate::any_capture_active() && stream.is_capturing()? {
            // The captured launch would run with later launches of the captured graph, which
            // keep nothing of this exec alive and which its fences cannot see.
            return Err(CudaError::invalid(
                "GraphExec::launch",
                "the stream is being captured: add the graph as a child graph node \
                 (GraphBuilder::add_child_graph) instead of launching an exec into the capture",
            ));
        }
        // Held from before the launch until it is fenced: see `LaunchLock`.
        let pinned = if self.pinned.is_empty() {
            None
        } else {
            Some(LaunchLock::new(&self.pinned, "GraphExec::launch")?)
        };
        // SAFETY: exec and stream are alive; everything the nodes use is kept by `self`; no
        // host slice of the pinned memory they use is alive (refused above) or can be taken
        // before the launch is fenced (the allocations are locked until then).
        check(unsafe { sys::cudaGraphLaunch(self.raw, stream.as_raw()) }, "cudaGraphLaunch")?;
        let mut result = Ok(());
        if let Some(fence) = self.release.fence {
            // SAFETY: event and stream are alive; the event then completes after this launch.
            result = check(unsafe { sys::cudaEventRecord(fence, stream.as_raw()) }, "cudaEventRecord");
            if result.is_err() && stream.synchronize().is_err() {
                // Neither fenced nor finished: drop must not release what this launch uses.
                self.release.unfenced_launch.set(true);
            }
        }
        if let Some(pinned) = pinned {
            // Host access to the pinned buffers waits for this launch.
            result = result.and(pinned.fence_after(stream));
        }
        result
    }

    /// Lists the pinned allocations the exec's nodes may use (after instantiate, update, set),
    /// sorted by address and without repeats (the order launches lock them in).
    pub(super) fn refresh_pinned(&mut self) {
        let mut pinned: Vec<Arc<PinnedAllocation>> = Vec::new();
        for core in &self.params_from {
            pinned.extend(core.state().keep_alive.iter().filter_map(as_pinned));
        }
        pinned.extend(self.overrides.values().flatten().filter_map(as_pinned));
        pinned.sort_by_key(Arc::as_ptr);
        pinned.dedup_by(|a, b| Arc::ptr_eq(a, b));
        self.pinned = pinned;
    }

    /// Lets go of what the graphs this exec keeps point to, for each graph that only
    /// execs naming their nodes by it (see `recycle::OriginRef`) would hold after this exec.
    fn release_graphs_only_named(&self) {
        let mut graphs: Vec<&Arc<GraphCore>> =
            std::iter::once(&self.source).chain(&self.params_from).collect();
        graphs.sort_by_key(|graph| Arc::as_ptr(graph));
        graphs.dedup_by(|a, b| Arc::ptr_eq(a, b));
        for graph in graphs {
            let held = std::iter::once(&self.source)
                .chain(&self.params_from)
                .filter(|g| Arc::ptr_eq(g, graph))
                .count();
            recycle::owner_leaving(graph, held);
        }
    }

    /// Records that a node was disabled: a reuse of this exec must enable it again.
    pub(super) fn note_node_disabled(&mut self) {
        if let Some(recyclable) = &mut self.release.recycle {
            recyclable.nodes_toggled = true;
        }
    }

    /// Releases what updates and setters replaced if the launches that may use it have
    /// completed (checked, not waited for, unless more than [`RETIRED_BEFORE_WAIT`] sets are
    /// kept). See `retired`.
    pub(super) fn release_retired(&mut self) {
        if self.retired.is_empty() {
            return;
        }
        let wait = self.retired.len() > RETIRED_BEFORE_WAIT;
        if self.release.last_launch_finished(wait) {
            self.retired.release();
        }
    }

    /// Starts recording launch fences if `needed` (see
    /// [`CoreState::execs_need_fence`](super::CoreState::execs_need_fence)); call it before the
    /// nodes may use what needs them.
    pub(super) fn ensure_fence(&mut self, needed: bool) -> Result<()> {
        self.release.ensure_fence(needed)
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
