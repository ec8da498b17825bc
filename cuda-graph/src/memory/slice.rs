//! `DeviceSlice<T>`: a device address and an element count passed to a kernel as one
//! argument, the C++ `cuda_graph::slice<T>` of `cuda-build`'s `cuda_graph.cuh`.

use std::fmt;

use super::buffer::check_within;
use super::{DeviceBuffer, DevicePtr, DeviceRepr, KeepAlive};
use crate::error::Result;

/// A range of device elements as one kernel argument: the kernel receives a
/// `cuda_graph::slice<T>` (or `slice<const T>`) holding the address and the length together,
/// so it can bound every access by the length it was given instead of trusting a separate
/// `n`; `slice[i]` traps past the end. That is how a kernel keeps the promise a
/// [`kernels!`](crate::kernels!) declaration makes by construction. It keeps the memory alive
/// like a [`DevicePtr`], and carries permission to write.
///
/// ```no_run
/// use cuda_graph::{kernel::LaunchConfig, DeviceBuffer, DeviceSlice, Stream};
/// cuda_graph::kernels! {
///     // SAFETY: fill_slice writes out[i] only for i < out.size().
///     unsafe fn fill_slice(out: DeviceSlice<u32>, value: u32);
/// }
/// let stream = Stream::new()?;
/// let out = DeviceBuffer::<u32>::zeroed(1000)?;
/// fill_slice().launch(&stream, LaunchConfig::for_elements(1000, 256), (out.slice(), 7))?;
/// // Only the first 10 elements: a launch with more threads cannot write past them.
/// fill_slice().launch(&stream, LaunchConfig::for_elements(1000, 256), (out.slice().first(10)?, 8))?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct DeviceSlice<T> {
    ptr: DevicePtr<T>,
    len: usize,
}

/// The bytes a kernel receives for a [`DeviceSlice`]: the layout of `cuda_graph::slice<T>`
/// (address, then element count; 16 bytes, 8-aligned).
///
/// ```
/// use cuda_graph::memory::RawDeviceSlice;
/// assert_eq!((size_of::<RawDeviceSlice>(), align_of::<RawDeviceSlice>()), (16, 8));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct RawDeviceSlice {
    /// Device address of the first element.
    pub addr: u64,
    /// Number of elements.
    pub len: u64,
}

impl<T> Clone for DeviceSlice<T> {
    fn clone(&self) -> Self {
        DeviceSlice { ptr: self.ptr.clone(), len: self.len }
    }
}

impl<T> fmt::Debug for DeviceSlice<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceSlice({:#x}, len {})", self.ptr.addr(), self.len)
    }
}

impl<T> DevicePtr<T> {
    /// The elements from here to the end of the allocation, as a slice argument.
    ///
    /// ```no_run
    /// # let buffer = cuda_graph::DeviceBuffer::<u32>::zeroed(8)?;
    /// assert_eq!(buffer.ptr().offset(2)?.into_slice().len(), 6);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn into_slice(self) -> DeviceSlice<T> {
        let len = self.len();
        DeviceSlice { ptr: self, len }
    }
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// The whole buffer as a slice argument (`cuda_graph::slice<T>` in the kernel), sharing
    /// ownership of the memory.
    ///
    /// ```no_run
    /// let buffer = cuda_graph::DeviceBuffer::<f32>::zeroed(100)?;
    /// assert_eq!(buffer.slice().len(), 100);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn slice(&self) -> DeviceSlice<T> {
        self.ptr().into_slice()
    }
}

impl<T> DeviceSlice<T> {
    /// The device address of the first element.
    pub fn addr(&self) -> u64 {
        self.ptr.addr()
    }

    /// The number of elements the kernel receives.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the slice has no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first `len` elements; an error if the slice has fewer.
    ///
    /// ```no_run
    /// # let buffer = cuda_graph::DeviceBuffer::<u32>::zeroed(8)?;
    /// assert_eq!(buffer.slice().first(3)?.len(), 3);
    /// assert!(buffer.slice().first(9).is_err());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn first(&self, len: usize) -> Result<DeviceSlice<T>> {
        self.check_fits("DeviceSlice::first", len, "asked")?;
        Ok(DeviceSlice { ptr: self.ptr.clone(), len })
    }

    /// The slice without its first `elements` elements; an error if it has fewer.
    ///
    /// ```no_run
    /// # let buffer = cuda_graph::DeviceBuffer::<u32>::zeroed(8)?;
    /// assert_eq!(buffer.slice().skip(6)?.len(), 2);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn skip(&self, elements: usize) -> Result<DeviceSlice<T>> {
        self.check_fits("DeviceSlice::skip", elements, "skipped")?;
        Ok(DeviceSlice { ptr: self.ptr.offset(elements)?, len: self.len - elements })
    }

    /// What keeps the memory alive, if this crate owns it.
    pub fn keep_alive(&self) -> Option<KeepAlive> {
        self.ptr.keep_alive()
    }

    /// The bytes the kernel receives.
    pub fn raw(&self) -> RawDeviceSlice {
        RawDeviceSlice { addr: self.ptr.addr(), len: self.len as u64 }
    }

    /// Refuses `n` elements `done` (asked, skipped) of a slice with fewer, for `call`.
    fn check_fits(&self, call: &'static str, n: usize, done: &'static str) -> Result<()> {
        check_within(call, n, self.len, |count, len| crate::refusal::Bounds::Slice { count, done, len })
    }
}
