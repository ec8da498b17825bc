//! Raw stream handles in and out: adopting a stream another library made
//! ([`Stream::from_raw`]), borrowing one for a while ([`Stream::borrow_raw`],
//! [`BorrowedStream`]), and handing one over ([`Stream::into_raw`]).

use std::mem::ManuallyDrop;

use crate::runtime as sys;

use super::Stream;
use crate::device::{note_in_use, Device};
use crate::error::{check, CudaError, Result};
use crate::release::borrowed_handle;

/// The handles that name a default stream rather than a stream of their own: the null
/// stream, `cudaStreamLegacy` (1) and `cudaStreamPerThread` (2). They can be borrowed, never
/// destroyed.
fn is_default_stream(raw: sys::cudaStream_t) -> bool {
    (raw as usize) <= 2
}

/// Whether `raw` was created non-blocking (`cudaStreamGetFlags`).
///
/// # Safety
/// `raw` is a live stream, or one of the default-stream handles.
unsafe fn created_non_blocking(raw: sys::cudaStream_t) -> Result<bool> {
    let mut flags = 0u32;
    // SAFETY: the caller promises a live stream handle; `flags` is a writable u32.
    check(unsafe { sys::cudaStreamGetFlags(raw, &mut flags) }, "cudaStreamGetFlags")?;
    Ok(flags & sys::cudaStreamNonBlocking != 0)
}

/// The device `raw` belongs to (`cudaStreamGetDevice`; a default-stream handle names the
/// current device's).
///
/// # Safety
/// `raw` must be a live stream or a default-stream handle.
unsafe fn device_of(raw: sys::cudaStream_t) -> Result<Device> {
    let mut ordinal = 0;
    // SAFETY: the caller promises a live stream or a default-stream handle; `ordinal` is a
    // writable int.
    check(unsafe { sys::cudaStreamGetDevice(raw, &mut ordinal) }, "cudaStreamGetDevice")?;
    let device = Device::from_ordinal(ordinal);
    note_in_use(device);
    Ok(device)
}

impl Stream {
    /// Takes ownership of a stream made by calls this crate does not wrap (another library's,
    /// say): the returned `Stream` destroys it on drop. Whether it is non-blocking is read
    /// from CUDA (`cudaStreamGetFlags`), so the crate orders frees after its work as it does
    /// for its own streams. The default-stream handles (null, `cudaStreamLegacy`,
    /// `cudaStreamPerThread`) cannot be owned: borrow them ([`Stream::borrow_raw`]).
    ///
    /// # Safety
    /// `raw` must be a live stream (`cudaStreamCreate*`, or the driver's `cuStreamCreate*`) of
    /// a device's primary context (the context the runtime uses), which nothing else
    /// destroys, and on which no other thread begins a capture while this crate queues work
    /// on it (captures begun before a call are seen and its work refused; see
    /// [`Stream::borrow_raw`]): ownership passes to the returned value. Work is queued on it only while its
    /// device is current (CUDA refuses kernels on another device's stream).
    ///
    /// ```no_run
    /// use cuda_graph::{sys, Stream};
    /// let mut raw = std::ptr::null_mut();
    /// // SAFETY: `raw` is a valid out-pointer.
    /// assert_eq!(unsafe { sys::cudaStreamCreate(&mut raw) }, sys::cudaError::cudaSuccess);
    /// // SAFETY: a live stream of the current device, owned by nothing else.
    /// let stream = unsafe { Stream::from_raw(raw) }?;
    /// stream.synchronize()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn from_raw(raw: sys::cudaStream_t) -> Result<Stream> {
        if is_default_stream(raw) {
            return Err(CudaError::refused(
                "Stream::from_raw",
                crate::Refusal::DefaultStreamNotOwnable { handle: raw as usize },
            ));
        }
        // SAFETY: the caller promises a live stream.
        let non_blocking = unsafe { created_non_blocking(raw) }?;
        // SAFETY: as above.
        let device = unsafe { device_of(raw) }?;
        Ok(Stream::foreign(raw, non_blocking, device))
    }

    /// Borrows a stream this crate does not own, for as long as `'a`: the returned value
    /// derefs to a [`Stream`] that every call of this crate takes (launches, copies, capture,
    /// events) and does not destroy the stream when dropped. The default-stream handles
    /// (null, `cudaStreamLegacy`, `cudaStreamPerThread`) may be borrowed.
    ///
    /// Prefer a borrow whose lifetime the compiler ties to the owner where there is one (the
    /// `cudarc` feature's `Stream::borrow_cudarc`); `'a` here is whatever the caller picks.
    ///
    /// Other code may capture the stream: every call of this crate that queues work on the
    /// borrow asks CUDA whether it captures, and refuses while it captures into a graph this
    /// crate did not begin. A default-stream handle names the default stream of whichever
    /// context is current: the borrow takes it as the current device's, and every call on it
    /// makes that device's primary context current first.
    ///
    /// # Safety
    /// `raw` must be a stream of a device's primary context (or a default-stream handle) that
    /// stays alive, not destroyed by its owner, for all of `'a`; and while the borrow lives,
    /// no other thread begins a capture on it (one begun between the crate's look and its
    /// CUDA call could not be seen, and would record the work without keeping its memory).
    ///
    /// ```no_run
    /// use cuda_graph::Stream;
    /// let owner = Stream::new()?;
    /// // SAFETY: `owner` outlives the borrow, which ends at the end of this scope.
    /// let borrowed = unsafe { Stream::borrow_raw(owner.as_raw()) }?;
    /// borrowed.synchronize()?;
    /// drop(borrowed); // the stream is not destroyed
    /// owner.synchronize()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn borrow_raw<'a>(raw: sys::cudaStream_t) -> Result<BorrowedStream<'a>> {
        // SAFETY: the caller promises a live stream or a default-stream handle.
        let non_blocking = unsafe { created_non_blocking(raw) }?;
        // SAFETY: as above.
        let device = unsafe { device_of(raw) }?;
        Ok(BorrowedStream::new(Stream::foreign(raw, non_blocking, device)))
    }

    /// Hands the stream over: returns the raw handle without destroying it. The caller owns
    /// it from now on (destroy it with `cudaStreamDestroy`, or give it to another library).
    ///
    /// ```no_run
    /// use cuda_graph::{sys, Stream};
    /// let raw = Stream::new()?.into_raw();
    /// // SAFETY: `raw` is a live stream that nothing else owns any more.
    /// assert_eq!(unsafe { sys::cudaStreamDestroy(raw) }, sys::cudaError::cudaSuccess);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn into_raw(self) -> sys::cudaStream_t {
        ManuallyDrop::new(self).raw
    }
}

borrowed_handle! {
    /// A stream this crate uses but does not own ([`Stream::borrow_raw`]): it derefs to
    /// [`Stream`], and dropping it leaves the stream alone.
    ///
    /// ```no_run
    /// use cuda_graph::{BorrowedStream, Stream};
    /// fn sync(stream: &Stream) -> cuda_graph::Result<()> {
    ///     stream.synchronize()
    /// }
    /// let owner = Stream::new()?;
    /// // SAFETY: `owner` outlives the borrow.
    /// let borrowed: BorrowedStream<'_> = unsafe { Stream::borrow_raw(owner.as_raw()) }?;
    /// sync(&borrowed)?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    BorrowedStream(Stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_stream_handles_are_recognized() {
        assert!(is_default_stream(std::ptr::null_mut()));
        assert!(is_default_stream(2 as sys::cudaStream_t));
        assert!(!is_default_stream(0x1000 as sys::cudaStream_t));
    }

    #[test]
    fn default_streams_cannot_be_owned() {
        // SAFETY: refused before any CUDA call.
        let err = unsafe { Stream::from_raw(1 as sys::cudaStream_t) }.unwrap_err();
        assert_eq!(err.refusal(), Some(&crate::Refusal::DefaultStreamNotOwnable { handle: 1 }), "{err}");
        assert!(err.to_string().starts_with("Stream::from_raw: 0x1 names a default stream"), "{err}");
    }

    #[test]
    fn borrowed_streams_can_be_shared_between_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<BorrowedStream<'static>>();
    }
}
