//! Streams both ways: a cudarc stream borrowed as a [`Stream`], one of ours handed to cudarc.

use std::sync::Arc;

use crate::runtime as sys;
use ::cudarc::driver::{CudaContext, CudaStream};

use super::primary_device;
use crate::error::{check, CudaError, Result};
use crate::stream::{BorrowedStream, Stream};

impl Stream {
    /// Uses a cudarc stream as a [`Stream`] for as long as it is borrowed: launches, copies,
    /// graph launches and captures of this crate queue on it, in order with cudarc's own work
    /// there. Dropping the borrow leaves the stream to cudarc. Refused for a stream of a
    /// non-primary cudarc context (see the [module docs](crate::interop::cudarc)).
    ///
    /// cudarc may capture the stream itself (`CudaStream::begin_capture`): work of this crate
    /// queued on the borrowed stream asks CUDA each time whether it captures, and is refused
    /// while it captures into a graph this crate did not begin (that graph would not keep the
    /// work's memory alive). Capture with [`Stream::begin_capture`] or
    /// [`capture_cudarc`](super::capture_cudarc) instead.
    ///
    /// cudarc's default stream (`CudaContext::default_stream`) is the null handle, the
    /// default stream of whichever context is current: every call of this crate on the borrow
    /// makes the cudarc context's device current first.
    ///
    /// Ordering with cudarc's event tracking is not automatic: work of this crate on the
    /// stream records no cudarc events, so a `CudaSlice` used by it and by cudarc on other
    /// streams is ordered only by the stream (use [`CudarcSlice`](super::CudarcSlice) for
    /// memory this crate's kernels use).
    ///
    /// # Safety
    /// While the borrow lives, no other thread begins a capture on the cudarc stream
    /// (`CudaStream::begin_capture`, or raw calls on its handle). A capture begun on this
    /// thread, or before the call that queues work, is seen and that work refused; one begun
    /// on another thread between the crate's look and its CUDA call cannot be seen (cudarc
    /// takes no lock of this crate), and would record the work without keeping its memory.
    ///
    /// ```no_run
    /// use cudarc::driver::CudaContext;
    /// use cuda_graph::Stream;
    /// let ctx = CudaContext::new(0).expect("cudarc context");
    /// let cudarc_stream = ctx.new_stream().expect("cudarc stream");
    /// // SAFETY: no other thread captures `cudarc_stream` while it is borrowed.
    /// let stream = unsafe { Stream::borrow_cudarc(&cudarc_stream) }?;
    /// stream.synchronize()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn borrow_cudarc(stream: &CudaStream) -> Result<BorrowedStream<'_>> {
        let device = primary_device(stream.context(), "Stream::borrow_cudarc")?;
        // Read with the context's device current: cudarc's default stream is the null handle,
        // which names the default stream of whichever context is current, and this crate
        // then binds that device for every call on it (see `Stream::make_current`).
        device.with_current(|| {
            // SAFETY: the stream belongs to a primary context (checked), and cudarc keeps it
            // alive for as long as `stream` is borrowed, which the returned value's lifetime
            // is tied to; no other thread captures it meanwhile (the caller's promise).
            unsafe { Stream::borrow_raw(stream.cu_stream() as sys::cudaStream_t) }
        })
    }

    /// Hands this stream to cudarc, for good: cudarc queues on it as on its own streams. The
    /// CUDA stream is never destroyed (cudarc 0.19.10 can wrap a stream it did not create
    /// only as borrowed), so call this for long-lived streams. `ctx` must be the primary
    /// context of the stream's device.
    ///
    /// ```no_run
    /// use cudarc::driver::CudaContext;
    /// let ctx = CudaContext::new(0).expect("cudarc context");
    /// let stream = cuda_graph::Stream::new()?.into_cudarc(&ctx)?;
    /// let zeros = stream.alloc_zeros::<u32>(16).expect("cudarc allocation");
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn into_cudarc(self, ctx: &Arc<CudaContext>) -> Result<Arc<CudaStream>> {
        self.check_context(ctx, "Stream::into_cudarc")?;
        let raw = self.into_raw();
        // SAFETY: `raw` is a live stream of `ctx`'s device's primary context (checked), never
        // destroyed from now on (handed out by `into_raw`, and cudarc does not own it).
        Ok(unsafe { ctx.wrap_borrowed_stream(raw as ::cudarc::driver::sys::CUstream) })
    }

    /// Shows this stream to cudarc without handing it over: the returned cudarc stream (and
    /// whatever cudarc makes that keeps it, such as slices allocated on it) wraps this
    /// stream's handle without owning it.
    ///
    /// cudarc may begin a capture on it (`CudaStream::begin_capture`, a safe call), so from
    /// now on work of this crate queued on this stream asks CUDA whether it captures, and is
    /// refused while it captures into a graph this crate did not begin (one
    /// `cudaStreamGetCaptureInfo` per launch; the crate's other streams keep the cheap check).
    ///
    /// # Safety
    /// The returned stream, and everything cudarc makes from it that retains it (a
    /// `CudaSlice` allocated on it frees on it), must be dropped before this `Stream`; and no
    /// thread begins a capture on it through cudarc while another thread queues work of this
    /// crate on this `Stream` (a capture begun before a call is seen and its work refused).
    ///
    /// ```no_run
    /// use cudarc::driver::CudaContext;
    /// let ctx = CudaContext::new(0).expect("cudarc context");
    /// let stream = cuda_graph::Stream::new()?;
    /// // SAFETY: `view` and the slice it allocates are dropped before `stream`.
    /// let view = unsafe { stream.to_cudarc(&ctx) }?;
    /// let zeros = view.alloc_zeros::<u32>(16).expect("cudarc allocation");
    /// drop((zeros, view));
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn to_cudarc(&self, ctx: &Arc<CudaContext>) -> Result<Arc<CudaStream>> {
        self.check_context(ctx, "Stream::to_cudarc")?;
        crate::capture_gate::note_foreign_capture_possible(self);
        // SAFETY: the stream is of `ctx`'s device's primary context (checked); the caller
        // promises that cudarc's wrapper, and all that keeps it, is gone before this stream.
        Ok(unsafe { ctx.wrap_borrowed_stream(self.as_raw() as ::cudarc::driver::sys::CUstream) })
    }

    /// Refuses `ctx` unless it is the primary context of this stream's device.
    fn check_context(&self, ctx: &CudaContext, call: &'static str) -> Result<()> {
        let device = primary_device(ctx, call)?;
        let mut ordinal = -1;
        // SAFETY: the stream is alive; `ordinal` is a valid, writable int.
        check(unsafe { sys::cudaStreamGetDevice(self.as_raw(), &mut ordinal) }, "cudaStreamGetDevice")?;
        if ordinal != device.ordinal() {
            return Err(CudaError::refused(
                call,
                crate::Refusal::DevicesDiffer {
                    pair: crate::refusal::DevicePair::StreamAndCudarcContext,
                    first: ordinal,
                    second: device.ordinal(),
                },
            ));
        }
        Ok(())
    }
}
