//! Raw device memory in and out: adopting a `cudaMalloc` allocation
//! ([`DeviceBuffer::from_raw`]), handing one over ([`DeviceBuffer::into_raw`]), and pointers
//! into memory another owner keeps ([`DevicePtr::from_raw_with_owner`]); a pointer that keeps
//! nothing is [`DevicePtr::from_raw`].

use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use crate::runtime as sys;

use super::{bytes_for, Allocation, DeviceBuffer, DevicePtr, FreeKind};
use crate::error::{check, Result};
use crate::memory::{DeviceRepr, KeepAlive};

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Takes ownership of `len` elements of device memory another library allocated with
    /// `cudaMalloc` (or the driver's `cuMemAlloc`): the buffer frees it as it frees its own
    /// (waiting for the device, then `cudaFree`), once the buffer and every graph, exec and
    /// pointer sharing it are gone. Whatever the memory holds is a valid `T` ([`DeviceRepr`]).
    ///
    /// # Safety
    /// `ptr` must be the start of a live `cudaMalloc`/`cuMemAlloc` allocation of the current
    /// device of at least `len * size_of::<T>()` bytes (or null with `len` 0), which nothing
    /// else frees: ownership passes to the returned buffer.
    ///
    /// ```no_run
    /// use cuda_graph::{sys, DeviceBuffer};
    /// let mut raw = std::ptr::null_mut();
    /// // SAFETY: `raw` is a valid out-pointer.
    /// assert_eq!(unsafe { sys::cudaMalloc(&mut raw, 16) }, sys::cudaError::cudaSuccess);
    /// // SAFETY: 16 bytes of cudaMalloc memory on the current device, owned by nothing else.
    /// let buffer = unsafe { DeviceBuffer::<u32>::from_raw(raw, 4) }?;
    /// assert_eq!(buffer.len(), 4);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn from_raw(ptr: *mut c_void, len: usize) -> Result<DeviceBuffer<T>> {
        let bytes = bytes_for::<T>(len, "DeviceBuffer::from_raw")?;
        let mut device = 0;
        // SAFETY: `device` is a valid, writable i32.
        check(unsafe { sys::cudaGetDevice(&mut device) }, "cudaGetDevice")?;
        let allocation = Allocation {
            ptr,
            bytes,
            free: FreeKind::Synchronous { device },
            unordered_use: AtomicBool::new(false),
            foreign_use: AtomicU64::new(0),
        };
        Ok(DeviceBuffer::from_allocation(allocation, len))
    }

    /// Hands the memory over: returns the device address without freeing it, for another
    /// library to own (free it with `cudaFree`, after the work queued so far that uses it:
    /// `cudaFree` is not documented to wait). Refused, giving the buffer back, while a
    /// pointer, graph or exec shares the memory, or when it is stream-ordered memory
    /// ([`alloc_async`](DeviceBuffer::alloc_async)), which only its pool may free.
    ///
    /// ```no_run
    /// use cuda_graph::{sys, DeviceBuffer};
    /// let buffer = DeviceBuffer::<u32>::zeroed(4)?;
    /// let raw = buffer.into_raw().expect("the only owner of cudaMalloc memory");
    /// // SAFETY: nothing else owns the memory now, and no work uses it.
    /// assert_eq!(unsafe { sys::cudaFree(raw) }, sys::cudaError::cudaSuccess);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn into_raw(self) -> std::result::Result<*mut c_void, DeviceBuffer<T>> {
        if !matches!(self.allocation.free, FreeKind::Synchronous { .. }) {
            return Err(self);
        }
        let len = self.len;
        match Arc::try_unwrap(self.allocation) {
            Ok(mut allocation) => {
                // A null allocation drops without freeing anything.
                Ok(std::mem::replace(&mut allocation.ptr, ptr::null_mut()))
            }
            Err(allocation) => Err(DeviceBuffer { allocation, len, _element: PhantomData }),
        }
    }
}

impl<T> DevicePtr<T> {
    /// A pointer to device memory that `owner` keeps alive (an allocation of another
    /// library, say): kernels, copies, graphs and execs given this pointer keep a clone of
    /// `owner`, as they keep a [`DeviceBuffer`], so the memory lives until the last of them
    /// is dropped.
    ///
    /// # Safety
    /// `addr` must be a device address valid for `len` elements of `T` for as long as
    /// `owner` (or a clone) is alive; dropping the last clone must not free the memory
    /// before the work queued until then that uses it has completed, on any stream (wait for
    /// the device before freeing, as `cudaMalloc` memory's owners here do); and that drop,
    /// if it calls CUDA, must not do so inside a host function
    /// ([`drop_outside_host_fn`](crate::drop_outside_host_fn)).
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use cuda_graph::{DeviceBuffer, DevicePtr};
    /// let memory = DeviceBuffer::<u32>::zeroed(8)?;
    /// let owner = memory.keep_alive();
    /// // SAFETY: `owner` is the buffer's own allocation, which frees after the device is idle.
    /// let ptr = unsafe { DevicePtr::<u32>::from_raw_with_owner(memory.ptr().addr(), 8, owner) };
    /// assert_eq!(ptr.len(), 8);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn from_raw_with_owner(addr: u64, len: usize, owner: KeepAlive) -> DevicePtr<T> {
        DevicePtr::owned(addr, len, owner)
    }
}
