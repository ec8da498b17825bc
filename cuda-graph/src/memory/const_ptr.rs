//! `DeviceConstPtr<T>`: a read-only view of a [`DevicePtr<T>`], for kernels whose parameter is
//! `const T*`.

use std::fmt;

use super::{DeviceBuffer, DevicePtr, DeviceRepr, KeepAlive};

/// A typed device address that a kernel may only read: it matches a kernel parameter
/// `const T*` and nothing else, where a [`DevicePtr<T>`] (which carries permission to write)
/// matches `T*` and `const T*`. It keeps the memory alive like the `DevicePtr` it came from.
///
/// ```no_run
/// use cuda_graph::{DeviceBuffer, DeviceConstPtr};
/// let input = DeviceBuffer::from_slice(&[1.0f32, 2.0])?;
/// let read_only: DeviceConstPtr<f32> = input.const_ptr();
/// assert_eq!(read_only.addr(), input.ptr().addr());
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct DeviceConstPtr<T> {
    ptr: DevicePtr<T>,
}

impl<T> Clone for DeviceConstPtr<T> {
    fn clone(&self) -> Self {
        DeviceConstPtr { ptr: self.ptr.clone() }
    }
}

impl<T> fmt::Debug for DeviceConstPtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceConstPtr({:#x}, len {})", self.ptr.addr(), self.ptr.len())
    }
}

impl<T> DevicePtr<T> {
    /// This pointer as a read-only one (for a kernel parameter `const T*`).
    ///
    /// ```no_run
    /// # let buffer = cuda_graph::DeviceBuffer::<u32>::zeroed(8)?;
    /// let read_only = buffer.ptr().as_const();
    /// assert_eq!(read_only.len(), 8);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn as_const(self) -> DeviceConstPtr<T> {
        DeviceConstPtr { ptr: self }
    }
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// A read-only typed pointer to the first element (for a kernel parameter `const T*`),
    /// sharing ownership of the memory: `self.ptr().as_const()`.
    ///
    /// ```no_run
    /// let buffer = cuda_graph::DeviceBuffer::from_slice(&[3u32, 4])?;
    /// assert_eq!(buffer.const_ptr().len(), 2);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn const_ptr(&self) -> DeviceConstPtr<T> {
        self.ptr().as_const()
    }
}

impl<T> DeviceConstPtr<T> {
    /// The device address.
    pub fn addr(&self) -> u64 {
        self.ptr.addr()
    }

    /// Elements from here to the end of the allocation.
    pub fn len(&self) -> usize {
        self.ptr.len()
    }

    /// True when no element is left.
    pub fn is_empty(&self) -> bool {
        self.ptr.is_empty()
    }

    /// The pointer `elements` further on, checked to stay inside the allocation.
    ///
    /// ```no_run
    /// # let buffer = cuda_graph::DeviceBuffer::<u32>::zeroed(8)?;
    /// let tail = buffer.const_ptr().offset(6)?;
    /// assert_eq!(tail.len(), 2);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn offset(&self, elements: usize) -> crate::Result<DeviceConstPtr<T>> {
        Ok(DeviceConstPtr { ptr: self.ptr.offset(elements)? })
    }

    /// What keeps the memory alive, if this crate owns it.
    pub fn keep_alive(&self) -> Option<KeepAlive> {
        self.ptr.keep_alive()
    }
}
