//! `DeviceBuffer<T>`: an owned device allocation; `DevicePtr<T>`: a typed address into one.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::runtime as sys;

use crate::device::{note_in_use, Device};
use crate::error::{check, CudaError, Result};
use crate::memory::free::{device_idle, devices_idle, free_stream_ordered, on_device, EVERY_DEVICE};
use crate::memory::{DeviceRepr, KeepAlive};
use crate::refusal::Bounds;
use crate::release::{deferred_in_host_fn, record_drop_error};
use crate::stream::Stream;

mod pitched;
mod raw;

/// One device allocation, freed when the last owner (buffer, pointer, graph or exec that uses
/// it) is dropped. How it is freed depends on how it was made ([`FreeKind`]); either way the
/// free is ordered after all work that was queued using it (see [`Allocation`]'s `Drop`).
pub(crate) struct Allocation {
    ptr: *mut c_void,
    bytes: usize,
    free: FreeKind,
    /// Set when work on a non-blocking stream used this memory ([`note_unordered_uses`]):
    /// a free queued on the legacy default stream would not be ordered after that work.
    unordered_use: AtomicBool,
    /// Devices other than its own whose streams queued work on this memory (bit = ordinal;
    /// bit 63 stands for 63 and above): the drop waits for each before freeing, since
    /// nothing on the memory's own device is ordered after their work.
    foreign_use: AtomicU64,
}

/// How an [`Allocation`] gives its memory back.
pub(crate) enum FreeKind {
    /// `cudaMalloc` memory of `device`: the drop waits for that device
    /// (`cudaDeviceSynchronize`), then calls `cudaFree`.
    Synchronous {
        /// The device the memory lives on.
        device: i32,
    },
    /// `cudaMallocAsync`/`cudaMallocFromPoolAsync` memory (see `memory::pool`, "Freeing").
    StreamOrdered {
        /// The device the memory lives on.
        device: i32,
        /// Whether the allocating stream was a blocking stream, so that the legacy default
        /// stream is ordered after all of its work.
        blocking_stream: bool,
        /// The pool's handle (null for an empty allocation): other devices reach pool memory
        /// only where the pool grants it (`cudaMemPoolSetAccess`), not through peer access.
        pool: sys::cudaMemPool_t,
        /// The pool it came from, kept alive until the memory is back in it.
        _pool: Option<KeepAlive>,
    },
    /// Memory other code allocated and shares with this crate (a cudarc slice,
    /// `interop::cudarc::CudarcSlice`): the drop waits for `device` (and every device that
    /// used it), then calls `release`, which gives it back to its owner.
    #[cfg_attr(not(feature = "cudarc"), allow(dead_code))]
    Foreign {
        /// The device the memory lives on.
        device: i32,
        /// The memory pool of pool memory (null otherwise): other devices reach it only
        /// where the pool grants access.
        pool: sys::cudaMemPool_t,
        /// Gives the memory back (drops the other code's handle to it); taken once, by the
        /// drop, or by [`Allocation::disarm`] when the memory goes back unfreed.
        release: Option<Box<dyn FnOnce() + Send>>,
    },
}

// SAFETY: a device address is just a number to the host; the runtime calls on it are
// thread-safe, the pool handle kept is `Send + Sync`, and a foreign release closure is `Send`.
unsafe impl Send for Allocation {}
// SAFETY: as above; `&Allocation` exposes only the address, the size, the device, the pool
// handle and atomic flags. The release closure (not `Sync`) is reached only through `&mut`
// (the drop, `disarm`).
unsafe impl Sync for Allocation {}

/// How many allocations are alive whose free is queued on the legacy default stream
/// ([`Allocation::free_is_queued`]). While there are none, no launch needs to look at its
/// arguments for them ([`unordered_use_possible`]).
static QUEUED_FREES_ALIVE: AtomicUsize = AtomicUsize::new(0);

impl Allocation {
    pub(crate) fn new(bytes: usize) -> Result<Allocation> {
        let mut ptr = ptr::null_mut();
        // The device CUDA allocates on, asked (not remembered): the free waits for it. An
        // empty buffer allocates nothing, needs no device and works without one (device 0).
        let device = match bytes {
            0 => Device::current().map_or(0, Device::ordinal),
            _ => Device::current()?.ordinal(),
        };
        if bytes > 0 {
            // SAFETY: `ptr` is a valid out-pointer.
            check(unsafe { sys::cudaMalloc(&mut ptr, bytes) }, "cudaMalloc")?;
            note_in_use(Device::from_ordinal(device));
        }
        Ok(Allocation {
            ptr,
            bytes,
            free: FreeKind::Synchronous { device },
            unordered_use: AtomicBool::new(false),
            foreign_use: AtomicU64::new(0),
        })
    }

    /// Takes ownership of `ptr`, which `cudaMallocAsync`/`cudaMallocFromPoolAsync` returned
    /// for `bytes` bytes (or null for zero bytes); it is freed as `free` says.
    pub(crate) fn from_stream_ordered(ptr: *mut c_void, bytes: usize, free: FreeKind) -> Allocation {
        let (unordered_use, foreign_use) = (AtomicBool::new(false), AtomicU64::new(0));
        let allocation = Allocation { ptr, bytes, free, unordered_use, foreign_use };
        if allocation.free_is_queued() {
            QUEUED_FREES_ALIVE.fetch_add(1, Ordering::Relaxed);
        }
        if !ptr.is_null() {
            note_in_use(allocation.device());
        }
        allocation
    }

    /// Takes over memory of other code (`FreeKind::Foreign`): `bytes` bytes at `ptr` on
    /// `device` (from `pool`, or null), given back by `release` once every device that may
    /// use it is idle.
    #[cfg_attr(not(feature = "cudarc"), allow(dead_code))]
    pub(crate) fn foreign(
        ptr: *mut c_void, bytes: usize, device: Device, pool: sys::cudaMemPool_t,
        release: Box<dyn FnOnce() + Send>,
    ) -> Allocation {
        if !ptr.is_null() {
            note_in_use(device);
        }
        Allocation {
            ptr,
            bytes,
            free: FreeKind::Foreign { device: device.ordinal(), pool, release: Some(release) },
            unordered_use: AtomicBool::new(false),
            foreign_use: AtomicU64::new(0),
        }
    }

    /// Waits for every device whose work may use the memory (its own, and the other devices
    /// that used it). False (the error recorded) when a wait failed.
    #[cfg_attr(not(feature = "cudarc"), allow(dead_code))]
    pub(crate) fn uses_finished(&self) -> bool {
        if !devices_idle(self.foreign_use.load(Ordering::Relaxed)) {
            return false;
        }
        let mut idle = false;
        on_device(self.device().ordinal(), || idle = device_idle());
        idle
    }

    /// For memory of other code going back to it unfreed (nothing of this crate uses it any
    /// more): the drop will neither wait nor call the release.
    #[cfg_attr(not(feature = "cudarc"), allow(dead_code))]
    pub(crate) fn disarm(&mut self) {
        if let FreeKind::Foreign { release, .. } = &mut self.free {
            release.take();
        }
        self.ptr = ptr::null_mut();
    }

    /// The device the memory lives on.
    pub(crate) fn device(&self) -> Device {
        match self.free {
            FreeKind::Synchronous { device }
            | FreeKind::StreamOrdered { device, .. }
            | FreeKind::Foreign { device, .. } => Device::from_ordinal(device),
        }
    }

    /// The pool of pool memory (stream-ordered, or other code's from a pool); `None` for
    /// `cudaMalloc` memory.
    pub(crate) fn pool(&self) -> Option<sys::cudaMemPool_t> {
        match self.free {
            FreeKind::StreamOrdered { pool, .. } | FreeKind::Foreign { pool, .. } if !pool.is_null() => {
                Some(pool)
            }
            _ => None,
        }
    }

    #[allow(dead_code)] // for graph nodes
    pub(crate) fn ptr(&self) -> *mut c_void {
        self.ptr
    }

    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// True when dropping the last owner queues the free on the legacy default stream
    /// without waiting (stream-ordered memory from a blocking stream): work on a
    /// non-blocking stream that still uses the memory is not ordered before that free. Such
    /// work must either be noted ([`note_unordered_uses`], which makes the drop wait for
    /// the device first) or be waited for by whoever launched it before it releases its
    /// owner (graph execs: their launch fence). Memory from a non-blocking stream and
    /// `cudaMalloc` memory wait for their device before they are freed.
    pub(crate) fn free_is_queued(&self) -> bool {
        !self.ptr.is_null() && matches!(self.free, FreeKind::StreamOrdered { blocking_stream: true, .. })
    }

    /// Notes that work queued on `stream` uses this memory, when the free would not be
    /// ordered after it otherwise: a non-blocking stream and a free queued on the legacy
    /// stream (the drop then waits for the device before freeing), or a stream of another
    /// device (the drop then waits for that device too).
    pub(crate) fn note_use_on(&self, stream: &Stream) {
        // Relaxed is enough: the last owner's drop comes after this owner's (`Arc`'s
        // release/acquire), and these stores come before that.
        if stream.is_non_blocking() && self.free_is_queued() {
            self.unordered_use.store(true, Ordering::Relaxed);
        }
        if !self.ptr.is_null() && stream.device() != self.device() {
            let bit = 1u64 << stream.device().ordinal().clamp(0, 63);
            if self.foreign_use.load(Ordering::Relaxed) & bit == 0 {
                self.foreign_use.fetch_or(bit, Ordering::Relaxed);
            }
        }
    }
}

impl Allocation {
    /// Notes that code outside this crate was given the memory (a buffer lent to cudarc): it
    /// may queue work on it on any stream of any device, which no free of ours is ordered
    /// after. The drop then waits for every device with an active context before freeing.
    #[cfg_attr(not(feature = "cudarc"), allow(dead_code))]
    pub(crate) fn note_use_by_other_code(&self) {
        if self.ptr.is_null() {
            return;
        }
        if self.free_is_queued() {
            self.unordered_use.store(true, Ordering::Relaxed);
        }
        self.foreign_use.store(EVERY_DEVICE, Ordering::Relaxed);
    }
}

/// Whether `owner` is an [`Allocation`] whose free is queued without waiting for other
/// streams ([`Allocation::free_is_queued`]): execs that launch work using it must wait for
/// their last launch before releasing it.
pub(crate) fn free_is_queued(owner: &KeepAlive) -> bool {
    owner.downcast_ref::<Allocation>().is_some_and(Allocation::free_is_queued)
}

/// Whether `owner` is an allocation of pool memory (stream-ordered, or other code's from a
/// pool).
pub(crate) fn in_pool(owner: &KeepAlive) -> bool {
    owner.downcast_ref::<Allocation>().is_some_and(|allocation| allocation.pool().is_some())
}

/// For a kernel launch on `stream`: whether its arguments may point into memory whose free
/// would not be ordered after the launch (a non-blocking stream while such allocations
/// exist). Costs a field read and, for non-blocking streams, one relaxed atomic load. An
/// allocation among the arguments is alive, so its count is seen here.
#[inline]
pub(crate) fn unordered_use_possible(stream: &Stream) -> bool {
    stream.is_non_blocking() && QUEUED_FREES_ALIVE.load(Ordering::Relaxed) != 0
}

/// Notes that work queued on the non-blocking `stream` uses each allocation among `owners`
/// ([`Allocation::note_use_on`]). Call it before the owners are released.
pub(crate) fn note_unordered_uses(owners: &[KeepAlive], stream: &Stream) {
    for owner in owners {
        if let Some(allocation) = owner.downcast_ref::<Allocation>() {
            allocation.note_use_on(stream);
        }
    }
}

impl Allocation {
    /// Moves the memory out into a new value (to be dropped elsewhere), leaving this one empty.
    fn take_out(&mut self) -> Allocation {
        Allocation {
            ptr: std::mem::replace(&mut self.ptr, ptr::null_mut()),
            bytes: self.bytes,
            free: std::mem::replace(&mut self.free, FreeKind::Synchronous { device: 0 }),
            unordered_use: AtomicBool::new(self.unordered_use.load(Ordering::Relaxed)),
            foreign_use: AtomicU64::new(self.foreign_use.load(Ordering::Relaxed)),
        }
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        if self.ptr.is_null() {
            return;
        }
        // CUDA calls are not allowed inside a host function: free it on another thread.
        if deferred_in_host_fn(|| self.take_out()) {
            return;
        }
        // Freeing waits for the device, which must not overlap a capture (see
        // `capture_gate::device_waits`): kept until the captures have ended.
        let Some(_no_capture) = crate::capture_gate::device_wait_allowed() else {
            crate::capture_gate::defer_until_no_capture(self.take_out());
            return;
        };
        if self.free_is_queued() {
            QUEUED_FREES_ALIVE.fetch_sub(1, Ordering::Relaxed);
        }
        let unordered_use = self.unordered_use.load(Ordering::Relaxed);
        if !devices_idle(self.foreign_use.load(Ordering::Relaxed)) {
            // Work of another device may still use the memory: leaked rather than freed
            // under it (the error is recorded).
            return;
        }
        match &mut self.free {
            FreeKind::Synchronous { device } => on_device(*device, || {
                // CUDA documents only that `cudaFree` *may* synchronize: wait for the device
                // ourselves, so that no kernel still queued or running uses the memory.
                if device_idle() {
                    // SAFETY: the pointer came from cudaMalloc and is freed once; every
                    // piece of work that could use it has finished (the device is idle, and
                    // no new work can take this allocation: its last owner is going).
                    record_drop_error(unsafe { sys::cudaFree(self.ptr) }, "cudaFree");
                }
            }),
            FreeKind::StreamOrdered { device, blocking_stream, .. } => {
                free_stream_ordered(self.ptr, *device, *blocking_stream && !unordered_use)
            }
            FreeKind::Foreign { device, release, .. } => {
                let release = release.take();
                on_device(*device, || {
                    // Its owner's free need not wait for work of this crate: wait here.
                    if device_idle() {
                        if let Some(release) = release {
                            release();
                        }
                    } else {
                        // Work may still use the memory: never given back (leaked).
                        std::mem::forget(release);
                    }
                })
            }
        }
    }
}

/// The number of bytes `len` elements of `T` take, or the error naming `call` on overflow.
pub(crate) fn bytes_for<T>(len: usize, call: &'static str) -> Result<usize> {
    len.checked_mul(size_of::<T>()).ok_or_else(|| {
        CudaError::refused(call, crate::refusal::Overflow::Elements { len, element_bytes: size_of::<T>() })
    })
}

/// A synchronous copy of `bytes` bytes between host and device memory (`cudaMemcpy`, of
/// `kind`); nothing at all for zero bytes. It has completed when this returns, so work queued
/// afterwards on any stream sees it (see [`finish_on_legacy_stream`]).
///
/// Runs with `device`, where the device side lives, current: its legacy stream is the one
/// ordered with its blocking streams.
///
/// # Safety
/// `dst` must be valid for writing and `src` for reading `bytes` bytes, each in the memory
/// (host or device) that `kind` names, and whatever lands in `dst` must be valid there.
pub(crate) unsafe fn memcpy_sync(
    device: Device, dst: *mut c_void, src: *const c_void, bytes: usize, kind: sys::cudaMemcpyKind,
) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    device.with_current(|| {
        // SAFETY: the caller's promise.
        check(unsafe { sys::cudaMemcpy(dst, src, bytes, kind) }, "cudaMemcpy")?;
        if kind != sys::cudaMemcpyKind::cudaMemcpyDeviceToHost {
            finish_on_legacy_stream("cudaStreamSynchronize after cudaMemcpy")?;
        }
        Ok(())
    })
}

/// Waits until the legacy default stream, where `cudaMemcpy` and `cudaMemset` run, has done
/// what they queued there.
///
/// A host-to-device `cudaMemcpy` from pageable memory may return once the data is staged,
/// and a `cudaMemset` of device memory returns at once; neither is ordered with non-blocking
/// streams. Without this wait a kernel launched next on such a stream can run first: on a GPU
/// shared with other processes, buffers were seen to be zeroed after a graph had written them.
/// `call` names the wait in an error, e.g. "cudaStreamSynchronize after cudaMemset".
pub(super) fn finish_on_legacy_stream(call: &'static str) -> Result<()> {
    // SAFETY: the null stream is the legacy default stream of the current device; waiting on
    // it touches no memory of ours.
    check(unsafe { sys::cudaStreamSynchronize(ptr::null_mut()) }, call)
}

typed_buffer! {
    /// An owned array of `len` values of `T` in device memory.
    ///
    /// Buffers are shared, not copied, by [`DevicePtr`]s, kernel launches and graph nodes: the
    /// memory is freed when the last of them is dropped, so a graph or exec can never point at
    /// freed memory (see the crate docs, "Ownership"). The memory is freed after all work queued
    /// so far that uses it: `cudaMalloc` memory after waiting for the device, stream-ordered
    /// memory as `memory::pool` describes ([`DeviceBuffer::alloc_async`]).
    ///
    /// # Host reads and writes
    /// [`to_vec`](Self::to_vec), [`copy_to_host`](Self::copy_to_host),
    /// [`copy_from_host`](Self::copy_from_host) and [`from_slice`](Self::from_slice) are
    /// synchronous `cudaMemcpy` calls on the legacy default stream. What you can rely on:
    /// - they start after all work queued earlier on the legacy stream and on **blocking**
    ///   streams ([`Stream::new`](crate::Stream::new)) of the device, and have finished when
    ///   they return, so work queued afterwards on any stream sees what they wrote;
    /// - they are **not** ordered with work on **non-blocking** streams: a kernel there that
    ///   still writes the buffer may leave `to_vec` with a mix of old and new values, and one
    ///   that still reads it may see part of what `copy_from_host` writes. Synchronize that
    ///   stream (or wait for an [`Event`](crate::Event) recorded on it) first.
    ///
    /// That race is a wrong value, never undefined behaviour: the host only ever touches its own
    /// slice or `Vec`, which the copy has finished with when the call returns; the device memory
    /// is never borrowed by Rust; and any bit pattern is a valid `T` ([`DeviceRepr`]).
    ///
    /// ```no_run
    /// use cuda_graph::DeviceBuffer;
    /// let mut buffer = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0])?;
    /// buffer.copy_from_host(&[4.0, 5.0, 6.0])?;
    /// assert_eq!(buffer.to_vec()?, [4.0, 5.0, 6.0]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub struct DeviceBuffer over pub(super) Allocation;
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// `len` zeroed elements (`cudaMalloc` then `cudaMemset`). Synchronous: the memory is
    /// zero before this returns, so work on any stream, non-blocking ones included, sees it.
    pub fn zeroed(len: usize) -> Result<DeviceBuffer<T>> {
        let buffer = DeviceBuffer::uninitialized_bytes(len)?;
        if buffer.bytes() > 0 {
            // SAFETY: the allocation holds exactly `bytes()` bytes.
            check(unsafe { sys::cudaMemset(buffer.allocation.ptr, 0, buffer.bytes()) }, "cudaMemset")?;
            finish_on_legacy_stream("cudaStreamSynchronize after cudaMemset")?;
        }
        Ok(buffer)
    }

    /// A buffer holding a copy of `data` (synchronous: copied before this returns).
    pub fn from_slice(data: &[T]) -> Result<DeviceBuffer<T>> {
        let mut buffer = DeviceBuffer::uninitialized_bytes(data.len())?;
        buffer.copy_from_host(data)?;
        Ok(buffer)
    }

    fn uninitialized_bytes(len: usize) -> Result<DeviceBuffer<T>> {
        let bytes = bytes_for::<T>(len, "DeviceBuffer")?;
        Ok(DeviceBuffer { allocation: Arc::new(Allocation::new(bytes)?), len, _element: PhantomData })
    }

    /// A buffer of `len` elements owning `allocation` (which holds at least that many bytes).
    pub(crate) fn from_allocation(allocation: Allocation, len: usize) -> DeviceBuffer<T> {
        debug_assert!(allocation.bytes() >= len * size_of::<T>());
        DeviceBuffer { allocation: Arc::new(allocation), len, _element: PhantomData }
    }

    /// Notes that work queued on `stream` uses this buffer ([`Allocation::note_use_on`]):
    /// call it before queuing the work.
    #[cfg_attr(not(feature = "cudarc"), allow(dead_code))]
    pub(crate) fn note_use_by_other_code(&self) {
        self.allocation.note_use_by_other_code();
    }

    pub(crate) fn note_use_on(&self, stream: &Stream) {
        self.allocation.note_use_on(stream);
    }

    element_counts!("DeviceBuffer");

    /// Copies `data` into the buffer. Lengths must match. Synchronous: the copy has landed
    /// before this returns, so work queued next on any stream reads the new values.
    ///
    /// Ordering with work already queued (see "Host reads and writes" on [`DeviceBuffer`]):
    /// the copy runs on the legacy default stream, after work queued earlier on blocking
    /// streams, but not after work on non-blocking streams ([`StreamOptions::non_blocking`](crate::StreamOptions::non_blocking)):
    /// synchronize those first if they may still use the buffer.
    pub fn copy_from_host(&mut self, data: &[T]) -> Result<()> {
        self.expect_len(data.len(), "DeviceBuffer::copy_from_host")?;
        // SAFETY: both sides hold `bytes()` bytes (lengths checked); T is plain data.
        unsafe {
            memcpy_sync(
                self.allocation.device(),
                self.allocation.ptr,
                data.as_ptr().cast(),
                self.bytes(),
                sys::cudaMemcpyKind::cudaMemcpyHostToDevice,
            )
        }
    }

    /// Copies the buffer into `out` (synchronous: waits for work on the legacy default
    /// stream, and so for blocking streams, not for non-blocking ones: see "Host reads and
    /// writes" on [`DeviceBuffer`]). Lengths must match.
    pub fn copy_to_host(&self, out: &mut [T]) -> Result<()> {
        self.expect_len(out.len(), "DeviceBuffer::copy_to_host")?;
        // SAFETY: `out` holds `bytes()` writable bytes (lengths checked), the allocation as
        // many readable ones; every bit pattern is a valid T.
        unsafe { self.copy_out(out.as_mut_ptr()) }
    }

    /// The buffer's contents as a `Vec` (synchronous: runs on the legacy default stream,
    /// after work queued earlier on blocking streams; synchronize non-blocking streams that
    /// may still write the buffer first, see "Host reads and writes" on [`DeviceBuffer`]).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = Vec::<T>::with_capacity(self.len);
        // SAFETY: the Vec's capacity holds `bytes()` writable bytes; no reference to the
        // uninitialized elements is made.
        unsafe { self.copy_out(out.as_mut_ptr()) }?;
        // SAFETY: cudaMemcpy initialized all `len` elements (or there are no bytes), and any
        // bit pattern is a valid T (DeviceRepr).
        unsafe { out.set_len(self.len) };
        Ok(out)
    }

    /// Copies the whole buffer to host memory at `out` (synchronous).
    ///
    /// # Safety
    /// `out` must be valid for writing `len` elements of `T` (any bit pattern is a valid T).
    unsafe fn copy_out(&self, out: *mut T) -> Result<()> {
        // SAFETY: the allocation holds `bytes()` readable bytes; the caller promises `out`.
        unsafe {
            memcpy_sync(
                self.allocation.device(),
                out.cast(),
                self.allocation.ptr,
                self.bytes(),
                sys::cudaMemcpyKind::cudaMemcpyDeviceToHost,
            )
        }
    }

    /// A typed pointer to the first element, sharing ownership of the memory.
    pub fn ptr(&self) -> DevicePtr<T> {
        DevicePtr::owned(self.allocation.ptr as u64, self.len, self.allocation.clone())
    }

    /// The raw device address. The buffer still owns the memory.
    pub fn as_raw(&self) -> *mut c_void {
        self.allocation.ptr
    }

    /// The owner handle that graphs keep to hold this memory alive.
    pub fn keep_alive(&self) -> KeepAlive {
        self.allocation.clone()
    }

    fn expect_len(&self, other: usize, call: &'static str) -> Result<()> {
        if other == self.len {
            Ok(())
        } else {
            Err(CudaError::refused(
                call,
                crate::refusal::Lengths::BufferAndHost { buffer: self.len, host: other },
            ))
        }
    }
}

/// A typed device address, as a kernel receives a `T*`. It shares ownership of the memory
/// it points into, so a launch or graph node holding it keeps that memory alive.
///
/// ```no_run
/// let buffer = cuda_graph::DeviceBuffer::<u32>::zeroed(1024)?;
/// let second_half = buffer.ptr().offset(512)?;
/// assert_eq!(second_half.len(), 512);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct DevicePtr<T> {
    addr: u64,
    len: usize,
    /// The allocation itself (an [`Allocation`], the mapped host memory of a
    /// [`MappedBuffer`](crate::memory::MappedBuffer), or another owner given to
    /// [`DevicePtr::from_raw_with_owner`]), as `keep_alive` hands it out.
    pub(super) owner: Option<KeepAlive>,
    _element: PhantomData<fn() -> T>,
}

impl<T> Clone for DevicePtr<T> {
    fn clone(&self) -> Self {
        DevicePtr { addr: self.addr, len: self.len, owner: self.owner.clone(), _element: PhantomData }
    }
}

impl<T> fmt::Debug for DevicePtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DevicePtr({:#x}, len {})", self.addr, self.len)
    }
}

impl<T> DevicePtr<T> {
    /// A pointer to raw device memory this crate does not own (allocated by another library,
    /// say). It keeps nothing alive.
    ///
    /// # Safety
    /// `addr` must be a device address valid for `len` elements of `T`, for as long as any
    /// kernel, graph or exec that receives this pointer may use it.
    pub unsafe fn from_raw(addr: u64, len: usize) -> DevicePtr<T> {
        DevicePtr { addr, len, owner: None, _element: PhantomData }
    }

    /// The device address.
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// Elements from here to the end of the allocation.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no element is left.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The pointer `elements` further on, checked to stay inside the allocation.
    pub fn offset(&self, elements: usize) -> Result<DevicePtr<T>> {
        let past = |offset, left| Bounds::Offset { offset, left };
        check_within("DevicePtr::offset", elements, self.len, past)?;
        Ok(DevicePtr {
            addr: self.addr + (elements * size_of::<T>()) as u64,
            len: self.len - elements,
            owner: self.owner.clone(),
            _element: PhantomData,
        })
    }

    /// What keeps the memory alive, if this crate owns it.
    pub fn keep_alive(&self) -> Option<KeepAlive> {
        self.owner.clone()
    }

    /// A pointer to `len` elements at device address `addr` of the allocation `owner`, which
    /// must hold them and free them only once every owner is gone and no work queued so far
    /// uses them.
    pub(crate) fn owned(addr: u64, len: usize, owner: KeepAlive) -> DevicePtr<T> {
        DevicePtr { addr, len, owner: Some(owner), _element: PhantomData }
    }
}

/// Refuses `count` elements (an offset or a length) past the `room` elements there are, for
/// `call`; `problem` makes the refusal from both numbers.
pub(super) fn check_within(
    call: &'static str, count: usize, room: usize, problem: impl FnOnce(usize, usize) -> Bounds,
) -> Result<()> {
    if count > room {
        return Err(CudaError::refused(call, problem(count, room)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream_ordered(ptr: usize, blocking_stream: bool) -> Arc<Allocation> {
        let free = FreeKind::StreamOrdered { device: 0, blocking_stream, pool: ptr::null_mut(), _pool: None };
        Arc::new(Allocation::from_stream_ordered(ptr as *mut c_void, 4, free))
    }

    #[test]
    fn only_frees_queued_without_waiting_ask_execs_to_fence() {
        let queued = stream_ordered(0x1000, true);
        let waits = stream_ordered(0x2000, false);
        let empty = stream_ordered(0, true);
        assert!(queued.free_is_queued() && free_is_queued(&(queued.clone() as KeepAlive)));
        assert!(!waits.free_is_queued() && !empty.free_is_queued());
        let not_an_allocation: KeepAlive = Arc::new(7u32);
        assert!(!free_is_queued(&not_an_allocation));
        // Fake addresses: never freed.
        std::mem::forget((queued, waits));
    }
}
