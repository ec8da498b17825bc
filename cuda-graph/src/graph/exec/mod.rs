//! Executable graphs: `GraphExec<HostLaunch>` and `GraphExec<DeviceLaunch>`.
//!
//! - this file: the launch modes and the [`GraphExec`] type, with its raw handle;
//! - `instantiate`: [`InstantiateOptions`] and [`Graph::instantiate`];
//! - `launch`: uploading and launching from the host;
//! - `release`: the launch fence, and what dropping an exec waits for and releases (a
//!   device-launch exec is parked: see `exec_pool`);
//! - whole-graph updates are in `graph/update.rs`, per-node setters in each node kind's file
//!   (`graph/nodes/`).

mod completion;
mod instantiate;
mod launch;
mod raw;
mod release;

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;

use crate::runtime as sys;

use super::exec_pool::NodeAlias;
use super::retired::RetiredList;
use super::{GraphCore, NodeRef};
use crate::memory::{KeepAlive, PinnedAllocation};

pub(super) use instantiate::refuse_pinned_for_device_launch;
pub use instantiate::InstantiateOptions;
use release::ExecRelease;

#[cfg(doc)]
use super::Graph;

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
    pub(in crate::graph) raw: sys::cudaGraphExec_t,
    /// Destroys the exec when dropped, after its last fenced launch. Declared first, so that
    /// it runs before the resources below are released.
    release: ExecRelease,
    /// The family instantiated: its nodes identify this exec's nodes.
    pub(in crate::graph) source: Arc<GraphCore>,
    /// For an exec reused from the pool: the graph whose nodes CUDA knows this exec's nodes
    /// by, and which of them each of `source`'s nodes is.
    pub(in crate::graph) alias: Option<NodeAlias>,
    /// Whether the exec was reused from the pool rather than newly instantiated.
    pub(in crate::graph) recycled: bool,
    /// Families whose parameters this exec may use (the source, and what updates brought).
    pub(in crate::graph) params_from: Vec<Arc<GraphCore>>,
    /// Owners of what per-node setters pointed nodes at, by node.
    pub(in crate::graph) overrides: HashMap<NodeRef, Vec<KeepAlive>>,
    /// What updates and setters replaced, until the launches that may use it completed.
    pub(in crate::graph) retired: RetiredList,
    /// The pinned host allocations the nodes copy to or from, sorted by address: each launch
    /// locks them (refusing one the host borrows) and fences them.
    pub(in crate::graph) pinned: Vec<Arc<PinnedAllocation>>,
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
}
