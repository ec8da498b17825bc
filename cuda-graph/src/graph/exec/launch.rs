//! Uploading an exec and launching it from the host.

use std::sync::Arc;

use super::{GraphExec, LaunchMode};
use crate::error::refusal::{DevicePair, ExecRefusal};
use crate::error::{check, CudaError, Refusal, Result};
use crate::memory::{as_pinned, LaunchLock, PinnedAllocation};
use crate::stream::Stream;

use crate::runtime as sys;

impl<M: LaunchMode> GraphExec<M> {
    /// Uploads the exec to the device on `stream` (`cudaGraphUpload`), so that the first
    /// launch does not pay for it. Required before a device launch.
    ///
    /// ```no_run
    /// let stream = cuda_graph::Stream::new()?;
    /// let exec = cuda_graph::graph::Graph::new()?.instantiate::<cuda_graph::graph::HostLaunch>(Default::default())?;
    /// exec.upload(&stream)?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    ///
    /// Refused, naming both devices, on a stream of another device than the exec's.
    pub fn upload(&self, stream: &Stream) -> Result<()> {
        self.expect_stream_device(stream, "GraphExec::upload")?;
        let _on_device = stream.make_current()?;
        // SAFETY: exec and stream are alive.
        check(unsafe { sys::cudaGraphUpload(self.raw, stream.as_raw()) }, "cudaGraphUpload")
    }

    /// Launches the exec on `stream` from the host (`cudaGraphLaunch`). Launches of one exec
    /// run one after another, in launch order. Allowed for [`DeviceLaunch`](crate::graph::DeviceLaunch) execs too (CUDA
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
    /// ([`GraphBuilder::add_child_graph`](crate::graph::GraphBuilder::add_child_graph)) instead.
    ///
    /// Several devices: the exec runs on its graph's device
    /// ([`GraphBuilder::device`](crate::GraphBuilder::device)); a stream of another device is
    /// refused, naming both. That device is made current for the call when another one is (a
    /// thread-local read when it is current already).
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        let device = self.source.device();
        if stream.device() != device {
            return Err(self.stream_device_error(stream, "GraphExec::launch"));
        }
        if !device.is_current() {
            return device.with_current(|| self.launch(stream));
        }
        // Held until the launch is queued: no capture begins on `stream` after the check.
        let _gate = crate::capture_gate::enter_queue_on(stream, "GraphExec::launch")?;
        if crate::capture_gate::capture_possible(stream) && stream.is_capturing()? {
            // The captured launch would run with later launches of the captured graph, which
            // keep nothing of this exec alive and which its fences cannot see.
            return Err(CudaError::refused("GraphExec::launch", ExecRefusal::LaunchIntoCapture));
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

    /// The device the exec runs on: its graph's ([`GraphBuilder::device`](crate::GraphBuilder::device)).
    ///
    /// ```no_run
    /// use cuda_graph::graph::{Graph, HostLaunch};
    /// let exec = Graph::new()?.instantiate::<HostLaunch>(Default::default())?;
    /// assert_eq!(exec.device(), cuda_graph::Device::current()?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn device(&self) -> crate::Device {
        self.source.device()
    }

    fn expect_stream_device(&self, stream: &Stream, call: &'static str) -> Result<()> {
        if stream.device() == self.source.device() {
            Ok(())
        } else {
            Err(self.stream_device_error(stream, call))
        }
    }

    #[cold]
    fn stream_device_error(&self, stream: &Stream, call: &'static str) -> CudaError {
        CudaError::refused(
            call,
            Refusal::DevicesDiffer {
                pair: DevicePair::ExecAndStream,
                first: self.source.device().ordinal(),
                second: stream.device().ordinal(),
            },
        )
    }

    /// Lists the pinned allocations the exec's nodes may use (after instantiate, update, set),
    /// sorted by address and without repeats (the order launches lock them in).
    pub(in crate::graph) fn refresh_pinned(&mut self) {
        if !crate::memory::any_pinned_alive() {
            // None alive, so none among what the graphs and overrides keep (no lock taken).
            self.pinned.clear();
            return;
        }
        let mut pinned: Vec<Arc<PinnedAllocation>> = Vec::new();
        for core in &self.params_from {
            pinned.extend(core.state().keep_alive.iter().filter_map(as_pinned));
        }
        pinned.extend(self.overrides.values().flatten().filter_map(as_pinned));
        pinned.sort_by_key(Arc::as_ptr);
        pinned.dedup_by(|a, b| Arc::ptr_eq(a, b));
        self.pinned = pinned;
    }
}
