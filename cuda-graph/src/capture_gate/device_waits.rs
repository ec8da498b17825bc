//! Device-wide waits (`cudaDeviceSynchronize`, which a free of memory that any stream may
//! still use needs) kept apart from the captures of this crate. While a stream of the process
//! captures, CUDA refuses such a wait (`cudaErrorStreamCaptureUnsupported`) and invalidates
//! the capture, and with a capture beginning and ending on another thread the wait was seen
//! to crash inside the driver (SIGSEGV in `cuCtxSynchronize`, CUDA 13.0, driver 580.159.04,
//! on an H200: RELIABILITY.md, "A buffer dropped while another thread captures"). So a drop
//! that must wait for a device does so only under [`device_wait_allowed`]'s guard, which holds
//! the gate's read side (no capture of this crate begins or ends meanwhile) and exists only
//! while none is in progress; otherwise the value is kept ([`defer_until_no_capture`]) and
//! dropped when the last capture of this crate has ended ([`drop_deferred`]), or after the next
//! drop that could wait, whichever comes first.
//!
//! Captures begun by other code (cudarc's `begin_capture`, raw calls) are not known here: a
//! drop's wait during one of those is refused by CUDA (the memory then leaks, the error
//! recorded) as before.

use std::any::Any;
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError, RwLockReadGuard, TryLockError};

use super::registry::any_capture_active;
use super::GATE;

/// Held across a device-wide wait: no capture of this crate is in progress, and none begins
/// or ends until it drops. Dropping it drops what was kept meanwhile, if any.
pub(crate) struct DeviceWaitGuard {
    read: Option<RwLockReadGuard<'static, ()>>,
}

impl Drop for DeviceWaitGuard {
    fn drop(&mut self) {
        drop(self.read.take());
        if DEFERRED_COUNT.load(Ordering::Relaxed) != 0 {
            drop_deferred();
        }
    }
}

/// The guard, if no capture of this crate is in progress and the gate could be entered
/// without waiting. It never waits: the caller may hold a guard of the gate already, or a
/// lock that a holder of one waits for (a graph family's), and a writer waiting for that
/// holder must not be waited for in turn. A value whose drop finds no guard is kept
/// ([`defer_until_no_capture`]) and dropped at the end of the next capture of this crate or
/// after the next device-wide wait of a drop, whichever comes first.
pub(crate) fn device_wait_allowed() -> Option<DeviceWaitGuard> {
    let read = match GATE.try_read() {
        Ok(read) => read,
        Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        Err(TryLockError::WouldBlock) => return None,
    };
    if any_capture_active() {
        return None;
    }
    Some(DeviceWaitGuard { read: Some(read) })
}

/// What waits for the captures of this crate to end before it is dropped.
static DEFERRED: Mutex<Vec<Box<dyn Any + Send>>> = Mutex::new(Vec::new());
/// How many values [`DEFERRED`] holds (read without its lock).
static DEFERRED_COUNT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// True while this thread drops the kept values: one that is kept again meanwhile waits
    /// for the next drain (no recursion).
    static DRAINING: Cell<bool> = const { Cell::new(false) };
}

/// Keeps `item` (a value whose drop waits for a device) until it can be dropped (see
/// [`device_wait_allowed`]); dropped here at once if the captures ended meanwhile.
pub(crate) fn defer_until_no_capture<T: Send + 'static>(item: T) {
    {
        let mut deferred = DEFERRED.lock().unwrap_or_else(PoisonError::into_inner);
        deferred.push(Box::new(item));
        DEFERRED_COUNT.store(deferred.len(), Ordering::Relaxed);
    }
    // The last capture may have ended (and found the list without this item) meanwhile: its
    // count is written before its drain takes the list's lock, so this load sees it.
    if !DRAINING.with(Cell::get) {
        drop_deferred();
    }
}

/// Drops what was kept by [`defer_until_no_capture`], if no capture of this crate is in
/// progress (each value's drop checks again, and is kept again if it cannot wait now).
/// Called with no guard of the gate held.
pub(crate) fn drop_deferred() {
    if any_capture_active() || DRAINING.with(Cell::get) {
        return;
    }
    let items = {
        let mut deferred = DEFERRED.lock().unwrap_or_else(PoisonError::into_inner);
        DEFERRED_COUNT.store(0, Ordering::Relaxed);
        std::mem::take(&mut *deferred)
    };
    if items.is_empty() {
        return;
    }
    /// Clears the flag however the drops end (one may panic).
    struct Drained;
    impl Drop for Drained {
        fn drop(&mut self) {
            DRAINING.with(|draining| draining.set(false));
        }
    }
    DRAINING.with(|draining| draining.set(true));
    let _drained = Drained;
    drop(items);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Counts its drops; the first `redefer` drops keep a fresh copy of it instead (as a value
    /// whose drop cannot wait yet does).
    struct Probe {
        dropped: Arc<AtomicUsize>,
        redefer: Arc<AtomicUsize>,
    }

    impl Drop for Probe {
        fn drop(&mut self) {
            let again =
                self.redefer.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok();
            if again {
                defer_until_no_capture(Probe {
                    dropped: self.dropped.clone(),
                    redefer: self.redefer.clone(),
                });
            } else {
                self.dropped.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    #[test]
    fn kept_values_are_dropped_once_nothing_holds_them_and_a_kept_again_one_waits_for_the_next_drain() {
        let _turn =
            crate::capture_gate::ONE_GATE_TEST_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
        let (dropped, redefer) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(1)));
        // No capture runs: kept and dropped at once; its drop keeps a copy, which waits.
        defer_until_no_capture(Probe { dropped: dropped.clone(), redefer: redefer.clone() });
        assert_eq!(
            dropped.load(Ordering::SeqCst),
            0,
            "kept again by its own drop: not dropped in that drain"
        );
        assert_eq!(DEFERRED_COUNT.load(Ordering::SeqCst), 1);
        // A device wait's guard drops what is kept when it goes.
        drop(device_wait_allowed().expect("no capture and a free gate"));
        assert_eq!(dropped.load(Ordering::SeqCst), 1);
        assert_eq!(DEFERRED_COUNT.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn no_guard_while_the_gate_is_held_for_a_change() {
        let _turn =
            crate::capture_gate::ONE_GATE_TEST_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
        let change = crate::capture_gate::enter_change();
        assert!(device_wait_allowed().is_none(), "never waits for the writer");
        drop(change);
        assert!(device_wait_allowed().is_some());
    }
}
