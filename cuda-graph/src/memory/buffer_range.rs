//! Synchronous host-to-device copies into part of a [`DeviceBuffer`]: a run of elements, or
//! the bytes of one field of an element.

use crate::error::{CudaError, Result};
use crate::memory::buffer::memcpy_sync;
use crate::memory::{DeviceBuffer, DeviceRepr};

use crate::runtime as sys;

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Copies `data` into the buffer from element `offset` on, leaving the other elements as
    /// they are. Synchronous and ordered like [`copy_from_host`](DeviceBuffer::copy_from_host)
    /// (see "Host reads and writes" on [`DeviceBuffer`]): it has landed when this returns.
    /// Refused when `data` does not fit from `offset`.
    ///
    /// ```no_run
    /// let mut buffer = cuda_graph::DeviceBuffer::from_slice(&[1u32, 2, 3, 4])?;
    /// buffer.copy_from_host_at(1, &[20, 30])?;
    /// assert_eq!(buffer.to_vec()?, [1, 20, 30, 4]);
    /// assert!(buffer.copy_from_host_at(3, &[5, 6]).is_err()); // past the end
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_from_host_at(&mut self, offset: usize, data: &[T]) -> Result<()> {
        let end = range_end(offset, data.len(), self.len(), "DeviceBuffer::copy_from_host_at", "elements")?;
        debug_assert!(end <= self.len());
        let byte_offset = offset * size_of::<T>();
        // SAFETY: elements `offset..end` lie inside the allocation (checked above), so the
        // destination holds `size_of_val(data)` writable bytes from `byte_offset`; the source
        // is a live host slice of that many bytes, and T is plain data.
        unsafe { self.copy_in(byte_offset, data.as_ptr().cast(), size_of_val(data)) }
    }

    /// Copies `bytes` into the buffer from byte `byte_offset` on: part of an element, such as
    /// one field of a struct that kernels also write, leaving the other fields as they are.
    /// Any bytes are allowed, since every bit pattern is a valid `T` ([`DeviceRepr`]).
    /// Synchronous and ordered like [`copy_from_host`](DeviceBuffer::copy_from_host).
    ///
    /// ```no_run
    /// let mut pairs = cuda_graph::DeviceBuffer::from_slice(&[[1u32, 2], [3, 4]])?;
    /// // The second u32 of element 1 only.
    /// pairs.copy_bytes_from_host_at(12, &40u32.to_ne_bytes())?;
    /// assert_eq!(pairs.to_vec()?, [[1, 2], [3, 40]]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_bytes_from_host_at(&mut self, byte_offset: usize, bytes: &[u8]) -> Result<()> {
        range_end(byte_offset, bytes.len(), self.bytes(), "DeviceBuffer::copy_bytes_from_host_at", "bytes")?;
        // SAFETY: bytes `byte_offset..byte_offset + bytes.len()` lie inside the allocation
        // (checked above); the source is a live host slice of that many bytes; whatever
        // lands there leaves a valid T (DeviceRepr: every bit pattern is one).
        unsafe { self.copy_in(byte_offset, bytes.as_ptr().cast(), bytes.len()) }
    }

    /// Copies `len` host bytes from `src` to the buffer at `byte_offset` (synchronous).
    ///
    /// # Safety
    /// `byte_offset + len` is at most `self.bytes()`, `src` is valid for reading `len`
    /// bytes, and those bytes leave valid `T`s (any bytes do, for `DeviceRepr` types).
    unsafe fn copy_in(&mut self, byte_offset: usize, src: *const std::ffi::c_void, len: usize) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        // SAFETY: the caller promises `byte_offset + len <= bytes()`, and the allocation holds
        // `bytes()` bytes, so the result stays inside it.
        let dst = unsafe { self.as_raw().cast::<u8>().add(byte_offset) };
        // SAFETY: `dst` is device memory this buffer owns, valid for writing `len` bytes (see
        // above); `src` is host memory valid for reading them (the caller's promise).
        unsafe {
            memcpy_sync(self.device(), dst.cast(), src, len, sys::cudaMemcpyKind::cudaMemcpyHostToDevice)
        }
    }
}

/// `offset + count` when it is at most `len`, else the error naming `call`.
fn range_end(
    offset: usize, count: usize, len: usize, call: &'static str, unit: &'static str,
) -> Result<usize> {
    match offset.checked_add(count) {
        Some(end) if end <= len => Ok(end),
        _ => Err(CudaError::refused(call, crate::refusal::Bounds::Range { count, offset, len, unit })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_past_the_end_are_refused() {
        assert_eq!(range_end(1, 2, 4, "copy", "elements").unwrap(), 3);
        assert_eq!(range_end(4, 0, 4, "copy", "elements").unwrap(), 4);
        let err = range_end(3, 2, 4, "copy", "elements").unwrap_err();
        let range = crate::refusal::Bounds::Range { count: 2, offset: 3, len: 4, unit: "elements" };
        assert_eq!(err.refusal(), Some(&range.into()));
        // The text users read.
        assert_eq!(err.to_string(), "copy: 2 elements from offset 3 do not fit in a buffer of 4 elements");
        assert!(range_end(usize::MAX, 1, usize::MAX, "copy", "bytes").is_err());
    }
}
