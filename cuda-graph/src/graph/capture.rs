//! Stream capture: work queued on a stream is recorded into a graph instead of running, until
//! the guard ends the capture (also on drop and on panic, so the stream is usable again).

use std::collections::HashMap;
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use cudart_graph_sys as sys;

use super::capture_gate::{enter_change, enter_queue, ChangeGuard, QueueGuard};
use super::node::raw_deps;
use super::{list_nodes, AsNode, Graph, GraphBuilder, GraphCore};
use crate::error::{check, record_drop_error, Result};
use crate::kernel::KernelArgs;
use crate::memory::KeepAlive;
use crate::stream::Stream;

/// How a capture treats calls that are unsafe while capturing, such as `cudaMalloc`, from
/// other threads (`cudaStreamCaptureMode`).
///
/// ```
/// assert_eq!(cuda_graph::graph::CaptureMode::default(), cuda_graph::graph::CaptureMode::Global);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CaptureMode {
    /// Such calls fail on every thread while this capture runs (the safest).
    #[default]
    Global,
    /// Such calls fail only on the capturing thread.
    ThreadLocal,
    /// Such calls are not checked.
    Relaxed,
}

impl CaptureMode {
    fn raw(self) -> sys::cudaStreamCaptureMode {
        match self {
            CaptureMode::Global => sys::cudaStreamCaptureMode::cudaStreamCaptureModeGlobal,
            CaptureMode::ThreadLocal => sys::cudaStreamCaptureMode::cudaStreamCaptureModeThreadLocal,
            CaptureMode::Relaxed => sys::cudaStreamCaptureMode::cudaStreamCaptureModeRelaxed,
        }
    }
}

/// Where the owners met during a capture go: a list for the new graph, or the target family
/// (with the lineage of the graph or body captured into: the graphs whose conditional
/// handles captured kernels may receive).
enum Sink {
    New { owners: Vec<KeepAlive>, host_work: bool },
    Into { core: Arc<GraphCore>, lineage: Arc<[u64]> },
}

/// Captures in progress, by CUDA's capture id (shared by every stream joined into one).
static CAPTURES: Mutex<Option<HashMap<u64, Sink>>> = Mutex::new(None);

/// How many entries `CAPTURES` has: read without the lock on every kernel launch, so launches
/// pay one atomic load while no capture runs.
static ACTIVE_CAPTURES: AtomicUsize = AtomicUsize::new(0);

fn captures<R>(f: impl FnOnce(&mut HashMap<u64, Sink>) -> R) -> R {
    let mut guard = CAPTURES.lock().unwrap_or_else(PoisonError::into_inner);
    let map = guard.get_or_insert_with(HashMap::new);
    let result = f(map);
    ACTIVE_CAPTURES.store(map.len(), Ordering::Release);
    result
}

/// True while a capture begun through this crate is in progress on any stream. A stream can
/// only be capturing into a graph of this crate (directly, or joined through an event) while
/// one is; captures begun by raw calls are their caller's to account for.
pub(crate) fn any_capture_active() -> bool {
    ACTIVE_CAPTURES.load(Ordering::Acquire) != 0
}

/// What a wait that may join a stream into a capture holds (see [`enter_wait`]): the read
/// guard while no capture of this crate runs (none can begin while it is held), else the
/// write guard (the wait may join one: a change of capture membership).
pub(crate) struct WaitGuard {
    _queue: Option<QueueGuard>,
    _change: Option<ChangeGuard>,
}

/// Enters the capture gate for `cudaStreamWaitEvent`, which joins the waiting stream into the
/// capture that recorded the event: as a writer while a capture of this crate runs (so no
/// launch is between its check and its call when the stream joins), else as a reader (no
/// capture can begin while it is held, so the wait joins none of ours).
pub(crate) fn enter_wait() -> Result<WaitGuard> {
    let queue = enter_queue("Stream::wait_event")?;
    if !any_capture_active() {
        return Ok(WaitGuard { _queue: Some(queue), _change: None });
    }
    drop(queue);
    Ok(WaitGuard { _queue: None, _change: Some(enter_change()) })
}

/// The id of the capture `stream` takes part in, if any.
fn capture_id(stream: sys::cudaStream_t) -> Result<Option<u64>> {
    let mut status = sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusNone;
    let mut id = 0;
    check(
        // SAFETY: `stream` is a live stream: every caller passes the handle of a borrowed
        // `Stream`. `status` and `id` are writable locals of the types CUDA writes; the other
        // out-pointers are null, which asks CUDA not to return them.
        unsafe {
            sys::cudaStreamGetCaptureInfo(
                stream,
                &mut status,
                &mut id,
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        },
        "cudaStreamGetCaptureInfo",
    )?;
    Ok((status != sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusNone).then_some(id))
}

/// For code that queues work on a stream (kernel launches, async copies, host functions),
/// called under the capture gate ([`enter_queue`], held until the work is queued): when
/// `stream` is capturing through this crate, keeps `owners()` alive as long as the captured
/// graph and its execs. `host_work` says the work calls a host function (one of `owners`),
/// so execs wait for their last launch before dropping it. Returns whether it kept them;
/// `false` when the stream is not capturing (or was put in capture mode by raw calls, whose
/// caller then owns that duty).
pub(crate) fn retain_for_capture(
    _gate: &QueueGuard,
    stream: sys::cudaStream_t,
    owners: impl FnOnce() -> Vec<KeepAlive>,
    host_work: bool,
) -> Result<bool> {
    with_capture_sink(stream, |sink| match sink {
        Some(sink) => {
            sink.retain(owners(), host_work);
            Ok(true)
        }
        None => Ok(false),
    })
}

/// Runs `f` with the registry entry of the capture `stream` takes part in (`None` when it
/// does not capture, or captures through raw calls). Call it under the capture gate.
fn with_capture_sink<R>(
    stream: sys::cudaStream_t,
    f: impl FnOnce(Option<&mut Sink>) -> Result<R>,
) -> Result<R> {
    if !any_capture_active() {
        return f(None);
    }
    let Some(id) = capture_id(stream)? else { return f(None) };
    captures(|map| f(map.get_mut(&id)))
}

impl Sink {
    fn retain(&mut self, owners: Vec<KeepAlive>, host_work: bool) {
        match self {
            Sink::New { owners: list, host_work: any_host_work } => {
                list.extend(owners);
                *any_host_work |= host_work;
            }
            Sink::Into { core, .. } => {
                let mut state = core.state();
                state.keep_alive.extend(owners);
                state.host_work |= host_work;
            }
        }
    }
}

/// The checks and bookkeeping of a kernel launched on `stream` while a capture of this crate
/// may run, or with a conditional handle among its arguments (under the capture gate, until
/// the launch is queued):
/// - a conditional handle is allowed only when the launch is captured into the graph that
///   created it or a body inside that graph (`begin_capture_to_graph`); anywhere else
///   (a plain stream launch, a capture into a new graph or another graph) it is refused;
/// - when captured, the captured graph keeps what the arguments point into.
#[cold]
#[inline(never)]
pub(crate) fn prepare_kernel_launch<A: KernelArgs>(
    _gate: &QueueGuard,
    stream: &Stream,
    args: &A,
) -> Result<()> {
    with_capture_sink(stream.as_raw(), |sink| {
        if A::HAS_CONDITIONAL_HANDLE {
            let lineage = match &sink {
                Some(Sink::Into { lineage, .. }) => Some(&**lineage),
                _ => None,
            };
            super::conditional::check_launch_handles(lineage, args)?;
        }
        if let Some(sink) = sink {
            let mut owners = Vec::new();
            args.keep_alive(&mut owners);
            sink.retain(owners, false);
        }
        Ok(())
    })
}

impl Stream {
    /// Starts recording this stream's work into a new graph (`cudaStreamBeginCapture`).
    /// Nothing queued runs until the graph is launched. [`CaptureGuard::end`] gives the
    /// graph; dropping the guard (on an early return or a panic) ends the capture and throws
    /// the partial graph away, so the stream is usable again.
    ///
    /// Other threads may go on queuing work on this stream (`Stream` is `Sync`): whatever the
    /// capture records, from any thread, has its buffers kept by the graph. Beginning the
    /// capture and registering where those buffers go is one step for every launch of this
    /// crate (see the capture gate in `graph/capture_gate.rs`), and so is ending it.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{CaptureMode, HostLaunch};
    /// let stream = cuda_graph::Stream::new()?;
    /// let capture = stream.begin_capture(CaptureMode::Global)?;
    /// // ... queue kernels and copies on `stream` ...
    /// let graph = capture.end()?;
    /// let exec = graph.instantiate::<HostLaunch>(Default::default())?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn begin_capture(&self, mode: CaptureMode) -> Result<CaptureGuard<'_>> {
        let id = {
            // Begun and registered under the gate: no launch sees one without the other.
            let _change = enter_change();
            check(
                // SAFETY: the stream is alive (borrowed for the guard's life).
                unsafe { sys::cudaStreamBeginCapture(self.as_raw(), mode.raw()) },
                "cudaStreamBeginCapture",
            )?;
            let id = capture_id(self.as_raw());
            if let Ok(Some(id)) = id {
                captures(|map| map.insert(id, Sink::New { owners: Vec::new(), host_work: false }));
            }
            id
        };
        // The gate is open again before the guard exists: its drop enters the gate itself.
        // From here on, the guard ends the capture if anything failed.
        let guard = CaptureGuard {
            stream: self,
            id: id.as_ref().ok().copied().flatten(),
            done: false,
            _not_send: PhantomData,
        };
        id?;
        Ok(guard)
    }

    /// Starts recording this stream's work into `graph`, a [`Graph`] or a conditional body
    /// (`cudaStreamBeginCaptureToGraph`), after `deps` (nodes of `graph`). While the capture
    /// runs, other calls on `graph`'s family from this thread are refused and from other
    /// threads wait. Dropping the guard without [`end`](CaptureToGraphGuard::end) ends the
    /// capture and removes the nodes it added.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{CaptureMode, Graph};
    /// let stream = cuda_graph::Stream::new()?;
    /// let graph = Graph::new()?;
    /// let (_node, body) = graph.add_while(&graph.conditional_handle(Some(0))?, &[])?;
    /// let capture = stream.begin_capture_to_graph(&body, CaptureMode::Global, &[])?;
    /// // ... queue the loop body's kernels on `stream` ...
    /// capture.end()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn begin_capture_to_graph<'a>(
        &'a self,
        graph: &'a GraphBuilder,
        mode: CaptureMode,
        deps: &[&dyn AsNode],
    ) -> Result<CaptureToGraphGuard<'a>> {
        const CALL: &str = "Stream::begin_capture_to_graph";
        let deps = raw_deps(CALL, graph.id, deps)?;
        graph.core.set_capturing(CALL)?;
        // The family is ours alone now (other threads wait), so this list stays exact.
        let (status, before) = list_nodes(graph.raw);
        if let Err(err) = check(status, "cudaGraphGetNodes") {
            graph.core.clear_capturing();
            return Err(err);
        }
        let id = {
            // Begun and registered under the gate: no launch sees one without the other.
            let _change = enter_change();
            // SAFETY: stream and graph are alive (borrowed for the guard's life); no other call
            // on the graph runs (the family is marked as captured into); `deps` are its nodes.
            let status = unsafe {
                sys::cudaStreamBeginCaptureToGraph(
                    self.as_raw(),
                    graph.raw,
                    deps.as_ptr(),
                    ptr::null(),
                    deps.len(),
                    mode.raw(),
                )
            };
            if let Err(err) = check(status, "cudaStreamBeginCaptureToGraph") {
                graph.core.clear_capturing();
                return Err(err);
            }
            let id = capture_id(self.as_raw());
            if let Ok(Some(id)) = id {
                let sink = Sink::Into { core: graph.core.clone(), lineage: graph.lineage.clone() };
                captures(|map| map.insert(id, sink));
            }
            id
        };
        // The gate is open again before the guard exists: its drop enters the gate itself.
        // From here on, the guard ends the capture if anything failed.
        let guard = CaptureToGraphGuard {
            stream: self,
            graph,
            before,
            id: id.as_ref().ok().copied().flatten(),
            done: false,
            _not_send: PhantomData,
        };
        id?;
        Ok(guard)
    }

    /// Whether this stream is recording into a graph (`cudaStreamIsCapturing`), including an
    /// invalidated capture not yet ended.
    ///
    /// ```no_run
    /// let stream = cuda_graph::Stream::new()?;
    /// assert!(!stream.is_capturing()?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn is_capturing(&self) -> Result<bool> {
        let mut status = sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusNone;
        // SAFETY: the stream is alive; `status` is writable.
        check(unsafe { sys::cudaStreamIsCapturing(self.as_raw(), &mut status) }, "cudaStreamIsCapturing")?;
        Ok(status != sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusNone)
    }
}

/// Ends the capture on `stream` and forgets the owners sink of capture `id`, returning CUDA's
/// status and graph (null on failure), and the sink.
fn end_capture(stream: &Stream, id: Option<u64>) -> (sys::cudaError_t, sys::cudaGraph_t, Option<Sink>) {
    // Ended and unregistered under the gate: a launch that handed its owners to this capture
    // has been queued (so captured) before the capture ends.
    let _change = enter_change();
    let mut raw = ptr::null_mut();
    // SAFETY: the stream is alive and capturing (begun by the guard that calls this).
    let status = unsafe { sys::cudaStreamEndCapture(stream.as_raw(), &mut raw) };
    (status, raw, id.and_then(|id| captures(|map| map.remove(&id))))
}

/// For a guard dropped without `end`: ends the capture (see [`end_capture`]), recording its
/// error unless the capture was invalidated (what the drop cleans up, not an error to
/// report), and returns CUDA's graph (null on failure).
fn abandon_capture(stream: &Stream, id: Option<u64>) -> sys::cudaGraph_t {
    let (status, raw, _sink) = end_capture(stream, id);
    if status != sys::cudaError::cudaErrorStreamCaptureInvalidated {
        record_drop_error(status, "cudaStreamEndCapture");
    }
    raw
}

/// A capture into a new graph, from [`Stream::begin_capture`]. Not `Send`: CUDA requires
/// the capture to end on the thread that began it.
///
/// ```no_run
/// let stream = cuda_graph::Stream::new()?;
/// let graph = stream.begin_capture(Default::default())?.end()?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[must_use = "dropping the guard ends the capture and discards what it recorded"]
pub struct CaptureGuard<'s> {
    stream: &'s Stream,
    /// The capture's id (`None` if CUDA did not say: then nothing was registered).
    id: Option<u64>,
    done: bool,
    _not_send: PhantomData<*const ()>,
}

impl CaptureGuard<'_> {
    /// Ends the capture (`cudaStreamEndCapture`) and returns the recorded graph, which keeps
    /// alive what the captured work points to.
    pub fn end(mut self) -> Result<Graph> {
        self.done = true;
        let (status, raw, sink) = end_capture(self.stream, self.id);
        let (owners, host_work) = match sink {
            Some(Sink::New { owners, host_work }) => (owners, host_work),
            _ => (Vec::new(), false),
        };
        if let Err(err) = check(status, "cudaStreamEndCapture") {
            if !raw.is_null() {
                // SAFETY: a graph CUDA handed back that nobody else owns.
                record_drop_error(unsafe { sys::cudaGraphDestroy(raw) }, "cudaGraphDestroy");
            }
            return Err(err);
        }
        Ok(Graph::from_parts(raw, owners, host_work))
    }
}

impl Drop for CaptureGuard<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let raw = abandon_capture(self.stream, self.id);
        if !raw.is_null() {
            // SAFETY: the partial graph is ours alone and discarded once.
            record_drop_error(unsafe { sys::cudaGraphDestroy(raw) }, "cudaGraphDestroy");
        }
    }
}

/// A capture into an existing graph or body, from [`Stream::begin_capture_to_graph`].
/// Not `Send`: CUDA requires the capture to end on the thread that began it.
///
/// ```no_run
/// let stream = cuda_graph::Stream::new()?;
/// let graph = cuda_graph::graph::Graph::new()?;
/// stream.begin_capture_to_graph(&graph, Default::default(), &[])?.end()?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[must_use = "dropping the guard ends the capture and removes what it recorded"]
pub struct CaptureToGraphGuard<'a> {
    stream: &'a Stream,
    graph: &'a GraphBuilder,
    before: Vec<sys::cudaGraphNode_t>,
    id: Option<u64>,
    done: bool,
    _not_send: PhantomData<*const ()>,
}

impl CaptureToGraphGuard<'_> {
    /// Ends the capture (`cudaStreamEndCapture`); the recorded work stays in the graph.
    pub fn end(mut self) -> Result<()> {
        self.done = true;
        let (status, _same_graph, _sink) = end_capture(self.stream, self.id);
        let result = check(status, "cudaStreamEndCapture");
        if result.is_err() {
            self.remove_captured_nodes();
        }
        self.graph.core.clear_capturing();
        result
    }

    /// Removes the nodes the capture added (none has a handle outside this module).
    fn remove_captured_nodes(&self) {
        // The family is still marked as captured into: ours alone.
        let (status, nodes) = list_nodes(self.graph.raw);
        record_drop_error(status, "cudaGraphGetNodes");
        for node in nodes.into_iter().filter(|node| !self.before.contains(node)) {
            // SAFETY: a node of this graph that the capture created; no handle to it exists.
            record_drop_error(unsafe { sys::cudaGraphDestroyNode(node) }, "cudaGraphDestroyNode");
        }
    }
}

impl Drop for CaptureToGraphGuard<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let _same_graph = abandon_capture(self.stream, self.id);
        self.remove_captured_nodes();
        self.graph.core.clear_capturing();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_map_to_cuda_modes() {
        use sys::cudaStreamCaptureMode as M;
        assert_eq!(CaptureMode::Global.raw(), M::cudaStreamCaptureModeGlobal);
        assert_eq!(CaptureMode::ThreadLocal.raw(), M::cudaStreamCaptureModeThreadLocal);
        assert_eq!(CaptureMode::Relaxed.raw(), M::cudaStreamCaptureModeRelaxed);
    }
}
