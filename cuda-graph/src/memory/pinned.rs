//! `PinnedBuffer<T>`: page-locked host memory, which copies to and from the device can use
//! asynchronously, and which tracks those copies so the host never touches it under one.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use crate::runtime as sys;

use crate::error::{check, CudaError, Result};
use crate::event::Event;
use crate::memory::pinned_slice::HostBorrow;
use crate::memory::{bytes_for, DeviceRepr, KeepAlive, PinnedSlice, PinnedSliceMut};
use crate::release::record_drop_error;
use crate::stream::Stream;

/// What queued device work does to a pinned allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeviceAccess {
    /// The device reads it (a copy to the device): host writes must wait.
    Reads,
    /// The device writes it (a copy from the device): host reads and writes must wait.
    Writes,
}

impl DeviceAccess {
    /// A copy between pinned memory and the device: its kind, and what it does to the pinned
    /// side (read when `to_device`, written otherwise).
    pub(crate) fn of_copy(to_device: bool) -> (sys::cudaMemcpyKind, DeviceAccess) {
        if to_device {
            (sys::cudaMemcpyKind::cudaMemcpyHostToDevice, DeviceAccess::Reads)
        } else {
            (sys::cudaMemcpyKind::cudaMemcpyDeviceToHost, DeviceAccess::Writes)
        }
    }
}

/// Device work that may still use the allocation: one event per queued operation.
#[derive(Default)]
struct Fences {
    pending: Vec<(Event, DeviceAccess)>,
    /// Set when queued work could not be fenced nor waited for: the host may never touch the
    /// memory again, and it is leaked rather than freed.
    poisoned: Option<CudaError>,
}

impl Fences {
    /// Records that the work queued on `stream` so far `access`es the allocation (see
    /// [`PinnedAllocation::fence_after`]).
    fn fence_after(&mut self, stream: &Stream, access: DeviceAccess) -> Result<()> {
        // Forget fences already passed, so the list stays as short as the work in flight.
        self.pending.retain(|(event, _)| !matches!(event.is_complete(), Ok(true)));
        match Event::fence(stream) {
            Ok(event) => {
                self.pending.push((event, access));
                Ok(())
            }
            Err(err) => {
                if let Err(sync_err) = stream.synchronize() {
                    self.poisoned = Some(sync_err);
                }
                Err(err)
            }
        }
    }
}

/// One `cudaMallocHost` allocation, freed (after the device work fenced on it has finished)
/// when the last owner is dropped: a [`PinnedBuffer`], or a graph node's [`KeepAlive`].
pub(crate) struct PinnedAllocation {
    /// Counts this allocation among those alive (see [`any_alive`]).
    _alive: AliveCount,
    ptr: *mut c_void,
    bytes: usize,
    fences: Mutex<Fences>,
    /// Host slices alive ([`PinnedSlice`], [`PinnedSliceMut`]): graph launches that use the
    /// allocation are refused meanwhile. Only raised with `fences` locked (after waiting for
    /// the fences), so a launch holding that lock sees every slice that could race it.
    host_borrows: AtomicUsize,
}

// SAFETY: the host memory is owned by this value; access to its contents is governed by the
// `PinnedBuffer` borrows, the host-borrow count and the fences, which are behind a mutex.
unsafe impl Send for PinnedAllocation {}
// SAFETY: as above; `&PinnedAllocation` exposes the address, the size, the atomic count and
// the locked fences.
unsafe impl Sync for PinnedAllocation {}

impl PinnedAllocation {
    fn new(bytes: usize, align: usize) -> Result<PinnedAllocation> {
        let mut ptr = ptr::null_mut();
        if bytes > 0 {
            // SAFETY: `ptr` is a valid out-pointer.
            check(unsafe { sys::cudaMallocHost(&mut ptr, bytes) }, "cudaMallocHost")?;
        }
        let allocation = PinnedAllocation {
            _alive: AliveCount::new(),
            ptr,
            bytes,
            fences: Mutex::default(),
            host_borrows: AtomicUsize::new(0),
        };
        if (ptr as usize) % align != 0 {
            return Err(CudaError::refused(
                "PinnedBuffer",
                crate::Refusal::MisalignedAllocation {
                    allocator: "cudaMallocHost",
                    address: ptr as usize,
                    align,
                },
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
        self.fences().fence_after(stream, access)
    }

    /// Waits for the fenced device work that conflicts with a host read (`DeviceAccess::Writes`
    /// only) or a host write (all of it), then counts a host borrow until the returned value
    /// is dropped. Inside a host function, where waiting could deadlock, it refuses instead of
    /// waiting for a launch or another thread's wait.
    pub(crate) fn borrow_for_host(&self, for_host_write: bool, call: &'static str) -> Result<HostBorrow<'_>> {
        let mut fences = if crate::release::in_host_fn() {
            match self.fences.try_lock() {
                Ok(fences) => fences,
                Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
                Err(TryLockError::WouldBlock) => {
                    return Err(CudaError::refused(call, crate::refusal::PinnedWait::AnotherThread))
                }
            }
        } else {
            self.fences()
        };
        if let Some(err) = &fences.poisoned {
            return Err(err.clone());
        }
        let conflicts = |access: DeviceAccess| for_host_write || access == DeviceAccess::Writes;
        if crate::release::in_host_fn() && fences.pending.iter().any(|(_, access)| conflicts(*access)) {
            return Err(CudaError::refused(call, crate::refusal::PinnedWait::DeviceCopy));
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
        // Raised under the lock: see `host_borrows`.
        self.host_borrows.fetch_add(1, Ordering::SeqCst);
        Ok(HostBorrow::new(self))
    }

    /// Ends a host borrow counted by [`borrow_for_host`](Self::borrow_for_host).
    pub(crate) fn end_host_borrow(&self) {
        self.host_borrows.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The pinned allocations one graph launch uses, locked from before the launch until it is
/// fenced: no host slice can be taken meanwhile, and none was alive when it was locked.
pub(crate) struct LaunchLock<'a> {
    locked: Vec<MutexGuard<'a, Fences>>,
}

impl<'a> LaunchLock<'a> {
    /// Locks `allocations` (sorted by address, so that two launches cannot deadlock; the host
    /// side never holds two of these locks), refusing, for `call`, one a host slice borrows.
    pub(crate) fn new(
        allocations: &'a [Arc<PinnedAllocation>], call: &'static str,
    ) -> Result<LaunchLock<'a>> {
        debug_assert!(allocations.windows(2).all(|pair| Arc::as_ptr(&pair[0]) < Arc::as_ptr(&pair[1])));
        let mut locked = Vec::with_capacity(allocations.len());
        for allocation in allocations.iter().filter(|allocation| allocation.bytes > 0) {
            let fences = allocation.fences();
            if allocation.host_borrows.load(Ordering::SeqCst) > 0 {
                return Err(CudaError::refused(
                    call,
                    crate::Refusal::PinnedBorrowed {
                        address: allocation.ptr as usize,
                        bytes: allocation.bytes,
                    },
                ));
            }
            locked.push(fences);
        }
        Ok(LaunchLock { locked })
    }

    /// Fences the launch just queued on `stream` on every allocation, as a write (the
    /// conservative choice), so that host access waits for it. Each is fenced (or closed to
    /// the host) even when an earlier one fails; the first error is returned.
    pub(crate) fn fence_after(mut self, stream: &Stream) -> Result<()> {
        let mut result = Ok(());
        for fences in &mut self.locked {
            let fenced = fences.fence_after(stream, DeviceAccess::Writes);
            result = result.and(fenced);
        }
        result
    }
}

impl Drop for PinnedAllocation {
    fn drop(&mut self) {
        if self.ptr.is_null() {
            return;
        }
        let fences = std::mem::take(self.fences.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()));
        if crate::release::in_host_fn() {
            // CUDA calls are not allowed inside a host function: free it on another thread.
            let ptr = std::mem::replace(&mut self.ptr, ptr::null_mut());
            let moved = PinnedAllocation {
                _alive: AliveCount::new(),
                ptr,
                bytes: self.bytes,
                fences: Mutex::new(fences),
                host_borrows: AtomicUsize::new(0),
            };
            crate::release::defer_drop(moved);
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

typed_buffer! {
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
    /// Graph memcpy nodes ([`GraphBuilder::add_memcpy_from_host`](crate::GraphBuilder::add_memcpy_from_host),
    /// [`add_memcpy_to_host`](crate::GraphBuilder::add_memcpy_to_host)) share the allocation
    /// instead of borrowing the buffer, so the borrow rules cannot keep slices away from their
    /// launches. The slices are therefore guards ([`PinnedSlice`], [`PinnedSliceMut`], which
    /// deref to `[T]`) that mark the buffer as borrowed by the host while they live: launching an
    /// exec whose nodes use the buffer then fails with `CudaError::InvalidArgument` (reason
    /// [`Refusal::PinnedBorrowed`](crate::Refusal::PinnedBorrowed): "pinned buffer … is borrowed
    /// by the host; drop the slice before launching") instead of racing the slice,
    /// and each launch that does go ahead leaves a fence that later slices wait for.
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
    pub struct PinnedBuffer over PinnedAllocation;
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
        let bytes = bytes_for::<T>(len, "PinnedBuffer")?;
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

    element_counts!("PinnedBuffer");

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
    ///
    /// While the returned guard lives, graph launches that use the buffer are refused (see
    /// "The host never touches it under a copy" above).
    pub fn as_slice(&self) -> Result<PinnedSlice<'_, T>> {
        let borrow = self.allocation.borrow_for_host(false, "PinnedBuffer::as_slice")?;
        // SAFETY: the allocation holds `len` initialized, aligned elements (any bit pattern
        // is a valid T); no queued copy or launch writes them (waited above), a new copy that
        // writes needs `&mut self`, and a new launch is refused while `borrow` lives. Zero
        // elements use a dangling, aligned pointer.
        let slice = unsafe { std::slice::from_raw_parts(self.element_ptr(), self.len) };
        Ok(PinnedSlice::new(slice, borrow))
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
    ///
    /// While the returned guard lives, graph launches that use the buffer are refused (see
    /// "The host never touches it under a copy" above).
    pub fn as_mut_slice(&mut self) -> Result<PinnedSliceMut<'_, T>> {
        let borrow = self.allocation.borrow_for_host(true, "PinnedBuffer::as_mut_slice")?;
        // SAFETY: as in `as_slice`; in addition no queued copy or launch reads the elements,
        // `&mut self` keeps new copies and other slices out, and `borrow` new launches, while
        // the slice lives.
        let slice = unsafe { std::slice::from_raw_parts_mut(self.element_ptr(), self.len) };
        Ok(PinnedSliceMut::new(slice, borrow))
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
    /// address must keep the host away from it until that work has finished (no fence or
    /// borrow check covers such work).
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

/// How many [`PinnedAllocation`]s are alive.
static ALIVE: AtomicUsize = AtomicUsize::new(0);

/// One count of [`ALIVE`], held by each allocation.
struct AliveCount;

impl AliveCount {
    fn new() -> AliveCount {
        ALIVE.fetch_add(1, Ordering::Relaxed);
        AliveCount
    }
}

impl Drop for AliveCount {
    fn drop(&mut self) {
        ALIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Whether any pinned allocation is alive: when not, no list of owners holds one (an owner
/// in a list is alive), so an exec's list of pinned memory is empty without looking. An
/// allocation added to a graph under its lock before the caller took that lock is counted in
/// what the caller reads after.
#[inline]
pub(crate) fn any_alive() -> bool {
    ALIVE.load(Ordering::Relaxed) != 0
}

/// For graph launches: `owner` as a pinned allocation ([`PinnedBuffer::keep_alive`]), if it
/// is one.
pub(crate) fn as_pinned(owner: &KeepAlive) -> Option<Arc<PinnedAllocation>> {
    owner.clone().downcast::<PinnedAllocation>().ok()
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
        assert!(any_alive(), "a live allocation is counted");
        drop(empty);
        drop(owner);
    }

    /// An allocation at a fake address, never freed (the test forgets it).
    fn fake_allocation(bytes: usize) -> Arc<PinnedAllocation> {
        Arc::new(PinnedAllocation {
            _alive: AliveCount::new(),
            ptr: 0x1000 as *mut c_void,
            bytes,
            fences: Mutex::default(),
            host_borrows: AtomicUsize::new(0),
        })
    }

    #[test]
    fn launches_are_refused_while_the_host_borrows_the_memory() {
        let (first, second) = (fake_allocation(16), fake_allocation(8));
        let mut both = [first.clone(), second.clone()];
        both.sort_by_key(Arc::as_ptr);
        let reading = second.borrow_for_host(false, "PinnedBuffer::as_slice").unwrap();
        let writing = second.borrow_for_host(true, "PinnedBuffer::as_mut_slice").unwrap();
        drop(reading);
        let err = LaunchLock::new(&both, "GraphExec::launch").err().unwrap();
        let borrowed = crate::Refusal::PinnedBorrowed { address: 0x1000, bytes: 8 };
        assert_eq!(err.refusal(), Some(&borrowed), "{err}");
        let text = err.to_string();
        assert!(
            text.starts_with("GraphExec::launch: pinned buffer at 0x1000 (8 bytes) is borrowed by the host; drop the slice before launching"),
            "{text}"
        );
        drop(writing);
        let locked = LaunchLock::new(&both, "GraphExec::launch").unwrap();
        assert_eq!(locked.locked.len(), 2);
        drop(locked);
        std::mem::forget((first, second, both));
    }

    #[test]
    fn a_pinned_buffer_is_shareable_between_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<PinnedBuffer<f32>>();
    }

    #[test]
    fn oversized_pinned_buffers_are_refused_before_cuda() {
        let err = PinnedBuffer::<u64>::zeroed(usize::MAX / 4).unwrap_err();
        let overflow = crate::refusal::Overflow::Elements { len: usize::MAX / 4, element_bytes: 8 };
        assert_eq!(err.refusal(), Some(&overflow.into()), "{err}");
    }
}
