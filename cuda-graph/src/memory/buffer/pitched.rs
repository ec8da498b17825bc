//! Pitched allocations (`cudaMallocPitch`, `cudaMalloc3D`): rows padded by CUDA for aligned
//! access, freed like any `cudaMalloc` memory.

use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64};

use crate::runtime as sys;

use super::{finish_on_legacy_stream, Allocation, FreeKind};
use crate::device::{note_in_use, Device};
use crate::error::{check, CudaError, Result};

impl Allocation {
    /// `height` zeroed rows of at least `row_bytes` bytes each, for `call`; returns the
    /// allocation (`pitch * height` bytes) and CUDA's pitch. Both sizes must be non-zero.
    pub(crate) fn pitched(
        call: &'static str, row_bytes: usize, height: usize,
    ) -> Result<(Allocation, usize)> {
        if row_bytes == 0 || height == 0 {
            return Err(CudaError::refused(
                call,
                crate::Refusal::EmptyAllocation { row_bytes, height, depth: None },
            ));
        }
        let device = Device::current()?;
        let (mut raw, mut pitch) = (ptr::null_mut(), 0usize);
        // SAFETY: `raw` and `pitch` are valid out-pointers.
        check(unsafe { sys::cudaMallocPitch(&mut raw, &mut pitch, row_bytes, height) }, "cudaMallocPitch")?;
        Allocation::zeroed_rows(call, device, raw, (row_bytes, pitch), Some(height))
    }

    /// Takes ownership of `raw`, `rows` rows (`None`: too many to count) of `pitch` bytes
    /// that CUDA allocated on `device` for rows of `row_bytes`, checks the pitch and zeroes it.
    fn zeroed_rows(
        call: &'static str, device: Device, raw: *mut std::ffi::c_void, (row_bytes, pitch): (usize, usize),
        rows: Option<usize>,
    ) -> Result<(Allocation, usize)> {
        note_in_use(device);
        let bytes = rows.and_then(|rows| pitch.checked_mul(rows));
        let allocation = Allocation {
            ptr: raw,
            bytes: bytes.unwrap_or(usize::MAX),
            free: FreeKind::Synchronous { device: device.ordinal() },
            unordered_use: AtomicBool::new(false),
            foreign_use: AtomicU64::new(0),
        };
        if pitch < row_bytes || bytes.is_none() {
            return Err(CudaError::refused(call, crate::Refusal::UnexpectedPitch { pitch, row_bytes }));
        }
        // SAFETY: the allocation holds `pitch * rows` bytes (CUDA's pitch, checked above).
        check(unsafe { sys::cudaMemset(allocation.ptr, 0, allocation.bytes) }, "cudaMemset")?;
        finish_on_legacy_stream("cudaStreamSynchronize after cudaMemset")?;
        Ok((allocation, pitch))
    }
}

impl Allocation {
    /// `depth` slices of `height` zeroed rows of at least `row_bytes` bytes each
    /// (`cudaMalloc3D`), for `call`; returns the allocation (`pitch * height * depth` bytes)
    /// and CUDA's pitch. All three sizes must be non-zero.
    pub(crate) fn volume(
        call: &'static str, row_bytes: usize, height: usize, depth: usize,
    ) -> Result<(Allocation, usize)> {
        if row_bytes == 0 || height == 0 || depth == 0 {
            return Err(CudaError::refused(
                call,
                crate::Refusal::EmptyAllocation { row_bytes, height, depth: Some(depth) },
            ));
        }
        let device = Device::current()?;
        let mut raw = sys::cudaPitchedPtr::default();
        let extent = sys::cudaExtent { width: row_bytes, height, depth };
        // SAFETY: `raw` is a valid out-pointer.
        check(unsafe { sys::cudaMalloc3D(&mut raw, extent) }, "cudaMalloc3D")?;
        Allocation::zeroed_rows(call, device, raw.ptr, (row_bytes, raw.pitch), height.checked_mul(depth))
    }
}
