//! Lending one of this crate's buffers to cudarc for a while ([`DeviceBuffer::lend_to_cudarc`]).

use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::Arc;

use crate::runtime as sys;
use ::cudarc::driver::{CudaSlice, CudaStream, CudaViewMut};

use super::primary_device;
use crate::error::{check, CudaError, Result};
use crate::memory::{DeviceBuffer, DeviceRepr};

/// One of this crate's buffers seen by cudarc as a [`CudaSlice`] on a cudarc stream, while
/// the buffer is borrowed ([`DeviceBuffer::lend_to_cudarc`]). It derefs to the `CudaSlice`
/// for cudarc's reading calls; [`view_mut`](LentSlice::view_mut) gives a `CudaViewMut` for
/// writing ones. Dropping it gives nothing back to free: the buffer still owns the memory
/// (cudarc's `CudaSlice::leak` releases only cudarc's bookkeeping).
pub struct LentSlice<'a, T: DeviceRepr> {
    slice: ManuallyDrop<CudaSlice<T>>,
    _buffer: PhantomData<&'a [T]>,
}

impl<T: DeviceRepr> Deref for LentSlice<'_, T> {
    type Target = CudaSlice<T>;

    fn deref(&self) -> &CudaSlice<T> {
        &self.slice
    }
}

impl<T: DeviceRepr> LentSlice<'_, T> {
    /// A mutable cudarc view of the whole buffer, for cudarc's writing calls
    /// (`memcpy_htod`, `memset_zeros`, kernel arguments it writes).
    pub fn view_mut(&mut self) -> CudaViewMut<'_, T> {
        self.slice.as_view_mut()
    }
}

impl<T: DeviceRepr> Drop for LentSlice<'_, T> {
    fn drop(&mut self) {
        // SAFETY: taken once, here; the field is never used again.
        let slice = unsafe { ManuallyDrop::take(&mut self.slice) };
        // Inside a host function no CUDA call is allowed, and leaking the slice may make
        // cudarc wait on its events (`cuStreamWaitEvent`): done on another thread then.
        drop(crate::release::drop_outside_host_fn(Leaker(Some(slice))));
    }
}

/// A lent slice whose drop releases cudarc's bookkeeping, never the memory (the buffer owns
/// it): `CudaSlice::leak`, after which cudarc first makes its stream wait for the uses it
/// tracked.
struct Leaker<T>(Option<CudaSlice<T>>);

impl<T> Drop for Leaker<T> {
    fn drop(&mut self) {
        if let Some(slice) = self.0.take() {
            let _address = slice.leak();
        }
    }
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Shows this buffer to cudarc as a [`CudaSlice`] on `stream` for as long as the returned
    /// value lives (it borrows the buffer, which cannot be dropped meanwhile). cudarc's calls
    /// on it may queue on any of cudarc's streams, and run after the lend ends: the buffer's
    /// memory is marked as used by other code, so that its eventual free waits for every
    /// device with an active context (`cudaDeviceSynchronize` in each primary context). That
    /// work and this crate's are ordered only by the streams they share; a race gives wrong
    /// values, never undefined behaviour ([`DeviceRepr`]). `stream` must be of the primary
    /// context of the buffer's device.
    ///
    /// # Safety
    /// cudarc's safe API keeps nothing alive for its own captures, and lets any stream use the
    /// slice, of any context: what the crate waits for cannot cover all of it. So every piece
    /// of cudarc work that uses the slice completes before the buffer is dropped: work on
    /// streams of non-primary contexts (`CudaContext::new_non_primary`, which the crate's waits
    /// do not reach) is waited for by the caller, and a cudarc graph that captured work on the
    /// slice (`CudaStream::begin_capture`) is not launched after the buffer is dropped.
    ///
    /// ```no_run
    /// use cudarc::driver::CudaContext;
    /// let ctx = CudaContext::new(0).expect("cudarc context");
    /// let stream = ctx.default_stream();
    /// let buffer = cuda_graph::DeviceBuffer::from_slice(&[1u32, 2, 3])?;
    /// // SAFETY: cudarc's only use, the copy below, is synchronous; nothing captures the slice.
    /// let lent = unsafe { buffer.lend_to_cudarc(&stream) }?;
    /// let host = stream.clone_dtoh(&*lent).expect("cudarc copy");
    /// assert_eq!(host, [1, 2, 3]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn lend_to_cudarc(&self, stream: &Arc<CudaStream>) -> Result<LentSlice<'_, T>> {
        const CALL: &str = "DeviceBuffer::lend_to_cudarc";
        let device = primary_device(stream.context(), CALL)?;
        if self.bytes() > 0 {
            let mut attributes = sys::cudaPointerAttributes::default();
            check(
                // SAFETY: `attributes` is writable; CUDA only looks the address up.
                unsafe { sys::cudaPointerGetAttributes(&mut attributes, self.as_raw()) },
                "cudaPointerGetAttributes",
            )?;
            if attributes.device != device.ordinal() {
                return Err(CudaError::refused(
                    CALL,
                    crate::Refusal::DevicesDiffer {
                        pair: crate::refusal::DevicePair::BufferAndCudarcStream,
                        first: attributes.device,
                        second: device.ordinal(),
                    },
                ));
            }
        }
        // cudarc may use the slice on any of its streams, of any device (its event tracking
        // is off for streams it wraps): the free waits for every device (see
        // `Allocation::note_use_by_other_code`), not only for `stream`'s ordering.
        self.note_use_by_other_code();
        // SAFETY: the address is the buffer's live allocation of `len` elements on the
        // stream's device (checked), which outlives the returned value (it borrows the
        // buffer); any bit pattern is a valid `T` (`DeviceRepr`). The slice is never dropped
        // as a `CudaSlice` (which would free it): `LentSlice::drop` leaks it.
        let slice = unsafe { stream.upgrade_device_ptr::<T>(self.as_raw() as u64, self.len()) };
        Ok(LentSlice { slice: ManuallyDrop::new(slice), _buffer: PhantomData })
    }
}
