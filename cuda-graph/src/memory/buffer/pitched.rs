//! Pitched allocations (`cudaMallocPitch`): rows padded by CUDA for aligned access, freed
//! like any `cudaMalloc` memory.

use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64};

use cudart_graph_sys as sys;

use super::{finish_on_legacy_stream, Allocation, FreeKind};
use crate::device::{note_in_use, Device};
use crate::error::{check, CudaError, Result};

impl Allocation {
    /// `height` zeroed rows of at least `row_bytes` bytes each, for `call`; returns the
    /// allocation (`pitch * height` bytes) and CUDA's pitch. Both sizes must be non-zero.
    pub(crate) fn pitched(
        call: &'static str,
        row_bytes: usize,
        height: usize,
    ) -> Result<(Allocation, usize)> {
        if row_bytes == 0 || height == 0 {
            return Err(CudaError::invalid(
                call,
                format!("{row_bytes} bytes by {height} rows: nothing to allocate"),
            ));
        }
        let device = Device::current()?;
        let (mut raw, mut pitch) = (ptr::null_mut(), 0usize);
        // SAFETY: `raw` and `pitch` are valid out-pointers.
        check(unsafe { sys::cudaMallocPitch(&mut raw, &mut pitch, row_bytes, height) }, "cudaMallocPitch")?;
        note_in_use(device);
        let allocation = Allocation {
            ptr: raw,
            bytes: pitch.saturating_mul(height),
            free: FreeKind::Synchronous { device: device.ordinal() },
            unordered_use: AtomicBool::new(false),
            foreign_use: AtomicU64::new(0),
        };
        if pitch < row_bytes || pitch.checked_mul(height).is_none() {
            return Err(CudaError::invalid(
                call,
                format!("CUDA returned pitch {pitch} for rows of {row_bytes} bytes"),
            ));
        }
        // SAFETY: the allocation holds `pitch * height` bytes (CUDA's pitch, checked above).
        check(unsafe { sys::cudaMemset(allocation.ptr, 0, allocation.bytes) }, "cudaMemset")?;
        finish_on_legacy_stream("cudaStreamSynchronize after cudaMemset")?;
        Ok((allocation, pitch))
    }
}
