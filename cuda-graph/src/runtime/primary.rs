//! Each device's primary context as the driver names it (a `CUcontext`, as an address), and
//! the thread's current context (`cuCtxGetCurrent`, a thread-local read in the driver), so
//! that "is this device's primary context current?" costs one driver call instead of the
//! runtime's `cudaGetDevice` and `cudaSetDevice` (bench/README.md, "Where the crates still
//! cost more than C++").
//!
//! A device's primary context is recorded when the crate has just bound it: right after a
//! `cudaSetDevice` of the crate succeeded (which binds the device's primary context, so the
//! driver's current context is that one), and from the context of a stream the crate made
//! (made by the runtime in the primary context, see the module above). Other contexts (made
//! by other libraries, e.g. cudarc's `new_non_primary`) are never recorded, so one of them
//! current is never taken for a primary context.
//!
//! A primary context keeps its handle for the life of the process: the runtime retains it,
//! and a reset (`cudaDeviceReset`, which this crate never calls) destroys what it holds but
//! does not release it. So a recorded handle cannot come to name another context.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::runtime as sys;

/// Devices with a record (ordinals past this have none: the checks then ask the runtime).
const RECORDED: usize = 64;

/// The primary context of each device by ordinal; 0 while unknown.
static PRIMARY: [AtomicUsize; RECORDED] = [const { AtomicUsize::new(0) }; RECORDED];

/// One more than the highest ordinal recorded (the bound of [`current_is_primary`]'s scan).
static RECORDED_UP_TO: AtomicUsize = AtomicUsize::new(0);

/// `cuCtxGetCurrent`, looked up once; `None` when the driver lacks it.
static CTX_GET_CURRENT: OnceLock<Option<sys::PFN_cuCtxGetCurrent>> = OnceLock::new();

/// The calling thread's current context, as an address; `None` when none is current, the
/// driver cannot say, or the thread runs a host function (where CUDA calls are forbidden).
#[inline]
pub(crate) fn current_context() -> Option<usize> {
    if sys::in_host_fn() {
        return None;
    }
    let get = (*CTX_GET_CURRENT.get_or_init(look_up_ctx_get_current))?;
    let mut context: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: `context` is a valid out-pointer.
    let status = unsafe { get(&mut context) };
    (status == 0 && !context.is_null()).then_some(context as usize)
}

fn look_up_ctx_get_current() -> Option<sys::PFN_cuCtxGetCurrent> {
    let mut entry: *mut std::ffi::c_void = std::ptr::null_mut();
    let mut found = sys::cudaDriverEntryPointQueryResult::cudaDriverEntryPointSymbolNotFound;
    // SAFETY: the symbol is a NUL-terminated C string, `entry` and `found` are valid
    // out-pointers, and the flags value is a defined one (default search).
    let status = unsafe {
        sys::cudaGetDriverEntryPointByVersion(
            sys::CU_CTX_GET_CURRENT.as_ptr().cast(),
            &mut entry,
            sys::CU_CTX_GET_CURRENT_VERSION,
            sys::cudaGetDriverEntryPointFlags::cudaEnableDefault.0 as u64,
            &mut found,
        )
    };
    if status != sys::cudaError::cudaSuccess
        || found != sys::cudaDriverEntryPointQueryResult::cudaDriverEntryPointSuccess
        || entry.is_null()
    {
        // A failed lookup is an answer (this driver lacks it): clear the runtime's last error.
        // SAFETY: plain call.
        let _ = unsafe { sys::cudaGetLastError() };
        return None;
    }
    // SAFETY: `entry` is the non-null address of cuCtxGetCurrent, whose C signature at the
    // version asked for is `PFN_cuCtxGetCurrent` (one pointer wide).
    Some(unsafe { std::mem::transmute::<*mut std::ffi::c_void, sys::PFN_cuCtxGetCurrent>(entry) })
}

/// Records the driver's current context as device `ordinal`'s primary context, unless known.
/// Call only right after `cudaSetDevice(ordinal)` succeeded on this thread.
pub(crate) fn record_after_set(ordinal: i32) {
    if primary_context(ordinal).is_none() {
        if let Some(context) = current_context() {
            record(ordinal, context);
        }
    }
}

/// Records `context` as the primary context of device `ordinal`. Call only with that
/// context's handle (the context of a stream the crate made on the device).
pub(crate) fn record(ordinal: i32, context: usize) {
    let Some(index) = usize::try_from(ordinal).ok().filter(|&index| index < RECORDED) else { return };
    let before = PRIMARY[index].swap(context, Ordering::Relaxed);
    debug_assert!(before == 0 || before == context, "device {ordinal}'s primary context changed");
    RECORDED_UP_TO.fetch_max(index + 1, Ordering::Relaxed);
}

/// Device `ordinal`'s primary context, if recorded.
#[inline]
pub(crate) fn primary_context(ordinal: i32) -> Option<usize> {
    let index = usize::try_from(ordinal).ok()?;
    let context = PRIMARY.get(index)?.load(Ordering::Relaxed);
    (context != 0).then_some(context)
}

/// Whether device `ordinal`'s primary context is the calling thread's current context:
/// false when unknown (not recorded yet, or the driver cannot say).
#[inline]
pub(crate) fn primary_is_current(ordinal: i32) -> bool {
    match primary_context(ordinal) {
        Some(primary) => current_context() == Some(primary),
        None => false,
    }
}

/// Whether the calling thread's current context is the primary context of some device
/// (then it is the primary context of the thread's current device, as `cudaGetDevice` would
/// name it).
#[inline]
pub(crate) fn current_is_primary() -> bool {
    let Some(current) = current_context() else { return false };
    let up_to = RECORDED_UP_TO.load(Ordering::Relaxed).min(RECORDED);
    PRIMARY[..up_to].iter().any(|slot| slot.load(Ordering::Relaxed) == current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_without_a_record_are_unknown() {
        assert_eq!(primary_context(-1), None);
        assert_eq!(primary_context(RECORDED as i32), None);
        assert!(!primary_is_current(RECORDED as i32));
        record(RECORDED as i32, 0x10);
        assert_eq!(primary_context(RECORDED as i32), None, "past the table: never recorded");
    }
}
