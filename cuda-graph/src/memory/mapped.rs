//! `MappedBuffer<T>`: page-locked host memory mapped into the devices' address space
//! ("zero-copy"): kernels read and write it through a [`DevicePtr`] and the host reads it in
//! place, element by element, with atomic accesses.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::runtime as sys;

use super::free::{device_idle, on_device};
use crate::device::{devices_with_context, Device};
use crate::error::{check, CudaError, Result};
use crate::memory::{bytes_for, DevicePtr, DeviceRepr, KeepAlive};
use crate::release::{deferred_in_host_fn, record_drop_error, record_unreported_error};

mod sealed {
    /// One element of mapped memory, read and written by the host with one atomic access.
    pub trait AtomicWord: Copy {
        /// The element at `ptr`, by an atomic load (acquire).
        ///
        /// # Safety
        /// `ptr` is aligned to the element's size and valid for reads and writes for the
        /// call, and the host accesses it only through these two functions.
        unsafe fn load(ptr: *mut Self) -> Self;

        /// Writes `value` at `ptr` by an atomic store (release).
        ///
        /// # Safety
        /// As for [`load`](AtomicWord::load).
        unsafe fn store(ptr: *mut Self, value: Self);
    }
}

/// What a [`MappedBuffer`] holds: the 32- and 64-bit integers and floats, which the host reads
/// and writes with one atomic access each (`AtomicU32`, `AtomicI64`, …; a float through its
/// bits) while a kernel may be writing them. Sealed: other types have no host atomics of
/// their size, or would need more than one access.
///
/// ```
/// fn holds<T: cuda_graph::memory::MappedWord>() {}
/// holds::<u32>();
/// holds::<f64>();
/// ```
pub trait MappedWord: DeviceRepr + sealed::AtomicWord {}

macro_rules! integer_word {
    ($($t:ty => $atomic:ident),*) => { $(
        impl sealed::AtomicWord for $t {
            unsafe fn load(ptr: *mut $t) -> $t {
                // SAFETY: the caller's promise: `ptr` is aligned (the atomic has the
                // integer's size and alignment), valid for the call, and the host touches it
                // only atomically. The device's writes are not Rust accesses; any value they
                // leave is a valid integer.
                unsafe { std::sync::atomic::$atomic::from_ptr(ptr) }.load(Ordering::Acquire)
            }

            unsafe fn store(ptr: *mut $t, value: $t) {
                // SAFETY: as in `load`.
                unsafe { std::sync::atomic::$atomic::from_ptr(ptr) }.store(value, Ordering::Release)
            }
        }

        impl MappedWord for $t {}
    )* };
}
integer_word!(u32 => AtomicU32, i32 => AtomicI32, u64 => AtomicU64, i64 => AtomicI64);

macro_rules! float_word {
    ($($t:ty => $bits:ty),*) => { $(
        impl sealed::AtomicWord for $t {
            unsafe fn load(ptr: *mut $t) -> $t {
                // SAFETY: the float and its bits have the same size and alignment; the
                // caller's promise covers the rest.
                <$t>::from_bits(unsafe { <$bits as sealed::AtomicWord>::load(ptr.cast()) })
            }

            unsafe fn store(ptr: *mut $t, value: $t) {
                // SAFETY: as in `load`.
                unsafe { <$bits as sealed::AtomicWord>::store(ptr.cast(), value.to_bits()) }
            }
        }

        impl MappedWord for $t {}
    )* };
}
float_word!(f32 => u32, f64 => u64);

/// One `cudaHostAlloc(…, cudaHostAllocMapped)` allocation: its host address, the device
/// address kernels use, its size. Freed when its last owner (a [`MappedBuffer`], a
/// [`DevicePtr`] into it, a graph or exec holding one) is dropped, after every device that
/// may run work on it is idle (see its `Drop`).
pub(crate) struct MappedAllocation {
    host: *mut c_void,
    device: u64,
    bytes: usize,
}

// SAFETY: the allocation is owned by this value; the host reaches its contents only through
// `MappedBuffer`'s atomic accesses, which any thread may make.
unsafe impl Send for MappedAllocation {}
// SAFETY: as above; `&MappedAllocation` exposes only the two addresses and the size.
unsafe impl Sync for MappedAllocation {}

impl MappedAllocation {
    /// `bytes` zeroed bytes, mapped for the current device (nothing for zero bytes).
    fn new(bytes: usize, align: usize) -> Result<MappedAllocation> {
        let mut allocation = MappedAllocation { host: ptr::null_mut(), device: 0, bytes };
        if bytes == 0 {
            return Ok(allocation);
        }
        let current = Device::current()?;
        if current.attribute_raw(sys::cudaDeviceAttr::cudaDevAttrCanMapHostMemory)? == 0 {
            return Err(CudaError::refused(
                "MappedBuffer",
                crate::refusal::Unsupported::MapHostMemory { device: current.ordinal() },
            ));
        }
        check(
            // SAFETY: `allocation.host` is a valid out-pointer; the flag is a defined one.
            unsafe { sys::cudaHostAlloc(&mut allocation.host, bytes, sys::cudaHostAllocMapped) },
            "cudaHostAlloc",
        )?;
        // From here on an error drops `allocation`, which frees the memory.
        if (allocation.host as usize) % align != 0 {
            return Err(CudaError::refused(
                "MappedBuffer",
                crate::Refusal::MisalignedAllocation {
                    allocator: "cudaHostAlloc",
                    address: allocation.host as usize,
                    align,
                },
            ));
        }
        // SAFETY: the allocation holds `bytes` writable bytes that nothing else can reach yet
        // (no device address has been handed out).
        unsafe { ptr::write_bytes(allocation.host.cast::<u8>(), 0, bytes) };
        let mut device = ptr::null_mut();
        check(
            // SAFETY: `device` is a valid out-pointer; the host address came from
            // cudaHostAlloc with cudaHostAllocMapped; the flags must be 0.
            unsafe { sys::cudaHostGetDevicePointer(&mut device, allocation.host, 0) },
            "cudaHostGetDevicePointer",
        )?;
        allocation.device = device as u64;
        Ok(allocation)
    }
}

impl Drop for MappedAllocation {
    fn drop(&mut self) {
        if self.host.is_null() {
            return;
        }
        // CUDA calls are not allowed inside a host function: free it on another thread.
        let (device, bytes) = (self.device, self.bytes);
        let host = &mut self.host;
        if deferred_in_host_fn(|| MappedAllocation {
            host: std::mem::replace(host, ptr::null_mut()),
            device,
            bytes,
        }) {
            return;
        }
        // Freeing waits for the devices, which must not overlap a capture (see
        // `capture_gate::device_waits`): kept until the captures have ended.
        let Some(_no_capture) = crate::capture_gate::device_wait_allowed() else {
            let moved =
                MappedAllocation { host: std::mem::replace(&mut self.host, ptr::null_mut()), device, bytes };
            crate::capture_gate::defer_until_no_capture(moved);
            return;
        };
        if every_device_idle() {
            // SAFETY: the address came from cudaHostAlloc and is freed once; no owner is left
            // to queue work on it, and the work queued before (on any device) has finished.
            record_drop_error(unsafe { sys::cudaFreeHost(self.host) }, "cudaFreeHost");
        }
        // Else work may still use the memory: it is leaked rather than freed under that work.
    }
}

/// Waits for every device whose context is active (`cudaDeviceSynchronize` on each, the
/// caller's current device restored): under unified addressing, mapped memory is reachable
/// from every device, not only the one it was mapped for. False, with the error recorded,
/// when a device could not be listed or waited for.
fn every_device_idle() -> bool {
    let devices = match devices_with_context() {
        Ok(devices) => devices,
        Err(err) => {
            record_unreported_error(err);
            return false;
        }
    };
    devices.into_iter().all(|device| {
        let mut idle = false;
        on_device(device.ordinal(), || idle = device_idle());
        idle
    })
}

/// `len` values of `T` in page-locked host memory mapped into the devices' address space
/// ("zero-copy": `cudaHostAlloc` with `cudaHostAllocMapped`, then `cudaHostGetDevicePointer`).
/// Kernels read and write it through [`ptr`](Self::ptr), over the bus; the host reads and
/// writes it in place. No copy is queued to bring a value back: a flag a kernel writes is
/// on the host once the kernel's work is done, which makes this the cheapest way for a host
/// loop to learn a kernel's decision.
///
/// # Host access is atomic
/// The device may write an element while the host reads it, which for plain Rust reads
/// would be a data race. So the contents are never handed out as a slice or reference:
/// [`load`](Self::load), [`store`](Self::store) and [`to_vec`](Self::to_vec) access one
/// element at a time with an atomic operation, and the element types are those the host has
/// atomics for ([`MappedWord`]). What you can rely on:
/// - once the work that wrote an element has completed and the host has seen it complete
///   ([`Stream::synchronize`](crate::Stream::synchronize), [`Event::synchronize`](crate::Event::synchronize)),
///   a load returns what the device wrote;
/// - while that work runs, a load returns the old value or one the device wrote: a wrong
///   value at worst, never undefined behaviour (every bit pattern is a valid element);
/// - kernels launched after a store see it; a running kernel sees it once it reaches the
///   device, if it reads the element with a `volatile` or system-scope atomic load.
///
/// # Freeing
/// The memory lives while the buffer, a [`DevicePtr`] from it, or a graph or exec holding
/// one is alive (see the crate docs, "Ownership"). When the last of them is dropped, the
/// drop waits for every device with an active context (`cudaDeviceSynchronize`), since any
/// device may reach mapped memory, then calls `cudaFreeHost`: no kernel, copy or graph
/// launch still queued can touch it afterwards. If a wait fails, the memory is leaked and
/// the error kept for [`take_unreported_errors`](crate::take_unreported_errors).
///
/// # Requirements
/// The current device must map host memory (`cudaDevAttrCanMapHostMemory`), or the
/// allocation is `CudaError::InvalidArgument` naming the device
/// ([`Unsupported::MapHostMemory`](crate::refusal::Unsupported::MapHostMemory)); the runtime's contexts
/// allow mapping (`cudaDeviceMapHost` is implicit for them). Reads over the bus are slow:
/// keep bulk data in a [`DeviceBuffer`](crate::DeviceBuffer) and map flags, counters and
/// small results.
///
/// ```no_run
/// use cuda_graph::{kernel::LaunchConfig, DevicePtr, MappedBuffer, Stream};
/// cuda_graph::kernels! {
///     // SAFETY: add_scalar writes data[i] only for i < n; private, launched with n = 2.
///     unsafe fn add_scalar(data: DevicePtr<u32>, n: u32, value: u32);
/// }
/// let stream = Stream::new()?;
/// let flags = MappedBuffer::from_slice(&[1u32, 2])?;
/// add_scalar().launch(&stream, LaunchConfig::new(1u32, 32u32), (flags.ptr(), 2, 10))?;
/// stream.synchronize()?;
/// assert_eq!(flags.load(1), 12); // read in place: no copy was queued
/// flags.store(0, 0); // the next kernel reads 0
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct MappedBuffer<T: MappedWord> {
    allocation: Arc<MappedAllocation>,
    len: usize,
    _element: PhantomData<T>,
}

impl<T: MappedWord> fmt::Debug for MappedBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MappedBuffer")
            .field("host", &self.allocation.host)
            .field("device", &format_args!("{:#x}", self.allocation.device))
            .field("len", &self.len)
            .finish()
    }
}

impl<T: MappedWord> MappedBuffer<T> {
    /// `len` zeroed elements, mapped for the current device (zero elements allocate nothing
    /// and call no CUDA function).
    ///
    /// ```no_run
    /// let flags = cuda_graph::MappedBuffer::<u64>::zeroed(4)?;
    /// assert_eq!(flags.to_vec(), [0, 0, 0, 0]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn zeroed(len: usize) -> Result<MappedBuffer<T>> {
        let bytes = bytes_for::<T>(len, "MappedBuffer")?;
        let allocation = MappedAllocation::new(bytes, align_of::<T>())?;
        Ok(MappedBuffer { allocation: Arc::new(allocation), len, _element: PhantomData })
    }

    /// A mapped copy of `data`.
    ///
    /// ```no_run
    /// let values = cuda_graph::MappedBuffer::from_slice(&[1.5f32, -2.0])?;
    /// assert_eq!(values.load(1), -2.0);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn from_slice(data: &[T]) -> Result<MappedBuffer<T>> {
        let buffer = MappedBuffer::zeroed(data.len())?;
        for (index, &value) in data.iter().enumerate() {
            buffer.store(index, value);
        }
        Ok(buffer)
    }

    element_counts!("MappedBuffer");

    /// Element `index`, read in place with one atomic load (see "Host access is atomic"
    /// above): after the work that wrote it has been waited for, the value it wrote.
    ///
    /// # Panics
    /// If `index` is not below [`len`](Self::len), like slice indexing.
    ///
    /// ```no_run
    /// let flag = cuda_graph::MappedBuffer::from_slice(&[1u32])?;
    /// // ... a kernel clears it, the stream is synchronized ...
    /// let go_on = flag.load(0) != 0;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn load(&self, index: usize) -> T {
        // SAFETY: `element` checked the index; the host touches mapped memory only through
        // these atomic accesses.
        unsafe { T::load(self.element(index)) }
    }

    /// Writes `value` at `index` with one atomic store (see "Host access is atomic" above).
    ///
    /// # Panics
    /// If `index` is not below [`len`](Self::len), like slice indexing.
    ///
    /// ```no_run
    /// let flag = cuda_graph::MappedBuffer::<u32>::zeroed(1)?;
    /// flag.store(0, 1);
    /// assert_eq!(flag.load(0), 1);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn store(&self, index: usize, value: T) {
        // SAFETY: as in `load`.
        unsafe { T::store(self.element(index), value) }
    }

    /// Every element, each by one atomic load (so a kernel still writing may leave some old
    /// and some new).
    ///
    /// ```no_run
    /// let counters = cuda_graph::MappedBuffer::from_slice(&[3i32, 4])?;
    /// assert_eq!(counters.to_vec(), [3, 4]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn to_vec(&self) -> Vec<T> {
        (0..self.len).map(|index| self.load(index)).collect()
    }

    /// The device address of the first element, as kernels receive a `T*` (a null address
    /// for zero elements). It shares ownership of the memory: a launch, graph or exec that
    /// holds it keeps the memory mapped (see "Freeing" above).
    ///
    /// ```no_run
    /// let flag = cuda_graph::MappedBuffer::<u32>::zeroed(1)?;
    /// let for_kernels = flag.ptr();
    /// assert_eq!(for_kernels.len(), 1);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn ptr(&self) -> DevicePtr<T> {
        DevicePtr::owned(self.allocation.device, self.len, self.allocation.clone())
    }

    /// The owner handle that graphs keep to hold this memory alive.
    ///
    /// ```
    /// let flag = cuda_graph::MappedBuffer::<u32>::zeroed(0)?;
    /// let owner = flag.keep_alive();
    /// drop(flag); // the memory stays until `owner` is dropped too
    /// drop(owner);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn keep_alive(&self) -> KeepAlive {
        self.allocation.clone()
    }

    /// The host address of element `index`, checked against the length.
    fn element(&self, index: usize) -> *mut T {
        assert!(index < self.len, "MappedBuffer: index {index} out of range for {} elements", self.len);
        // In bounds: the allocation holds `len` elements (none for zero, where the assert
        // above has already refused every index).
        self.allocation.host.cast::<T>().wrapping_add(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_mapped_buffer_needs_no_cuda() {
        let empty = MappedBuffer::<u64>::zeroed(0).unwrap();
        assert!(empty.is_empty());
        assert_eq!((empty.len(), empty.bytes()), (0, 0));
        assert_eq!(empty.to_vec(), Vec::<u64>::new());
        let ptr = empty.ptr();
        assert_eq!((ptr.addr(), ptr.len()), (0, 0));
        assert!(ptr.keep_alive().unwrap().downcast_ref::<MappedAllocation>().is_some());
        assert!(MappedBuffer::<f32>::from_slice(&[]).unwrap().is_empty());
    }

    #[test]
    #[should_panic(expected = "index 0 out of range for 0 elements")]
    fn loads_past_the_end_panic_like_slice_indexing() {
        MappedBuffer::<u32>::zeroed(0).unwrap().load(0);
    }

    #[test]
    fn the_host_accesses_are_atomic_and_keep_every_bit() {
        // Host memory that is not mapped: the accesses are the same atomics.
        let mut words = [0u64; 2];
        let base = words.as_mut_ptr();
        // SAFETY: `base` and `base + 1` are aligned, valid u64s touched only by these calls.
        unsafe {
            sealed::AtomicWord::store(base, u64::MAX - 1);
        }
        // SAFETY: as above, an f64 over the second u64.
        unsafe {
            sealed::AtomicWord::store(base.wrapping_add(1).cast::<f64>(), -0.0f64);
        }
        // SAFETY: as above.
        let first: u64 = unsafe { sealed::AtomicWord::load(base) };
        // SAFETY: as above.
        let second: f64 = unsafe { sealed::AtomicWord::load(base.wrapping_add(1).cast::<f64>()) };
        assert_eq!(first, u64::MAX - 1);
        assert_eq!(second.to_bits(), (-0.0f64).to_bits());
        assert_eq!(words, [u64::MAX - 1, 1 << 63]);
    }

    #[test]
    fn oversized_mapped_buffers_are_refused_before_cuda() {
        let err = MappedBuffer::<u64>::zeroed(usize::MAX / 4).unwrap_err();
        let overflow = crate::refusal::Overflow::Elements { len: usize::MAX / 4, element_bytes: 8 };
        assert_eq!(err.refusal(), Some(&overflow.into()), "{err}");
    }

    #[test]
    fn a_mapped_buffer_is_shareable_between_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<MappedBuffer<u32>>();
    }
}
