//! Per-node exec setters through CUDA's generic call (`cudaGraphExecNodeSetParams` with
//! `cudaGraphNodeParams`), for the node kinds without a typed call of their own here: event
//! record and wait nodes (the event), host nodes (the function) and child graph nodes (the
//! child's parameters). CUDA allows no change to memory alloc/free or conditional nodes.
//!
//! Each setter refuses a node of another graph and a stale handle as the typed setters do
//! (`own_node`, then the family's epoch check under its lock), and hands what it replaces to
//! the exec's retired list (see `retired`): launches queued before still use it.

use std::ptr;
use std::sync::Arc;

use crate::runtime as sys;

use super::params::node_params_of;
use super::{
    ChildGraphNode, EventRecordNode, EventWaitNode, Graph, GraphExec, HostNode, LaunchMode, NodeRef,
};
use crate::error::{check, CudaError, Result};
use crate::event::Event;
use crate::host_fn::HostCallback;
use crate::memory::KeepAlive;

impl<M: LaunchMode> GraphExec<M> {
    /// Sets `params` on `node` of this exec with `cudaGraphExecNodeSetParams`, keeping `keep`
    /// for the node (what `params` points at) and retiring what it kept before.
    fn set_generic(
        &mut self, call: &'static str, node: NodeRef, keep: Vec<KeepAlive>, fence: bool,
        mut params: sys::cudaGraphNodeParams,
    ) -> Result<()> {
        self.set_node(call, node, keep, fence, |exec, exec_node| {
            check(
                // SAFETY: exec alive; `exec_node` names a node of it (its source graph's node
                // checked by id and epoch, locked, translated for a reused exec); `params` is
                // of that node's kind (the typed handle says so) and what it points at is kept
                // alive by the exec from now on.
                unsafe { sys::cudaGraphExecNodeSetParams(exec, exec_node, &mut params) },
                "cudaGraphExecNodeSetParams",
            )
        })
    }

    /// Makes event record node `node` record `event` in later launches of this exec
    /// (`cudaGraphExecNodeSetParams`); the graph is not changed. The exec shares the event;
    /// the one it replaces is kept until the launches queued before have completed. Refused,
    /// naming both devices, for an event of another device than the exec's.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use cuda_graph::graph::Graph;
    /// let (first, second) = (Arc::new(cuda_graph::Event::new()?), Arc::new(cuda_graph::Event::new()?));
    /// let graph = Graph::new()?;
    /// let record = graph.add_event_record(&first, &[])?;
    /// let mut exec = graph.instantiate_default()?;
    /// exec.set_event_record(&record, &second)?; // later launches record `second`
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn set_event_record(&mut self, node: &EventRecordNode, event: &Arc<Event>) -> Result<()> {
        const CALL: &str = "GraphExec::set_event_record";
        let node = self.own_node(CALL, node)?;
        expect_same_device(CALL, self.source.device(), event.device())?;
        let mut params = node_params_of(sys::cudaGraphNodeType::cudaGraphNodeTypeEventRecord);
        params.__bindgen_anon_1.eventRecord = sys::cudaEventRecordNodeParams { event: event.as_raw() };
        self.set_generic(CALL, node, vec![event.clone()], true, params)
    }

    /// Makes event wait node `node` wait for `event` in later launches of this exec
    /// (`cudaGraphExecNodeSetParams`). Any device's event may be waited for. The exec shares
    /// the event; the one it replaces is kept until the launches queued before completed.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use cuda_graph::graph::Graph;
    /// let (first, second) = (Arc::new(cuda_graph::Event::new()?), Arc::new(cuda_graph::Event::new()?));
    /// let graph = Graph::new()?;
    /// let wait = graph.add_event_wait(&first, &[])?;
    /// let mut exec = graph.instantiate_default()?;
    /// exec.set_event_wait(&wait, &second)?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn set_event_wait(&mut self, node: &EventWaitNode, event: &Arc<Event>) -> Result<()> {
        const CALL: &str = "GraphExec::set_event_wait";
        let node = self.own_node(CALL, node)?;
        let mut params = node_params_of(sys::cudaGraphNodeType::cudaGraphNodeTypeWaitEvent);
        params.__bindgen_anon_1.eventWait = sys::cudaEventWaitNodeParams { event: event.as_raw() };
        self.set_generic(CALL, node, vec![event.clone()], true, params)
    }

    /// Makes host node `node` call `f` in later launches of this exec
    /// (`cudaGraphExecNodeSetParams`; CUDA allows any change). `f` follows
    /// [`GraphBuilder::add_host`](super::GraphBuilder::add_host)'s rules: it must not call
    /// CUDA, and a panic is caught. The function it replaces lives until the launches queued
    /// before, which may still call it, have completed.
    ///
    /// ```no_run
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::sync::Arc;
    /// use cuda_graph::graph::Graph;
    /// let graph = Graph::new()?;
    /// let host = graph.add_host(|| {}, &[])?;
    /// let mut exec = graph.instantiate_default()?;
    /// let runs = Arc::new(AtomicU32::new(0));
    /// let counter = runs.clone();
    /// exec.set_host(&host, move || { counter.fetch_add(1, Ordering::SeqCst); })?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn set_host<F>(&mut self, node: &HostNode, f: F) -> Result<()>
    where
        F: Fn() + Send + Sync + 'static,
    {
        const CALL: &str = "GraphExec::set_host";
        let node = self.own_node(CALL, node)?;
        let callback = HostCallback::new(f);
        let (fn_, user_data) = callback.raw_parts();
        let mut params = node_params_of(sys::cudaGraphNodeType::cudaGraphNodeTypeHost);
        params.__bindgen_anon_1.host = sys::cudaHostNodeParamsV2 { fn_, userData: user_data };
        let keep: Vec<KeepAlive> = vec![Arc::new(callback)];
        self.set_generic(CALL, node, keep, true, params)
    }

    /// Makes child graph node `node` run with the parameters of `child`'s nodes in later
    /// launches of this exec (`cudaGraphExecNodeSetParams`). CUDA requires `child` to have the
    /// topology, and node order, of the graph the node holds, and checks what may change as
    /// [`update`](Self::update) does; a refusal is CUDA's error. The exec keeps alive what
    /// `child`'s nodes use; what the node used before lives until the launches queued before
    /// have completed.
    ///
    /// Refused before CUDA sees it: a `child` of this exec's own family, of another device,
    /// one that made conditional handles, or (for a [`DeviceLaunch`](super::DeviceLaunch) exec,
    /// whose nodes were checked at instantiation) any child at all: instantiate anew instead.
    ///
    /// ```no_run
    /// use cuda_graph::graph::Graph;
    /// let data = cuda_graph::DeviceBuffer::<u32>::zeroed(16)?;
    /// let child = |value: u32| -> cuda_graph::Result<Graph> {
    ///     let child = Graph::new()?;
    ///     child.add_memset(&data.ptr(), value, 16, &[])?;
    ///     Ok(child)
    /// };
    /// let graph = Graph::new()?;
    /// let node = graph.add_child_graph(&child(1)?, &[])?;
    /// let mut exec = graph.instantiate_default()?;
    /// exec.set_child_graph(&node, &child(2)?)?; // later launches write 2
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn set_child_graph(&mut self, node: &ChildGraphNode, child: &Graph) -> Result<()> {
        const CALL: &str = "GraphExec::set_child_graph";
        let node = self.own_node(CALL, node)?;
        if M::DEVICE_LAUNCH {
            return Err(CudaError::invalid(
                CALL,
                "a device-launch exec's nodes were validated at instantiation; instantiate anew",
            ));
        }
        if child.core().id() == self.source.id() {
            return Err(CudaError::invalid(CALL, "the child is of this exec's own graph family"));
        }
        expect_same_device(CALL, self.source.device(), child.device())?;
        // A private copy under the child's lock, so that CUDA reads a graph nobody else may
        // change while the exec's family is locked (never both locks at once).
        let (copy, keep, fence) = child.core().locked(CALL, |state| {
            super::conditional::refuse_child_with_handles(CALL, state)?;
            let keep: Vec<KeepAlive> = state.keep_alive.as_slice().to_vec();
            Ok((RawClone::of(child.as_raw())?, keep, state.execs_need_fence(child.device())))
        })?;
        let mut params = node_params_of(sys::cudaGraphNodeType::cudaGraphNodeTypeGraph);
        params.__bindgen_anon_1.graph = sys::cudaChildGraphNodeParams {
            graph: copy.0,
            ownership: sys::cudaGraphChildGraphNodeOwnership::cudaGraphChildGraphOwnershipClone,
        };
        self.set_generic(CALL, node, keep, fence, params)
    }
}

/// Refuses a resource of another device than the exec's, naming both.
fn expect_same_device(call: &'static str, exec: crate::Device, other: crate::Device) -> Result<()> {
    if exec == other {
        return Ok(());
    }
    Err(CudaError::invalid(
        call,
        format!("the exec is of device {}, the argument of device {}", exec.ordinal(), other.ordinal()),
    ))
}

/// A `cudaGraphClone` copy owned here alone, destroyed when dropped.
struct RawClone(sys::cudaGraph_t);

impl RawClone {
    /// Clones `graph`; its family's lock is held by the caller.
    fn of(graph: sys::cudaGraph_t) -> Result<RawClone> {
        let mut raw = ptr::null_mut();
        // SAFETY: `graph` is alive and locked by the caller; `raw` is a valid out-pointer.
        check(unsafe { sys::cudaGraphClone(&mut raw, graph) }, "cudaGraphClone")?;
        Ok(RawClone(raw))
    }
}

impl Drop for RawClone {
    fn drop(&mut self) {
        // SAFETY: the clone is ours alone and destroyed once; CUDA copied what it needed from
        // it during the set call.
        let status = unsafe { sys::cudaGraphDestroy(self.0) };
        crate::release::record_drop_error(status, "cudaGraphDestroy");
    }
}
