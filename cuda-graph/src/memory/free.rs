//! Giving device memory back: with its device current, after the work that may still use it
//! (see `Allocation`'s `Drop` in `buffer.rs` and `memory::pool`, "Freeing"), including work
//! other devices queued on it.

use std::ffi::c_void;

use crate::runtime as sys;

use crate::release::record_drop_error;

/// The legacy default stream (`cudaStreamLegacy`), ordered after all work on blocking streams.
const LEGACY_STREAM: sys::cudaStream_t = 1 as sys::cudaStream_t;

/// The device mask of memory that code outside this crate was given (a buffer lent to cudarc):
/// any device may have queued work on it, on any stream. [`devices_idle`] waits for every
/// device whose primary context is active (one without a context has run nothing).
pub(crate) const EVERY_DEVICE: u64 = u64::MAX;

/// Waits for every device in `devices` (bit = ordinal; bit 63 stands for every device from 63
/// on; [`EVERY_DEVICE`]: every device with an active context): those whose streams used memory
/// of another device, which nothing on that device is ordered after. False (the error
/// recorded) when a wait failed: the memory must be leaked.
pub(crate) fn devices_idle(devices: u64) -> bool {
    if devices == 0 {
        return true;
    }
    let mut count = 0;
    // SAFETY: `count` is a valid, writable int.
    let status = unsafe { sys::cudaGetDeviceCount(&mut count) };
    if status != sys::cudaError::cudaSuccess {
        record_drop_error(status, "cudaGetDeviceCount");
        return false;
    }
    let worked = |ordinal: i32| {
        // A device whose context was never made has run no work (asked without making one);
        // when that cannot be told, it is waited for.
        devices != EVERY_DEVICE
            || crate::device::Device::from_ordinal(ordinal).has_active_context().unwrap_or(true)
    };
    (0..count).filter(|&ordinal| devices & (1u64 << ordinal.min(63)) != 0 && worked(ordinal)).all(|ordinal| {
        let mut idle = false;
        on_device(ordinal, || idle = device_idle());
        idle
    })
}

/// Runs `f` with `device`'s primary context current, restoring the caller's current device
/// afterwards. The device is always set (`cudaSetDevice` binds its primary context): other code
/// may have made another context of the same device current (cudarc's
/// `CudaContext::new_non_primary`), whose waits and frees would not be this memory's. When
/// `device` cannot be made current, `f` does not run (the error is recorded): waiting for
/// another context would not make freeing this memory safe, so it is leaked.
pub(super) fn on_device(device: i32, f: impl FnOnce()) {
    let mut current = device;
    // SAFETY: `current` is a valid, writable i32.
    let got = unsafe { sys::cudaGetDevice(&mut current) };
    if got != sys::cudaError::cudaSuccess {
        record_drop_error(got, "cudaGetDevice");
        return;
    }
    // SAFETY: plain call; `device` is a device of this host (CUDA checks the ordinal).
    let set = unsafe { sys::cudaSetDevice(device) };
    if set != sys::cudaError::cudaSuccess {
        record_drop_error(set, "cudaSetDevice");
        return;
    }
    f();
    if current != device {
        // SAFETY: plain call; restores the caller's current device (its primary context).
        record_drop_error(unsafe { sys::cudaSetDevice(current) }, "cudaSetDevice");
    }
}

/// Waits for all work of the current device (`cudaDeviceSynchronize`). False (the error
/// recorded) when that failed: work may then still use memory, which must be leaked.
pub(super) fn device_idle() -> bool {
    // SAFETY: plain call; it touches no memory of ours.
    let synced = unsafe { sys::cudaDeviceSynchronize() };
    if synced == sys::cudaError::cudaSuccess {
        return true;
    }
    record_drop_error(synced, "cudaDeviceSynchronize");
    false
}

/// Frees stream-ordered memory without a stream handle (the allocating stream may be gone):
/// on the legacy default stream when that is ordered after every use (`ordered_by_legacy`:
/// allocated on a blocking stream and used on no non-blocking one), else after waiting for
/// the whole device. Runs on `device`, restoring the caller's current device.
pub(super) fn free_stream_ordered(ptr: *mut c_void, device: i32, ordered_by_legacy: bool) {
    on_device(device, || {
        if ordered_by_legacy {
            // SAFETY: `ptr` came from the stream-ordered allocator and is freed once. The
            // legacy default stream runs this free after all work already queued on every
            // blocking stream of the device, the allocating stream included; no work on a
            // non-blocking stream used it (`Allocation::note_use_on`, and graph execs wait
            // for their launches before they release it).
            record_drop_error(unsafe { sys::cudaFreeAsync(ptr, LEGACY_STREAM) }, "cudaFreeAsync");
        } else if device_idle() {
            // SAFETY: all work that could use `ptr` has finished (the device is idle); it is
            // freed once, through the pool (a plain cudaFree of pool memory leaves it counted
            // as used, measured on CUDA 13.0).
            record_drop_error(unsafe { sys::cudaFreeAsync(ptr, LEGACY_STREAM) }, "cudaFreeAsync");
        }
        // Else work may still use the memory: it is leaked rather than freed under that work.
    });
}
