//! `DeviceBuffer<T>`: an owned device allocation; `DevicePtr<T>`: a typed address into one.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ptr;
use std::sync::Arc;

use cudart_graph_sys as sys;

use crate::error::{check, record_drop_error, CudaError, Result};
use crate::memory::{DeviceRepr, KeepAlive};

/// One device allocation, freed when the last owner (buffer, pointer, graph or exec that uses
/// it) is dropped. How it is freed depends on how it was made ([`FreeKind`]).
pub(crate) struct Allocation {
    ptr: *mut c_void,
    bytes: usize,
    free: FreeKind,
}

/// How an [`Allocation`] gives its memory back.
pub(crate) enum FreeKind {
    /// `cudaMalloc` memory: `cudaFree`, which waits for device work still using it.
    Synchronous,
    /// `cudaMallocAsync`/`cudaMallocFromPoolAsync` memory (see `memory::pool`, "Freeing").
    StreamOrdered {
        /// The device the memory lives on.
        device: i32,
        /// Whether the allocating stream was a blocking stream, so that the legacy default
        /// stream is ordered after all of its work.
        blocking_stream: bool,
        /// The pool it came from, kept alive until the memory is back in it.
        _pool: Option<KeepAlive>,
    },
}

// SAFETY: a device address is just a number to the host; the runtime calls on it are
// thread-safe, and the pool handle kept is `Send + Sync`.
unsafe impl Send for Allocation {}
// SAFETY: as above; `&Allocation` exposes only the address and size.
unsafe impl Sync for Allocation {}

/// The legacy default stream (`cudaStreamLegacy`), ordered after all work on blocking streams.
const LEGACY_STREAM: sys::cudaStream_t = 1 as sys::cudaStream_t;

impl Allocation {
    pub(crate) fn new(bytes: usize) -> Result<Allocation> {
        let mut ptr = ptr::null_mut();
        if bytes > 0 {
            // SAFETY: `ptr` is a valid out-pointer.
            check(unsafe { sys::cudaMalloc(&mut ptr, bytes) }, "cudaMalloc")?;
        }
        Ok(Allocation { ptr, bytes, free: FreeKind::Synchronous })
    }

    /// Takes ownership of `ptr`, which `cudaMallocAsync`/`cudaMallocFromPoolAsync` returned
    /// for `bytes` bytes (or null for zero bytes); it is freed as `free` says.
    pub(crate) fn from_stream_ordered(ptr: *mut c_void, bytes: usize, free: FreeKind) -> Allocation {
        Allocation { ptr, bytes, free }
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
    /// non-blocking stream that still uses the memory is not ordered before that free, so
    /// whoever launched such work must wait for it before releasing its owner. (Memory from
    /// a non-blocking stream waits for the whole device before it is freed, and `cudaMalloc`
    /// memory's `cudaFree` waits for the device too.)
    pub(crate) fn free_is_queued(&self) -> bool {
        !self.ptr.is_null() && matches!(self.free, FreeKind::StreamOrdered { blocking_stream: true, .. })
    }
}

/// Whether `owner` is an [`Allocation`] whose free is queued without waiting for other
/// streams ([`Allocation::free_is_queued`]): execs that launch work using it must wait for
/// their last launch before releasing it.
pub(crate) fn free_is_queued(owner: &KeepAlive) -> bool {
    owner.downcast_ref::<Allocation>().is_some_and(Allocation::free_is_queued)
}

impl Drop for Allocation {
    fn drop(&mut self) {
        if self.ptr.is_null() {
            return;
        }
        if crate::host_fn::in_host_fn() {
            // CUDA calls are not allowed inside a host function: free it on another thread.
            let ptr = std::mem::replace(&mut self.ptr, ptr::null_mut());
            let free = std::mem::replace(&mut self.free, FreeKind::Synchronous);
            crate::host_fn::defer_drop(Allocation { ptr, bytes: self.bytes, free });
            return;
        }
        match &self.free {
            // SAFETY: the pointer came from cudaMalloc and is freed once. cudaFree waits for
            // work still using it, so freeing while a kernel runs cannot corrupt that kernel.
            FreeKind::Synchronous => record_drop_error(unsafe { sys::cudaFree(self.ptr) }, "cudaFree"),
            FreeKind::StreamOrdered { device, blocking_stream, .. } => {
                free_stream_ordered(self.ptr, *device, *blocking_stream)
            }
        }
    }
}

/// Frees stream-ordered memory without a stream handle (the allocating stream may be gone):
/// on the legacy default stream when that is ordered after the allocating stream, else after
/// waiting for the whole device. Runs on `device`, restoring the caller's current device.
fn free_stream_ordered(ptr: *mut c_void, device: i32, blocking_stream: bool) {
    let mut current = device;
    // SAFETY: `current` is a valid, writable i32.
    record_drop_error(unsafe { sys::cudaGetDevice(&mut current) }, "cudaGetDevice");
    if current != device {
        // SAFETY: plain call; `device` is the ordinal the memory was allocated on.
        record_drop_error(unsafe { sys::cudaSetDevice(device) }, "cudaSetDevice");
    }
    if blocking_stream {
        // SAFETY: `ptr` came from the stream-ordered allocator and is freed once. The legacy
        // default stream runs this free after all work already queued on every blocking
        // stream of the device, the allocating stream included.
        record_drop_error(unsafe { sys::cudaFreeAsync(ptr, LEGACY_STREAM) }, "cudaFreeAsync");
    } else {
        // SAFETY: plain call. A non-blocking stream is not ordered before the legacy stream,
        // so wait for every stream of the device first.
        let synced = unsafe { sys::cudaDeviceSynchronize() };
        if synced == sys::cudaError::cudaSuccess {
            // SAFETY: all work that could use `ptr` has finished; it is freed once, through
            // the pool (a plain cudaFree of pool memory leaves it counted as used, measured
            // on CUDA 13.0).
            record_drop_error(unsafe { sys::cudaFreeAsync(ptr, LEGACY_STREAM) }, "cudaFreeAsync");
        } else {
            // Work may still use the memory: leak it rather than free it under that work.
            record_drop_error(synced, "cudaDeviceSynchronize");
        }
    }
    if current != device {
        // SAFETY: plain call; restores the caller's current device.
        record_drop_error(unsafe { sys::cudaSetDevice(current) }, "cudaSetDevice");
    }
}

/// The number of bytes `len` elements of `T` take, or the error naming `call` on overflow.
pub(crate) fn bytes_for<T>(len: usize, call: &'static str) -> Result<usize> {
    len.checked_mul(size_of::<T>()).ok_or_else(|| {
        CudaError::invalid(call, format!("{len} elements of {} bytes overflow usize", size_of::<T>()))
    })
}

/// A synchronous copy of `bytes` bytes between host and device memory (`cudaMemcpy`, of
/// `kind`); nothing at all for zero bytes. It has completed when this returns, so work queued
/// afterwards on any stream sees it (see [`finish_on_legacy_stream`]).
///
/// # Safety
/// `dst` must be valid for writing and `src` for reading `bytes` bytes, each in the memory
/// (host or device) that `kind` names, and whatever lands in `dst` must be valid there.
unsafe fn memcpy_sync(
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: sys::cudaMemcpyKind,
) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: the caller's promise.
    check(unsafe { sys::cudaMemcpy(dst, src, bytes, kind) }, "cudaMemcpy")?;
    if kind != sys::cudaMemcpyKind::cudaMemcpyDeviceToHost {
        finish_on_legacy_stream("cudaStreamSynchronize after cudaMemcpy")?;
    }
    Ok(())
}

/// Waits until the legacy default stream, where `cudaMemcpy` and `cudaMemset` run, has done
/// what they queued there.
///
/// A host-to-device `cudaMemcpy` from pageable memory may return once the data is staged,
/// and a `cudaMemset` of device memory returns at once; neither is ordered with non-blocking
/// streams. Without this wait a kernel launched next on such a stream can run first: on a GPU
/// shared with other processes, buffers were seen to be zeroed after a graph had written them.
/// `call` names the wait in an error, e.g. "cudaStreamSynchronize after cudaMemset".
fn finish_on_legacy_stream(call: &'static str) -> Result<()> {
    // SAFETY: the null stream is the legacy default stream of the current device; waiting on
    // it touches no memory of ours.
    check(unsafe { sys::cudaStreamSynchronize(ptr::null_mut()) }, call)
}

/// An owned array of `len` values of `T` in device memory.
///
/// Buffers are shared, not copied, by [`DevicePtr`]s, kernel launches and graph nodes: the
/// memory is freed when the last of them is dropped, so a graph or exec can never point at
/// freed memory (see the crate docs, "Ownership").
///
/// ```no_run
/// use cuda_graph::DeviceBuffer;
/// let mut buffer = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0])?;
/// buffer.copy_from_host(&[4.0, 5.0, 6.0])?;
/// assert_eq!(buffer.to_vec()?, [4.0, 5.0, 6.0]);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct DeviceBuffer<T: DeviceRepr> {
    allocation: Arc<Allocation>,
    len: usize,
    _element: PhantomData<T>,
}

impl<T: DeviceRepr> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuffer").field("ptr", &self.allocation.ptr).field("len", &self.len).finish()
    }
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

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// Copies `data` into the buffer. Lengths must match. Synchronous: the copy has landed
    /// before this returns, so work queued next on any stream reads the new values (it does
    /// not wait for non-blocking streams' earlier work: synchronize them first).
    pub fn copy_from_host(&mut self, data: &[T]) -> Result<()> {
        self.expect_len(data.len(), "DeviceBuffer::copy_from_host")?;
        // SAFETY: both sides hold `bytes()` bytes (lengths checked); T is plain data.
        unsafe {
            memcpy_sync(
                self.allocation.ptr,
                data.as_ptr().cast(),
                self.bytes(),
                sys::cudaMemcpyKind::cudaMemcpyHostToDevice,
            )
        }
    }

    /// Copies the buffer into `out` (synchronous: waits for work on the legacy default
    /// stream, and so for blocking streams). Lengths must match.
    pub fn copy_to_host(&self, out: &mut [T]) -> Result<()> {
        self.expect_len(out.len(), "DeviceBuffer::copy_to_host")?;
        // SAFETY: `out` holds `bytes()` writable bytes (lengths checked), the allocation as
        // many readable ones; every bit pattern is a valid T.
        unsafe { self.copy_out(out.as_mut_ptr()) }
    }

    /// The buffer's contents as a `Vec` (synchronous).
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
                out.cast(),
                self.allocation.ptr,
                self.bytes(),
                sys::cudaMemcpyKind::cudaMemcpyDeviceToHost,
            )
        }
    }

    /// A typed pointer to the first element, sharing ownership of the memory.
    pub fn ptr(&self) -> DevicePtr<T> {
        DevicePtr {
            addr: self.allocation.ptr as u64,
            len: self.len,
            owner: Some(self.allocation.clone()),
            _element: PhantomData,
        }
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
            Err(CudaError::invalid(call, format!("buffer has {} elements, host slice has {other}", self.len)))
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
    owner: Option<Arc<Allocation>>,
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
        if elements > self.len {
            return Err(CudaError::invalid(
                "DevicePtr::offset",
                format!("offset {elements} is past the {} elements left", self.len),
            ));
        }
        Ok(DevicePtr {
            addr: self.addr + (elements * size_of::<T>()) as u64,
            len: self.len - elements,
            owner: self.owner.clone(),
            _element: PhantomData,
        })
    }

    /// What keeps the memory alive, if this crate owns it.
    pub fn keep_alive(&self) -> Option<KeepAlive> {
        self.owner.clone().map(|owner| owner as KeepAlive)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream_ordered(ptr: usize, blocking_stream: bool) -> Arc<Allocation> {
        let free = FreeKind::StreamOrdered { device: 0, blocking_stream, _pool: None };
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
