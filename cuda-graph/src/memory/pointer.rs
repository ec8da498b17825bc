//! What kind of memory an address points to (`cudaPointerGetAttributes`).

use std::ffi::c_void;
use std::fmt;

use crate::runtime as sys;

use crate::error::{check, Result};

/// The kind of memory an address belongs to, as CUDA sees it (`cudaMemoryType`).
///
/// ```
/// use cuda_graph::memory::MemoryKind;
/// assert_eq!(MemoryKind::from_code(2), MemoryKind::Device);
/// assert_eq!(MemoryKind::Pinned.to_string(), "pinned host");
/// assert!(MemoryKind::Managed.is_device_accessible() && !MemoryKind::Pageable.is_device_accessible());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MemoryKind {
    /// Host memory CUDA does not know (`cudaMemoryTypeUnregistered`): pageable memory from
    /// the Rust allocator or the stack, or an address that is not memory at all.
    Pageable,
    /// Page-locked host memory (`cudaMemoryTypeHost`): a [`PinnedBuffer`](crate::PinnedBuffer),
    /// or memory registered with CUDA.
    Pinned,
    /// Device memory (`cudaMemoryTypeDevice`): a [`DeviceBuffer`](crate::DeviceBuffer), pool
    /// or graph allocation.
    Device,
    /// Managed (unified) memory (`cudaMemoryTypeManaged`).
    Managed,
    /// A kind this crate does not know, by its `cudaMemoryType` value.
    Unknown(u32),
}

impl MemoryKind {
    /// The kind of memory at address `addr`, host or device (`cudaPointerGetAttributes`).
    /// CUDA only looks the address up; it never reads or writes through it, so any address
    /// may be asked about.
    ///
    /// ```no_run
    /// use cuda_graph::{memory::MemoryKind, DeviceBuffer, PinnedBuffer};
    /// let device = DeviceBuffer::<u32>::zeroed(4)?;
    /// assert_eq!(MemoryKind::of(device.ptr().addr())?, MemoryKind::Device);
    /// let pinned = PinnedBuffer::from_slice(&[1u32, 2])?;
    /// assert_eq!(MemoryKind::of(pinned.as_raw() as u64)?, MemoryKind::Pinned);
    /// let pageable = vec![0u32; 4];
    /// assert_eq!(MemoryKind::of(pageable.as_ptr() as u64)?, MemoryKind::Pageable);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn of(addr: u64) -> Result<MemoryKind> {
        let mut attributes = sys::cudaPointerAttributes::default();
        check(
            // SAFETY: `attributes` is a writable cudaPointerAttributes; CUDA looks the address
            // up in its tables and never dereferences it.
            unsafe { sys::cudaPointerGetAttributes(&mut attributes, addr as *const c_void) },
            "cudaPointerGetAttributes",
        )?;
        Ok(MemoryKind::from_code(attributes.type_.0))
    }

    /// Maps a `cudaMemoryType` value.
    pub fn from_code(code: u32) -> MemoryKind {
        use sys::cudaMemoryType as T;
        match sys::cudaMemoryType(code) {
            T::cudaMemoryTypeUnregistered => MemoryKind::Pageable,
            T::cudaMemoryTypeHost => MemoryKind::Pinned,
            T::cudaMemoryTypeDevice => MemoryKind::Device,
            T::cudaMemoryTypeManaged => MemoryKind::Managed,
            _ => MemoryKind::Unknown(code),
        }
    }

    /// True for memory that lives on a device or migrates to it on demand (device and
    /// managed memory): what kernels and device-side copies may use without the host.
    pub fn is_device_accessible(self) -> bool {
        matches!(self, MemoryKind::Device | MemoryKind::Managed)
    }
}

impl fmt::Display for MemoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemoryKind::Pageable => "pageable host",
            MemoryKind::Pinned => "pinned host",
            MemoryKind::Device => "device",
            MemoryKind::Managed => "managed",
            MemoryKind::Unknown(code) => return write!(f, "unknown ({code})"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cuda_memory_type_maps_to_its_kind() {
        use sys::cudaMemoryType as T;
        let cases = [
            (T::cudaMemoryTypeUnregistered, MemoryKind::Pageable),
            (T::cudaMemoryTypeHost, MemoryKind::Pinned),
            (T::cudaMemoryTypeDevice, MemoryKind::Device),
            (T::cudaMemoryTypeManaged, MemoryKind::Managed),
            (sys::cudaMemoryType(9), MemoryKind::Unknown(9)),
        ];
        for (raw, kind) in cases {
            assert_eq!(MemoryKind::from_code(raw.0), kind, "{raw:?}");
        }
    }

    #[test]
    fn only_device_and_managed_memory_are_device_accessible() {
        let accessible: Vec<bool> =
            [0, 1, 2, 3, 9].iter().map(|&code| MemoryKind::from_code(code).is_device_accessible()).collect();
        assert_eq!(accessible, [false, false, true, true, false]);
        assert_eq!(MemoryKind::Unknown(9).to_string(), "unknown (9)");
        assert_eq!(MemoryKind::Pageable.to_string(), "pageable host");
    }
}
