//! Device-wide waits (`cudaDeviceSynchronize`, which a free of memory that any stream may
//! still use needs) kept apart from the captures of this crate. While a stream of the process
//! captures, CUDA refuses such a wait (`cudaErrorStreamCaptureUnsupported`) and invalidates
//! the capture, and with a capture beginning and ending on another thread the wait was seen
//! to crash inside the driver (SIGSEGV in `cuCtxSynchronize`, CUDA 13.0, driver 580.159.04,
//! on an H200: RELIABILITY.md, "A buffer dropped while another thread captures"). So a drop
//! that must wait for a device does so only under [`device_wait_allowed`]'s guard, which holds
//! the gate's read side (no capture of this crate begins or ends meanwhile) and exists only
//! while none is in progress; otherwise the value is kept ([`defer_until_no_capture`]) and
//! dropped when the last capture of this crate has ended ([`drop_deferred`]).
//!
//! Captures begun by other code (cudarc's `begin_capture`, raw calls) are not known here: a
//! drop's wait during one of those is refused by CUDA (the memory then leaks, the error
//! recorded) as before.

use std::any::Any;
use std::sync::{Mutex, PoisonError, RwLockReadGuard, TryLockError};

use super::registry::any_capture_active;
use super::GATE;

/// Held across a device-wide wait: no capture of this crate is in progress, and none begins
/// or ends until it drops.
pub(crate) struct DeviceWaitGuard {
    _read: RwLockReadGuard<'static, ()>,
}

/// The guard, if no capture of this crate is in progress and the gate could be entered
/// without waiting (never waits: the caller may hold a read guard already, and a writer
/// waiting for it must not be waited for in turn).
pub(crate) fn device_wait_allowed() -> Option<DeviceWaitGuard> {
    let read = match GATE.try_read() {
        Ok(read) => read,
        Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        Err(TryLockError::WouldBlock) => return None,
    };
    if any_capture_active() {
        return None;
    }
    Some(DeviceWaitGuard { _read: read })
}

/// What waits for the captures of this crate to end before it is dropped.
static DEFERRED: Mutex<Vec<Box<dyn Any + Send>>> = Mutex::new(Vec::new());

/// Keeps `item` (a value whose drop waits for a device) until no capture of this crate is in
/// progress, then drops it: at the end of the last capture, or here if that came first.
pub(crate) fn defer_until_no_capture<T: Send + 'static>(item: T) {
    DEFERRED.lock().unwrap_or_else(PoisonError::into_inner).push(Box::new(item));
    // The last capture may have ended (and found the list without this item) meanwhile: its
    // count is written before its drain takes this lock, so this load sees it.
    drop_deferred();
}

/// Drops what was kept by [`defer_until_no_capture`], if no capture of this crate is in
/// progress (each item's drop checks again, and is kept again if one began meanwhile).
/// Called with no guard of the gate held.
pub(crate) fn drop_deferred() {
    if any_capture_active() {
        return;
    }
    let items = std::mem::take(&mut *DEFERRED.lock().unwrap_or_else(PoisonError::into_inner));
    drop(items);
}
