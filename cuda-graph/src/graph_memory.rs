//! Graph memory: what a device's graphs hold through memory-alloc nodes, and giving it back.

use std::ffi::c_void;

use cudart_graph_sys as sys;

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
            used: self.graph_memory_attribute(A::cudaGraphMemAttrUsedMemCurrent)?,
            used_high: self.graph_memory_attribute(A::cudaGraphMemAttrUsedMemHigh)?,
            reserved: self.graph_memory_attribute(A::cudaGraphMemAttrReservedMemCurrent)?,
            reserved_high: self.graph_memory_attribute(A::cudaGraphMemAttrReservedMemHigh)?,
        })
    }

    /// Resets both high watermarks to the current values (CUDA accepts only a reset to 0,
    /// which it applies as "start measuring again").
    pub fn reset_graph_memory_peaks(self) -> Result<()> {
        use sys::cudaGraphMemAttributeType as A;
        for attribute in [A::cudaGraphMemAttrUsedMemHigh, A::cudaGraphMemAttrReservedMemHigh] {
            let mut zero: u64 = 0;
            // SAFETY: for the high-watermark attributes CUDA reads one u64 (which must be 0)
            // through the pointer, valid and writable for the call.
            let status = unsafe {
                sys::cudaDeviceSetGraphMemAttribute(
                    self.ordinal(),
                    attribute,
                    (&mut zero as *mut u64).cast::<c_void>(),
                )
            };
            check(status, "cudaDeviceSetGraphMemAttribute")?;
        }
        Ok(())
    }

    /// Gives the memory the graph allocator holds but no graph uses back to the system
    /// (`cudaDeviceGraphMemTrim`).
    pub fn trim_graph_memory(self) -> Result<()> {
        // SAFETY: takes a device ordinal only; CUDA validates it.
        check(unsafe { sys::cudaDeviceGraphMemTrim(self.ordinal()) }, "cudaDeviceGraphMemTrim")
    }

    fn graph_memory_attribute(self, attribute: sys::cudaGraphMemAttributeType) -> Result<u64> {
        let mut value: u64 = 0;
        // SAFETY: for the four counters CUDA writes one cuuint64_t (a u64) through the pointer,
        // a valid, writable u64 for the call.
        let status = unsafe {
            sys::cudaDeviceGetGraphMemAttribute(
                self.ordinal(),
                attribute,
                (&mut value as *mut u64).cast::<c_void>(),
            )
        };
        check(status, "cudaDeviceGetGraphMemAttribute")?;
        Ok(value)
    }
}
