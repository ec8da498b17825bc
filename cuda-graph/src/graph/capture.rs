//! Stream capture: work queued on a stream is recorded into a graph instead of running, until
//! the guard ends the capture (also on drop and on panic, so the stream is usable again).

use std::collections::HashMap;
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use cudart_graph_sys as sys;

use super::node::raw_deps;
use super::{list_nodes, AsNode, Graph, GraphBuilder, GraphCore};
use crate::error::{check, record_drop_error, Result};
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

/// Where the owners met during a capture go: a list for the new graph, or the target family.
enum Sink {
    New { owners: Vec<KeepAlive>, host_work: bool },
    Into(Arc<GraphCore>),
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

/// The id of the capture `stream` takes part in, if any.
fn capture_id(stream: sys::cudaStream_t) -> Result<Option<u64>> {
    let mut status = sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusNone;
    let mut id = 0;
    // SAFETY: `status` and `id` are writable; the other out-pointers are null (not wanted).
    check(
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

/// For code that queues work on a stream (kernel launches, async copies, host functions):
/// when `stream` is capturing through this crate, keeps `owners` alive as long as the
/// captured graph and its execs. `host_work` says the work calls a host function (one of
/// `owners`), so execs wait for their last launch before dropping it. Returns whether it
/// kept them; `false` when the stream is not capturing (or was put in capture mode by raw
/// calls, whose caller then owns that duty).
pub(crate) fn retain_for_capture(
    stream: sys::cudaStream_t,
    owners: Vec<KeepAlive>,
    host_work: bool,
) -> Result<bool> {
    if !any_capture_active() {
        return Ok(false);
    }
    let Some(id) = capture_id(stream)? else { return Ok(false) };
    Ok(captures(|map| match map.get_mut(&id) {
        Some(Sink::New { owners: list, host_work: any_host_work }) => {
            list.extend(owners);
            *any_host_work |= host_work;
            true
        }
        Some(Sink::Into(core)) => {
            let mut state = core.state();
            state.keep_alive.extend(owners);
            state.host_work |= host_work;
            true
        }
        None => false,
    }))
}

impl Stream {
    /// Starts recording this stream's work into a new graph (`cudaStreamBeginCapture`).
    /// Nothing queued runs until the graph is launched. [`CaptureGuard::end`] gives the
    /// graph; dropping the guard (on an early return or a panic) ends the capture and throws
    /// the partial graph away, so the stream is usable again.
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
        // SAFETY: the stream is alive (borrowed for the guard's life).
        check(unsafe { sys::cudaStreamBeginCapture(self.as_raw(), mode.raw()) }, "cudaStreamBeginCapture")?;
        // From here on, the guard ends the capture if anything fails.
        let mut guard = CaptureGuard { stream: self, id: 0, done: false, _not_send: PhantomData };
        guard.id = capture_id(self.as_raw())?.unwrap_or_default();
        captures(|map| map.insert(guard.id, Sink::New { owners: Vec::new(), host_work: false }));
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
        // SAFETY: stream and graph are alive (borrowed for the guard's life); no other call on
        // the graph runs (the family is marked as captured into); `deps` are its nodes.
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
        // From here on, the guard ends the capture if anything fails.
        let mut guard =
            CaptureToGraphGuard { stream: self, graph, before, id: 0, done: false, _not_send: PhantomData };
        guard.id = capture_id(self.as_raw())?.unwrap_or_default();
        captures(|map| map.insert(guard.id, Sink::Into(graph.core.clone())));
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
fn end_capture(stream: &Stream, id: u64) -> (sys::cudaError_t, sys::cudaGraph_t, Option<Sink>) {
    let mut raw = ptr::null_mut();
    // SAFETY: the stream is alive and capturing (begun by the guard that calls this).
    let status = unsafe { sys::cudaStreamEndCapture(stream.as_raw(), &mut raw) };
    (status, raw, captures(|map| map.remove(&id)))
}

/// For a guard dropped without `end`: ends the capture (see [`end_capture`]), recording its
/// error unless the capture was invalidated (what the drop cleans up, not an error to
/// report), and returns CUDA's graph (null on failure).
fn abandon_capture(stream: &Stream, id: u64) -> sys::cudaGraph_t {
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
    id: u64,
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
    id: u64,
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
