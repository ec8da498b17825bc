//! Graph memory: what a device's graphs hold through memory-alloc nodes, and giving it back.

use std::ffi::c_void;
use std::ptr;

use crate::runtime as sys;

use crate::device::Device;
use crate::error::{check, Result};

/// The graph allocator's counters for one device (`cudaDeviceGetGraphMemAttribute`), in bytes.
///
/// ```no_run
/// let usage = cuda_graph::Device::get(0)?.graph_memory_usage()?;
/// assert!(usage.used <= usage.reserved);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GraphMemoryUsage {
    /// Memory in use by graph allocations now (`UsedMemCurrent`).
    pub used: u64,
    /// Highest `used` since the last reset (`UsedMemHigh`).
    pub used_high: u64,
    /// Memory the graph allocator holds now, in use or not (`ReservedMemCurrent`).
    pub reserved: u64,
    /// Highest `reserved` since the last reset (`ReservedMemHigh`).
    pub reserved_high: u64,
}

/// `cudaDeviceGetGraphMemAttribute` and `cudaDeviceSetGraphMemAttribute`.
type AttributeCall =
    unsafe extern "C" fn(i32, sys::cudaGraphMemAttributeType, *mut c_void) -> sys::cudaError_t;

impl Device {
    /// The graph allocator's counters (memory-alloc nodes of all graphs on this device).
    ///
    /// ```no_run
    /// let device = cuda_graph::Device::get(0)?;
    /// let usage = device.graph_memory_usage()?;
    /// println!("graphs hold {} bytes, peak {}", usage.reserved, usage.reserved_high);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn graph_memory_usage(self) -> Result<GraphMemoryUsage> {
        use sys::cudaGraphMemAttributeType as A;
        Ok(GraphMemoryUsage {
            used: self.graph_memory_attribute(A::cudaGraphMemAttrUsedMemCurrent, false)?,
            used_high: self.graph_memory_attribute(A::cudaGraphMemAttrUsedMemHigh, false)?,
            reserved: self.graph_memory_attribute(A::cudaGraphMemAttrReservedMemCurrent, false)?,
            reserved_high: self.graph_memory_attribute(A::cudaGraphMemAttrReservedMemHigh, false)?,
        })
    }

    /// Resets both high watermarks to the current values (CUDA accepts only a reset to 0,
    /// which it applies as "start measuring again").
    pub fn reset_graph_memory_peaks(self) -> Result<()> {
        use sys::cudaGraphMemAttributeType as A;
        for attribute in [A::cudaGraphMemAttrUsedMemHigh, A::cudaGraphMemAttrReservedMemHigh] {
            self.graph_memory_attribute(attribute, true)?;
        }
        Ok(())
    }

    /// Gives the memory the graph allocator holds but no graph uses back to the system
    /// (`cudaDeviceGraphMemTrim`).
    pub fn trim_graph_memory(self) -> Result<()> {
        // SAFETY: takes a device ordinal only; CUDA validates it.
        check(unsafe { sys::cudaDeviceGraphMemTrim(self.ordinal()) }, "cudaDeviceGraphMemTrim")
    }

    /// Reads `attribute` (`cudaDeviceGetGraphMemAttribute`), or with `reset` sets it to 0
    /// (`cudaDeviceSetGraphMemAttribute`, which accepts only 0, for the high watermarks).
    fn graph_memory_attribute(self, attribute: sys::cudaGraphMemAttributeType, reset: bool) -> Result<u64> {
        let (call, name): (AttributeCall, _) = if reset {
            (sys::cudaDeviceSetGraphMemAttribute, "cudaDeviceSetGraphMemAttribute")
        } else {
            (sys::cudaDeviceGetGraphMemAttribute, "cudaDeviceGetGraphMemAttribute")
        };
        let mut value = 0u64;
        // SAFETY: every graph memory attribute is a cuuint64_t (a u64), which both calls read
        // or write through the pointer, to `value`, valid and writable for the call.
        check(unsafe { call(self.ordinal(), attribute, ptr::from_mut(&mut value).cast::<c_void>()) }, name)?;
        Ok(value)
    }
}
