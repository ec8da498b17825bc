//! Graphs: definitions built node by node or by stream capture, instantiated into executables.
//!
//! - [`Graph`] owns a CUDA graph definition. Everything that adds nodes lives on
//!   [`GraphBuilder`], which a `Graph` derefs to and which is also what a conditional node's
//!   bodies are, so bodies are built with the same calls and nest to any depth.
//! - Node handles ([`KernelNode`], [`MemcpyNode`], …) are `Copy` values that remember which
//!   graph they belong to: a node of one graph given to another is refused, not undefined.
//! - [`Graph::instantiate`] gives a [`GraphExec<M>`](GraphExec) for [`HostLaunch`] or
//!   [`DeviceLaunch`], which launches, uploads, and takes whole-graph and per-node updates;
//!   [`Graph::instantiate_default`] the common one, launched from the host with no options.
//! - [`Stream::begin_capture`](crate::Stream::begin_capture) records stream work into a new
//!   graph; [`Stream::begin_capture_to_graph`](crate::Stream::begin_capture_to_graph) into an
//!   existing graph or body.
//!
//! # Ownership and threads
//! A graph family (a root graph and all its conditional bodies) shares one owner: the CUDA
//! graph is destroyed when the last [`Graph`], body [`GraphBuilder`] or [`GraphExec`] made
//! from it is dropped. That owner also holds every allocation the nodes point to (see the
//! crate docs, "Ownership"), so nothing here carries a lifetime. Graph objects are not
//! thread-safe in CUDA: builders are `Send` but not `Sync`, and every CUDA call that touches
//! a family's nodes is serialized by that family's lock.
//!
//! ```no_run
//! use cuda_graph::graph::Graph;
//! use cuda_graph::{DeviceBuffer, Stream};
//! let buffer = DeviceBuffer::<u32>::zeroed(1024)?;
//! let graph = Graph::new()?;
//! let fill = graph.add_memset(&buffer.ptr(), 7u32, 1024, &[])?;
//! graph.add_memset(&buffer.ptr(), 9u32, 512, &[&fill])?;
//! let exec = graph.instantiate_default()?;
//! let stream = Stream::new()?;
//! exec.launch(&stream)?;
//! stream.synchronize()?;
//! assert_eq!(buffer.to_vec()?[..2], [9, 9]);
//! # Ok::<(), cuda_graph::CudaError>(())
//! ```

mod capture;
mod clone;
mod conditional;
mod copy2d;
mod copy3d;
mod dot;
mod edges;
mod edit;
mod exec;
mod exec_pool;
mod inspect;
mod keep_list;
pub(crate) mod kernel_node;
mod node;
mod nodes;
mod raw;
mod retired;
mod symbol;
mod update;

use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, ThreadId};

use crate::runtime as sys;

use crate::device::Device;
use crate::error::refusal::{DevicePair, EditRefusal};
use crate::error::{check, CudaError, Refusal, Result};
use crate::release::{defer_drop, in_host_fn, record_drop_error, KeepAlive};

pub use crate::error::UpdateRefusal;
pub use capture::{CaptureGuard, CaptureMode, CaptureToGraphGuard};
pub use clone::CloneableNode;
pub use conditional::{
    ConditionalHandle, ConditionalKind, ConditionalNode, ConditionalParams, RawConditionalHandle,
};
pub use edges::{Dependency, Edge};
pub use exec::{DeviceLaunch, GraphExec, HostLaunch, InstantiateOptions, LaunchMode};
pub use exec_pool::{exec_pool_stats, set_exec_pool_capacity, ExecPoolStats, DEFAULT_EXEC_POOL_CAPACITY};
pub use inspect::ChildGraph;
pub use node::{AsNode, NodeInfo, NodeRef};
pub use nodes::*;

/// Ids for graph definitions (roots and bodies); never reused, so a stale node is refused.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// What a graph family shares: the root CUDA graph (destroyed with the last owner), the
/// keep-alive list, and the lock that serializes CUDA calls on the family's nodes.
pub(crate) struct GraphCore {
    raw: sys::cudaGraph_t,
    id: u64,
    /// The device the family's nodes run on: where it was created or captured.
    device: Device,
    /// How many of the references are `exec_pool::OriginRef`s (kept only to name exec nodes).
    name_refs: std::sync::atomic::AtomicUsize,
    /// How many nodes were removed from the family: the epoch a node handle is made in.
    removals: AtomicU64,
    state: Mutex<CoreState>,
    idle: Condvar,
}

pub(crate) struct CoreState {
    pub(crate) keep_alive: keep_list::KeepList,
    /// Whether nodes call host functions (kept in `keep_alive`), which execs must not drop
    /// while a launch may still call them.
    pub(crate) host_work: bool,
    /// The thread capturing into a graph of this family (the stream then writes its nodes).
    capturing_on: Option<ThreadId>,
    /// Per conditional body of the family, its lineage (ids from the root down): the graphs
    /// whose conditional handles its kernel nodes may receive.
    pub(crate) body_lineages: std::collections::HashMap<u64, Arc<[u64]>>,
    /// Per address of a node removed from the family, the epoch its removal began (see
    /// `edit`): a handle made before it names a node that is gone.
    pub(crate) removed: std::collections::HashMap<usize, u64>,
    /// Whether an exec was instantiated from the family: CUDA names that exec's nodes by
    /// the family's nodes, so none may be removed any more (see `edit`).
    pub(crate) instantiated: bool,
    /// For a clone, which graph it was cloned from and how its nodes map (see `clone`).
    pub(crate) clone_of: Option<clone::CloneOrigin>,
    /// Per conditional node this crate added (by address), what it was made with: CUDA 13.0's
    /// runtime has no call that reads a conditional node back (see `conditional`).
    pub(crate) conditionals: std::collections::HashMap<usize, conditional::Recorded>,
    /// Every conditional handle made in the family (root or body), raw, in order: a whole-graph
    /// update checks that each is still tested by a conditional node (see `update`).
    pub(crate) handles: Vec<u64>,
}

impl CoreState {
    /// Whether an exec using these nodes must wait for its last launch before releasing what
    /// they keep: host functions the launch may still call, events it may still record or
    /// wait for, or stream-ordered memory whose free would not be ordered after a launch on
    /// a non-blocking stream.
    ///
    /// Also memory of another device than `device` (the family's): no drop of it is ordered
    /// after a launch on this device otherwise.
    pub(crate) fn execs_need_fence(&self, device: Device) -> bool {
        self.host_work
            || self
                .keep_alive
                .iter()
                .any(|owner| crate::memory::free_is_queued(owner) || owner.is::<crate::Event>())
            || crate::memory::any_foreign(self.keep_alive.as_slice(), device)
    }
}

// SAFETY: the raw graph is only used by CUDA calls made under `state`'s lock (or in Drop,
// when no other owner is left); CUDA graphs may be used from any thread one at a time.
unsafe impl Send for GraphCore {}
// SAFETY: as above: shared access goes through the mutex.
unsafe impl Sync for GraphCore {}

impl GraphCore {
    fn new(
        raw: sys::cudaGraph_t, keep_alive: Vec<KeepAlive>, host_work: bool, device: Device,
    ) -> Arc<GraphCore> {
        Arc::new(GraphCore {
            raw,
            id: next_id(),
            device,
            name_refs: std::sync::atomic::AtomicUsize::new(0),
            removals: AtomicU64::new(0),
            state: Mutex::new(CoreState {
                keep_alive: keep_alive.into(),
                host_work,
                capturing_on: None,
                body_lineages: Default::default(),
                removed: Default::default(),
                instantiated: false,
                clone_of: None,
                conditionals: Default::default(),
                handles: Vec::new(),
            }),
            idle: Condvar::new(),
        })
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The device the family's nodes run on.
    pub(crate) fn device(&self) -> Device {
        self.device
    }

    /// The removal epoch node handles are made in now (read under the family's lock).
    pub(crate) fn epoch(&self) -> u64 {
        self.removals.load(Ordering::Acquire)
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, CoreState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The family's lock, once no capture into it is running: waits for a capture on another
    /// thread, refuses one on this thread (the stream owns the graph until it ends).
    pub(crate) fn acquire(&self, call: &'static str) -> Result<MutexGuard<'_, CoreState>> {
        let mut state = self.state();
        while let Some(owner) = state.capturing_on {
            if owner == thread::current().id() {
                return Err(CudaError::refused(call, EditRefusal::CaptureInProgress));
            }
            state = self.idle.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        Ok(state)
    }

    /// The family's lock if no capture into it is running and no other thread holds it;
    /// never waits.
    pub(crate) fn try_acquire_idle(&self) -> Option<MutexGuard<'_, CoreState>> {
        self.try_lock_state().filter(|state| state.capturing_on.is_none())
    }

    /// The family's state if no other thread holds it; never waits (capture or not).
    pub(crate) fn try_lock_state(&self) -> Option<MutexGuard<'_, CoreState>> {
        match self.state.try_lock() {
            Ok(state) => Some(state),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Runs `f` (the CUDA calls) under the family's lock.
    pub(crate) fn locked<R>(
        &self, call: &'static str, f: impl FnOnce(&mut CoreState) -> Result<R>,
    ) -> Result<R> {
        let mut state = self.acquire(call)?;
        f(&mut state)
    }

    fn set_capturing(&self, call: &'static str) -> Result<()> {
        let mut state = self.acquire(call)?;
        state.capturing_on = Some(thread::current().id());
        Ok(())
    }

    fn clear_capturing(&self) {
        self.state().capturing_on = None;
        self.idle.notify_all();
    }
}

impl Drop for GraphCore {
    fn drop(&mut self) {
        // Declared here, dropped before the keep-alive list (the fields drop after this body).
        let _release = GraphRelease(self.raw);
    }
}

/// Destroys a root graph (and with it every body): on drop, or on another thread when
/// dropped inside a host function, where CUDA calls are not allowed.
struct GraphRelease(sys::cudaGraph_t);

// SAFETY: a graph may be destroyed from any thread; this one has no other owner left.
unsafe impl Send for GraphRelease {}

impl Drop for GraphRelease {
    fn drop(&mut self) {
        if in_host_fn() {
            defer_drop(GraphRelease(std::mem::replace(&mut self.0, ptr::null_mut())));
            return;
        }
        if !self.0.is_null() {
            // SAFETY: the last owner is gone; the root is destroyed once. Execs made from it
            // hold its core, so none outlives the nodes it names.
            record_drop_error(unsafe { sys::cudaGraphDestroy(self.0) }, "cudaGraphDestroy");
        }
    }
}

/// The nodes of `graph` (none when the status is an error); the caller holds the family.
pub(crate) fn list_nodes(graph: sys::cudaGraph_t) -> (sys::cudaError_t, Vec<sys::cudaGraphNode_t>) {
    let mut count = 0;
    // SAFETY: the graph is alive and the caller has its family to itself; a null array asks
    // for the count.
    let status = unsafe { sys::cudaGraphGetNodes(graph, ptr::null_mut(), &mut count) };
    if status != sys::cudaError::cudaSuccess || count == 0 {
        // CUDA refuses a second call with an empty array (cudaErrorInvalidValue).
        return (status, Vec::new());
    }
    let mut nodes = vec![ptr::null_mut(); count];
    // SAFETY: as above; `nodes` has room for `count` handles and CUDA writes at most that many.
    let status = unsafe { sys::cudaGraphGetNodes(graph, nodes.as_mut_ptr(), &mut count) };
    nodes.truncate(if status == sys::cudaError::cudaSuccess { count } else { 0 });
    (status, nodes)
}

/// Locks two families in id order (so two threads cannot deadlock), or one if they are one.
pub(crate) fn lock_pair<'a>(
    call: &'static str, a: &'a GraphCore, b: &'a GraphCore,
) -> Result<(MutexGuard<'a, CoreState>, Option<MutexGuard<'a, CoreState>>)> {
    if a.id == b.id {
        return Ok((a.acquire(call)?, None));
    }
    if a.id < b.id {
        let first = a.acquire(call)?;
        Ok((first, Some(b.acquire(call)?)))
    } else {
        let second = b.acquire(call)?;
        Ok((a.acquire(call)?, Some(second)))
    }
}

/// A graph definition that nodes are added to: a [`Graph`] (through `Deref`) or one body of
/// a conditional node.
///
/// Every `add_*` call takes the new node's dependencies last, as `&[&dyn AsNode]`: nodes of
/// this same graph (a body's nodes belong to the body, not to the graph around it).
///
/// ```no_run
/// use cuda_graph::graph::{Graph, GraphBuilder};
/// // One function builds the same work into a graph or into a conditional body.
/// fn build(into: &GraphBuilder) -> cuda_graph::Result<()> {
///     let first = into.add_empty(&[])?;
///     into.add_empty(&[&first])?;
///     Ok(())
/// }
/// let graph = Graph::new()?;
/// build(&graph)?;
/// let handle = graph.conditional_handle(Some(1))?;
/// let (_node, body) = graph.add_if(&handle, &[])?;
/// build(&body)?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct GraphBuilder {
    raw: sys::cudaGraph_t,
    id: u64,
    /// Ids from the root down to this graph: the graphs whose conditional handles it may use.
    lineage: Arc<[u64]>,
    core: Arc<GraphCore>,
    /// Not `Sync`: CUDA graphs must not be mutated from two threads at once.
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

// SAFETY: CUDA calls on the raw graph happen under the family lock; moving the builder to
// another thread moves only the right to make those calls.
unsafe impl Send for GraphBuilder {}

impl std::fmt::Debug for GraphBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphBuilder")
            .field("id", &self.id)
            .field("depth", &(self.lineage.len() - 1))
            .finish()
    }
}

impl GraphBuilder {
    fn root(core: Arc<GraphCore>) -> GraphBuilder {
        GraphBuilder {
            raw: core.raw,
            id: core.id,
            lineage: Arc::from([core.id]),
            core,
            _not_sync: PhantomData,
        }
    }

    /// A conditional body of this graph: a CUDA-owned graph that lives as long as the family.
    fn body(&self, raw: sys::cudaGraph_t) -> GraphBuilder {
        let id = next_id();
        let lineage: Arc<[u64]> = self.lineage.iter().copied().chain([id]).collect();
        GraphBuilder { raw, id, lineage, core: self.core.clone(), _not_sync: PhantomData }
    }

    /// The raw graph handle, for calls this crate does not wrap. The family still owns it.
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// assert!(!graph.as_raw().is_null());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn as_raw(&self) -> sys::cudaGraph_t {
        self.raw
    }

    /// True for the body of a conditional node, false for a [`Graph`].
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// assert!(!graph.is_body());
    /// let (_, body) = graph.add_while(&graph.conditional_handle(Some(0))?, &[])?;
    /// assert!(body.is_body());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn is_body(&self) -> bool {
        self.lineage.len() > 1
    }

    /// Keeps `owner` alive as long as this graph family and its execs: for resources that
    /// nodes reach through raw addresses this crate cannot see.
    ///
    /// ```no_run
    /// let buffer = cuda_graph::DeviceBuffer::<u8>::zeroed(64)?;
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.keep_alive(buffer.keep_alive());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn keep_alive(&self, owner: KeepAlive) {
        self.core.state().keep_alive.push(owner);
    }

    /// How many nodes this graph has (not counting those inside bodies or child graphs).
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.add_empty(&[])?;
    /// assert_eq!(graph.node_count()?, 1);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn node_count(&self) -> Result<usize> {
        self.core.locked("GraphBuilder::node_count", |_| {
            let mut count = 0;
            check(
                // SAFETY: the graph is alive (the family owns it); a null array asks for the count.
                unsafe { sys::cudaGraphGetNodes(self.raw, ptr::null_mut(), &mut count) },
                "cudaGraphGetNodes",
            )?;
            Ok(count)
        })
    }

    /// The device this graph's nodes run on: the one current when its [`Graph`] was created
    /// (or named to [`Graph::new_on`]), or the capturing stream's. Instantiation happens
    /// there, its execs launch only on that device's streams, and its kernel and memset
    /// nodes refuse memory of other devices without peer access (memcpy nodes may copy
    /// between devices).
    ///
    /// ```no_run
    /// use cuda_graph::{graph::Graph, Device};
    /// let graph = Graph::new_on(Device::get(1)?)?;
    /// assert_eq!(graph.device(), Device::get(1)?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn device(&self) -> Device {
        self.core.device
    }

    /// `Ok` when `other` (what `what` names) is this graph's device; else the error for
    /// `call` naming both.
    pub(crate) fn expect_device(&self, other: Device, call: &'static str, what: &'static str) -> Result<()> {
        if other == self.core.device {
            return Ok(());
        }
        let (first, second) = (self.core.device.ordinal(), other.ordinal());
        Err(CudaError::refused(
            call,
            Refusal::DevicesDiffer { pair: DevicePair::GraphAnd { what }, first, second },
        ))
    }

    fn node_ref(&self, raw: sys::cudaGraphNode_t) -> NodeRef {
        NodeRef::new(raw, self.id, self.core.id, self.core.epoch())
    }
}

/// An owned CUDA graph definition (`cudaGraphCreate`); everything that adds nodes is on
/// [`GraphBuilder`], which `Graph` derefs to.
///
/// The CUDA graph is destroyed when the graph, its conditional bodies and every exec made
/// from it are all dropped. `Send`, not `Sync`.
///
/// ```no_run
/// use cuda_graph::graph::Graph;
/// let graph = Graph::new()?;
/// let a = graph.add_empty(&[])?;
/// let b = graph.add_empty(&[])?;
/// graph.add_empty(&[&a, &b])?;
/// let exec = graph.instantiate_default()?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct Graph {
    builder: GraphBuilder,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph").field("id", &self.builder.id).finish()
    }
}

impl Deref for Graph {
    type Target = GraphBuilder;
    fn deref(&self) -> &GraphBuilder {
        &self.builder
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // If only execs that name their nodes by this graph are left (see `exec_pool`), what the
        // nodes point to is no longer needed.
        exec_pool::owner_leaving(self.core(), 1);
    }
}

impl Graph {
    /// An empty graph (`cudaGraphCreate`) of the current device (see
    /// [`GraphBuilder::device`]).
    pub fn new() -> Result<Graph> {
        let device = Device::current()?;
        let mut raw = ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; 0 is the only defined flag value.
        check(unsafe { sys::cudaGraphCreate(&mut raw, 0) }, "cudaGraphCreate")?;
        Ok(Graph::from_parts(raw, Vec::new(), false, device))
    }

    /// An empty graph whose nodes run on `device`, whatever the thread's current device is.
    ///
    /// ```no_run
    /// use cuda_graph::{graph::Graph, Device};
    /// let graphs = Device::all()?.into_iter().map(Graph::new_on).collect::<Result<Vec<_>, _>>()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn new_on(device: Device) -> Result<Graph> {
        device.with_current(Graph::new)
    }

    /// Takes ownership of a raw graph (made by calls this crate does not wrap).
    ///
    /// # Safety
    /// `raw` must be a live graph that nothing else destroys, and every resource its nodes
    /// point to must stay alive as long as the graph and its execs (use
    /// [`GraphBuilder::keep_alive`] to attach owners). Since its nodes may call host
    /// functions, its execs wait for their last launch when dropped.
    ///
    /// ```no_run
    /// use cuda_graph::{graph::Graph, sys};
    /// let mut raw = std::ptr::null_mut();
    /// // SAFETY: valid out-pointer.
    /// assert_eq!(unsafe { sys::cudaGraphCreate(&mut raw, 0) }, sys::cudaError::cudaSuccess);
    /// // SAFETY: `raw` is a fresh, empty graph owned by nobody else.
    /// let graph = unsafe { Graph::from_raw(raw) };
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn from_raw(raw: sys::cudaGraph_t) -> Graph {
        // Its nodes run on the current device (device 0 if CUDA cannot say).
        let device = Device::current().unwrap_or(Device::from_ordinal(0));
        Graph::from_parts(raw, Vec::new(), true, device)
    }

    pub(crate) fn from_parts(
        raw: sys::cudaGraph_t, keep_alive: Vec<KeepAlive>, host_work: bool, device: Device,
    ) -> Graph {
        Graph { builder: GraphBuilder::root(GraphCore::new(raw, keep_alive, host_work, device)) }
    }

    pub(crate) fn core(&self) -> &Arc<GraphCore> {
        &self.builder.core
    }
}

impl GraphBuilder {
    /// Every node of this graph (or body) with its kind, bodies and child graphs not
    /// included (`cudaGraphGetNodes`, `cudaGraphNodeGetType`): for checks such as "may the
    /// device launch this graph?" that must name the node they refuse.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{Graph, NodeKind};
    /// let graph = Graph::new()?;
    /// graph.add_empty(&[])?;
    /// for info in graph.nodes()? {
    ///     if info.kind() == NodeKind::Empty {
    ///         println!("{info} cannot be launched from the device");
    ///     }
    /// }
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn nodes(&self) -> Result<Vec<NodeInfo>> {
        self.core.locked("GraphBuilder::nodes", |_| {
            let (status, raw) = list_nodes(self.raw);
            check(status, "cudaGraphGetNodes")?;
            raw.iter().enumerate().map(|(index, &node)| NodeInfo::query(self.node_ref(node), index)).collect()
        })
    }
}
