//! `PinnedBuffer<T>`: page-locked host memory, which copies to and from the device can use
//! asynchronously, and which tracks those copies so the host never touches it under one.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};
use std::sync::{Arc, Mutex, MutexGuard};

use cudart_graph_sys as sys;

use crate::error::{check, record_drop_error, CudaError, Result};
use crate::event::Event;
use crate::memory::{DeviceRepr, KeepAlive};
use crate::stream::Stream;

/// What queued device work does to a pinned allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeviceAccess {
    /// The device reads it (a copy to the device): host writes must wait.
    Reads,
    /// The device writes it (a copy from the device): host reads and writes must wait.
    Writes,
}

/// Device work that may still use the allocation: one event per queued operation.
#[derive(Default)]
struct Fences {
    pending: Vec<(Event, DeviceAccess)>,
    /// Set when queued work could not be fenced nor waited for: the host may never touch the
    /// memory again, and it is leaked rather than freed.
    poisoned: Option<CudaError>,
}

/// One `cudaMallocHost` allocation, freed (after the device work fenced on it has finished)
/// when the last owner is dropped: a [`PinnedBuffer`], or a graph node's [`KeepAlive`].
pub(crate) struct PinnedAllocation {
    ptr: *mut c_void,
    bytes: usize,
    fences: Mutex<Fences>,
}

// SAFETY: the host memory is owned by this value; access to its contents is governed by the
// `PinnedBuffer` borrows and the fences, which are behind a mutex.
unsafe impl Send for PinnedAllocation {}
// SAFETY: as above; `&PinnedAllocation` exposes the address, the size and the locked fences.
unsafe impl Sync for PinnedAllocation {}

impl PinnedAllocation {
    fn new(bytes: usize, align: usize) -> Result<PinnedAllocation> {
        let mut ptr = ptr::null_mut();
        if bytes > 0 {
            // SAFETY: `ptr` is a valid out-pointer.
            check(unsafe { sys::cudaMallocHost(&mut ptr, bytes) }, "cudaMallocHost")?;
        }
        let allocation = PinnedAllocation { ptr, bytes, fences: Mutex::default() };
        if (ptr as usize) % align != 0 {
            return Err(CudaError::invalid(
                "PinnedBuffer",
                format!("cudaMallocHost returned {ptr:p}, not aligned to {align} bytes"),
            ));
        }
        Ok(allocation)
    }

    fn fences(&self) -> MutexGuard<'_, Fences> {
        self.fences.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records that the work queued on `stream` so far `access`es this memory, so that host
    /// access waits for it. Call it right after queuing that work. If no fence can be set, the
    /// stream is synchronized instead; if that fails too, the memory is closed to the host
    /// for good. Either way the first error is returned.
    pub(crate) fn fence_after(&self, stream: &Stream, access: DeviceAccess) -> Result<()> {
        if self.bytes == 0 {
            return Ok(());
        }
        let mut fences = self.fences();
        // Forget fences already passed, so the list stays as short as the work in flight.
        fences.pending.retain(|(event, _)| !matches!(event.is_complete(), Ok(true)));
        match Event::fence(stream) {
            Ok(event) => {
                fences.pending.push((event, access));
                Ok(())
            }
            Err(err) => {
                if let Err(sync_err) = stream.synchronize() {
                    fences.poisoned = Some(sync_err);
                }
                Err(err)
            }
        }
    }

    /// Waits for the fenced device work that conflicts with a host read (`DeviceAccess::Writes`
    /// only) or a host write (all of it).
    fn wait(&self, for_host_write: bool, call: &'static str) -> Result<()> {
        let mut fences = self.fences();
        if let Some(err) = &fences.poisoned {
            return Err(err.clone());
        }
        let conflicts = |access: DeviceAccess| for_host_write || access == DeviceAccess::Writes;
        if crate::host_fn::in_host_fn() && fences.pending.iter().any(|(_, access)| conflicts(*access)) {
            return Err(CudaError::invalid(
                call,
                "a device copy may still use this pinned buffer, and a host function cannot wait for it",
            ));
        }
        let mut index = 0;
        while index < fences.pending.len() {
            let (event, access) = &fences.pending[index];
            if conflicts(*access) {
                event.synchronize()?;
                fences.pending.swap_remove(index);
            } else {
                index += 1;
            }
        }
        Ok(())
    }
}

impl Drop for PinnedAllocation {
    fn drop(&mut self) {
        if self.ptr.is_null() {
            return;
        }
        let fences = std::mem::take(self.fences.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()));
        if crate::host_fn::in_host_fn() {
            // CUDA calls are not allowed inside a host function: free it on another thread.
            let ptr = std::mem::replace(&mut self.ptr, ptr::null_mut());
            let moved = PinnedAllocation { ptr, bytes: self.bytes, fences: Mutex::new(fences) };
            crate::host_fn::defer_drop(moved);
            return;
        }
        if fences.poisoned.is_some() {
            return; // the error went to the caller then; leak what may still be in use
        }
        for (event, _) in &fences.pending {
            // SAFETY: the event is alive (owned by `fences`).
            let status = unsafe { sys::cudaEventSynchronize(event.as_raw()) };
            if status != sys::cudaError::cudaSuccess {
                // A copy may still use the memory: leak it rather than free it under the copy.
                record_drop_error(status, "cudaEventSynchronize");
                return;
            }
        }
        // SAFETY: the pointer came from cudaMallocHost, is freed once, and no fenced device
        // work uses it any more.
        record_drop_error(unsafe { sys::cudaFreeHost(self.ptr) }, "cudaFreeHost");
    }
}

/// `len` values of `T` in page-locked ("pinned") host memory (`cudaMallocHost`), the host
/// side of asynchronous copies ([`DeviceBuffer::copy_from_pinned_async`](crate::DeviceBuffer::copy_from_pinned_async),
/// [`copy_to_pinned_async`](crate::DeviceBuffer::copy_to_pinned_async)).
///
/// # The host never touches it under a copy
/// Each asynchronous copy leaves a fence (an event) on the buffer. [`as_slice`](Self::as_slice)
/// waits for the copies that write into the buffer, [`as_mut_slice`](Self::as_mut_slice)
/// for all of them, and dropping the buffer waits for all of them before `cudaFreeHost`.
/// So the contents are reached only through those calls (they return `Result`, which is why
/// there is no `Deref` to `[T]`), and the borrow rules do the rest: a copy that writes takes
/// `&mut self`, so no slice can be alive while it is queued.
///
/// Graph memcpy nodes share the allocation through [`keep_alive`](Self::keep_alive); the
/// graph code fences each launch the same way.
///
/// ```no_run
/// use cuda_graph::{DeviceBuffer, PinnedBuffer, Stream};
/// let stream = Stream::new()?;
/// let staging = PinnedBuffer::from_slice(&[1.5f32, 2.5, 3.5])?;
/// let mut device = DeviceBuffer::<f32>::zeroed(3)?;
/// device.copy_from_pinned_async(&staging, &stream)?;
/// let mut back = PinnedBuffer::<f32>::zeroed(3)?;
/// device.copy_to_pinned_async(&mut back, &stream)?;
/// assert_eq!(back.as_slice()?, [1.5, 2.5, 3.5]); // waits for the copy, not the stream
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct PinnedBuffer<T: DeviceRepr> {
    allocation: Arc<PinnedAllocation>,
    len: usize,
    _element: PhantomData<T>,
}

impl<T: DeviceRepr> fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinnedBuffer").field("ptr", &self.allocation.ptr).field("len", &self.len).finish()
    }
}

impl<T: DeviceRepr> PinnedBuffer<T> {
    /// `len` zeroed elements (`cudaMallocHost`; zero elements allocate nothing).
    ///
    /// ```no_run
    /// let buffer = cuda_graph::PinnedBuffer::<u64>::zeroed(4)?;
    /// assert_eq!(buffer.as_slice()?, [0, 0, 0, 0]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn zeroed(len: usize) -> Result<PinnedBuffer<T>> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or_else(|| {
            CudaError::invalid(
                "PinnedBuffer",
                format!("{len} elements of {} bytes overflow usize", size_of::<T>()),
            )
        })?;
        let allocation = PinnedAllocation::new(bytes, align_of::<T>())?;
        if bytes > 0 {
            // SAFETY: the allocation holds `bytes` writable bytes that nothing else uses yet.
            unsafe { ptr::write_bytes(allocation.ptr.cast::<u8>(), 0, bytes) };
        }
        Ok(PinnedBuffer { allocation: Arc::new(allocation), len, _element: PhantomData })
    }

    /// A pinned copy of `data`.
    ///
    /// ```no_run
    /// let buffer = cuda_graph::PinnedBuffer::from_slice(&[7u32, 8, 9])?;
    /// assert_eq!(buffer.len(), 3);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn from_slice(data: &[T]) -> Result<PinnedBuffer<T>> {
        let mut buffer = PinnedBuffer::zeroed(data.len())?;
        buffer.as_mut_slice()?.copy_from_slice(data);
        Ok(buffer)
    }

    /// Number of elements.
    ///
    /// ```no_run
    /// assert_eq!(cuda_graph::PinnedBuffer::<u8>::zeroed(10)?.len(), 10);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the buffer has no elements.
    ///
    /// ```
    /// assert!(cuda_graph::PinnedBuffer::<u8>::zeroed(0)?.is_empty());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    ///
    /// ```no_run
    /// assert_eq!(cuda_graph::PinnedBuffer::<u32>::zeroed(10)?.bytes(), 40);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn bytes(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// The contents, once the asynchronous copies that write into the buffer have finished
    /// (waits for them; `cudaEventSynchronize`). Copies that only read it may go on.
    ///
    /// Fails if waiting fails, or inside a host function when a copy may still be running.
    ///
    /// ```no_run
    /// let buffer = cuda_graph::PinnedBuffer::from_slice(&[1u16, 2])?;
    /// assert_eq!(buffer.as_slice()?, [1, 2]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn as_slice(&self) -> Result<&[T]> {
        self.allocation.wait(false, "PinnedBuffer::as_slice")?;
        // SAFETY: the allocation holds `len` initialized, aligned elements (any bit pattern
        // is a valid T); no queued copy writes them (waited above, and a new one needs
        // `&mut self`). Zero elements use a dangling, aligned pointer.
        Ok(unsafe { std::slice::from_raw_parts(self.element_ptr(), self.len) })
    }

    /// The contents, writable, once every asynchronous copy that uses the buffer has
    /// finished (waits for them; `cudaEventSynchronize`).
    ///
    /// Fails if waiting fails, or inside a host function when a copy may still be running.
    ///
    /// ```no_run
    /// let mut buffer = cuda_graph::PinnedBuffer::<i32>::zeroed(3)?;
    /// buffer.as_mut_slice()?.copy_from_slice(&[-1, 0, 1]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.allocation.wait(true, "PinnedBuffer::as_mut_slice")?;
        // SAFETY: as in `as_slice`; in addition no queued copy reads the elements, and
        // `&mut self` keeps new copies out while the slice lives.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.element_ptr(), self.len) })
    }

    /// The contents as a `Vec` (waits like [`as_slice`](Self::as_slice)).
    ///
    /// ```no_run
    /// let buffer = cuda_graph::PinnedBuffer::from_slice(&[3u8, 4])?;
    /// assert_eq!(buffer.to_vec()?, vec![3, 4]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn to_vec(&self) -> Result<Vec<T>> {
        Ok(self.as_slice()?.to_vec())
    }

    /// The raw host address (null for zero elements), for calls this crate does not wrap.
    /// The buffer still owns the memory; whoever queues device work on it through this
    /// address must keep the host away from it until that work has finished.
    ///
    /// ```no_run
    /// let buffer = cuda_graph::PinnedBuffer::<u8>::zeroed(16)?;
    /// assert!(!buffer.as_raw().is_null());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn as_raw(&self) -> *mut c_void {
        self.allocation.ptr
    }

    /// The owner handle that graphs keep to hold this memory alive (see the crate docs,
    /// "Ownership"): the memory is freed when the buffer and every such handle are gone.
    ///
    /// ```no_run
    /// let buffer = cuda_graph::PinnedBuffer::<u8>::zeroed(16)?;
    /// let owner = buffer.keep_alive();
    /// drop(buffer); // the memory stays until `owner` is dropped too
    /// drop(owner);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn keep_alive(&self) -> KeepAlive {
        self.allocation.clone()
    }

    /// Fences the work just queued on `stream`, which `access`es this buffer.
    pub(crate) fn fence_after(&self, stream: &Stream, access: DeviceAccess) -> Result<()> {
        self.allocation.fence_after(stream, access)
    }

    fn element_ptr(&self) -> *mut T {
        if self.len == 0 || size_of::<T>() == 0 {
            NonNull::dangling().as_ptr()
        } else {
            self.allocation.ptr.cast()
        }
    }
}

/// For graph launches: if `owner` is a pinned allocation ([`PinnedBuffer::keep_alive`]),
/// fences the work just queued on `stream` on it as a write (the conservative choice), so the
/// buffer's host access waits for that launch. Other owners are left alone.
#[allow(dead_code)] // for the graph launch code
pub(crate) fn fence_keep_alive(owner: &KeepAlive, stream: &Stream) -> Result<()> {
    match owner.downcast_ref::<PinnedAllocation>() {
        Some(pinned) => pinned.fence_after(stream, DeviceAccess::Writes),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_pinned_buffer_needs_no_cuda() {
        let mut empty = PinnedBuffer::<u64>::zeroed(0).unwrap();
        assert!(empty.is_empty());
        assert_eq!(empty.bytes(), 0);
        assert!(empty.as_raw().is_null());
        assert_eq!(empty.as_slice().unwrap(), &[] as &[u64]);
        assert_eq!(empty.as_mut_slice().unwrap(), &mut [] as &mut [u64]);
        let owner = empty.keep_alive();
        assert!(owner.downcast_ref::<PinnedAllocation>().is_some());
        drop(empty);
        drop(owner);
    }

    #[test]
    fn a_pinned_buffer_is_shareable_between_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<PinnedBuffer<f32>>();
    }

    #[test]
    fn oversized_pinned_buffers_are_refused_before_cuda() {
        let err = PinnedBuffer::<u64>::zeroed(usize::MAX / 4).unwrap_err();
        assert!(matches!(err, CudaError::InvalidArgument { .. }), "{err}");
    }
}
