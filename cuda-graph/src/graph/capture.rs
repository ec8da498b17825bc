//! Stream capture: work queued on a stream is recorded into a graph instead of running, until
//! the guard ends the capture (also on drop and on panic, so the stream is usable again).

use std::marker::PhantomData;
use std::ptr;
use std::sync::Arc;

use crate::runtime as sys;

use super::node::raw_deps;
use super::{list_nodes, AsNode, Graph, GraphBuilder, GraphCore};
use crate::capture_gate::{capture_id, enter_change, register, unregister, CaptureTarget, Sink};
use crate::error::{check, Result};
use crate::release::{record_drop_error, KeepAlive};
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

impl CaptureTarget for GraphCore {
    fn retain(&self, owners: Vec<KeepAlive>, host_work: bool) {
        let mut state = self.state();
        state.keep_alive.extend(owners);
        state.host_work |= host_work;
    }
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
    /// crate (see the capture gate in `capture_gate/mod.rs`), and so is ending it.
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
            let change = enter_change();
            check(
                // SAFETY: the stream is alive (borrowed for the guard's life).
                unsafe { sys::cudaStreamBeginCapture(self.as_raw(), mode.raw()) },
                "cudaStreamBeginCapture",
            )?;
            let id = capture_id(self.as_raw());
            if let Ok(Some(id)) = id {
                register(&change, id, Sink::New { owners: Vec::new(), host_work: false });
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
        &'a self, graph: &'a GraphBuilder, mode: CaptureMode, deps: &[&dyn AsNode],
    ) -> Result<CaptureToGraphGuard<'a>> {
        const CALL: &str = "Stream::begin_capture_to_graph";
        let deps = raw_deps(CALL, graph.id, deps)?;
        graph.expect_device(self.device(), CALL, "the stream")?;
        // Only `graph`'s builder (borrowed here, not `Sync`) removes its nodes: they stay live.
        let deps = graph.core.locked(CALL, |state| state.live(CALL, &deps))?;
        graph.core.set_capturing(CALL)?;
        // The family is ours alone now (other threads wait), so this list stays exact.
        let (status, before) = list_nodes(graph.raw);
        if let Err(err) = check(status, "cudaGraphGetNodes") {
            graph.core.clear_capturing();
            return Err(err);
        }
        let id = {
            // Begun and registered under the gate: no launch sees one without the other.
            let change = enter_change();
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
                let target: Arc<dyn CaptureTarget> = graph.core.clone();
                register(&change, id, Sink::Into { target, lineage: graph.lineage.clone() });
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
    let change = enter_change();
    let mut raw = ptr::null_mut();
    // SAFETY: the stream is alive and capturing (begun by the guard that calls this).
    let status = unsafe { sys::cudaStreamEndCapture(stream.as_raw(), &mut raw) };
    let sink = id.and_then(|id| unregister(&change, id));
    drop(change);
    // What waited for the captures to end (device-wide waits of drops) may go now.
    crate::capture_gate::drop_deferred();
    (status, raw, sink)
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
        Ok(Graph::from_parts(raw, owners, host_work, self.stream.device()))
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
