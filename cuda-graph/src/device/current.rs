//! The calling thread's current device, remembered in a thread-local so that the common case
//! of a launch (its stream's device is current already) asks CUDA nothing; and the set of
//! devices this process has put streams or memory on, so that launches look at their
//! arguments' devices only once several are in use.
//!
//! The thread-local follows every change made through this crate ([`Device::set_current`],
//! [`Device::with_current`]) and is read from CUDA when unknown. A raw `cudaSetDevice` (or a
//! library that switches devices without switching back) is not seen until
//! [`Device::current`] reads CUDA again: until then a launch may run with the other device
//! current, which CUDA refuses with an error (a kernel launched on a stream of another
//! device), never a wrong launch. Nothing that decides where memory lives or is freed uses the
//! remembered value: allocations, streams and frees ask CUDA.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::runtime as sys;

use super::Device;
use crate::error::{check, Result};

thread_local! {
    /// This thread's current device as last set or read through this crate; -1 when unknown.
    static CURRENT: Cell<i32> = const { Cell::new(-1) };
}

/// Devices (bit = ordinal, up to 63) that hold a stream or memory of this crate.
static IN_USE: AtomicU64 = AtomicU64::new(0);

/// Reads the current device from CUDA (`cudaGetDevice`) and remembers it.
pub(super) fn read() -> Result<i32> {
    let mut ordinal = 0;
    // SAFETY: `ordinal` is a valid, writable i32.
    check(unsafe { sys::cudaGetDevice(&mut ordinal) }, "cudaGetDevice")?;
    remember(ordinal);
    Ok(ordinal)
}

/// The remembered current device, read from CUDA when unknown.
#[inline]
pub(super) fn cached() -> Result<i32> {
    match CURRENT.with(Cell::get) {
        -1 => read(),
        ordinal => Ok(ordinal),
    }
}

/// Remembers `ordinal` as this thread's current device (after a successful `cudaSetDevice`).
pub(super) fn remember(ordinal: i32) {
    CURRENT.with(|current| current.set(ordinal));
}

/// Forgets the remembered device: the next use reads CUDA (after calls that may switch it).
pub(crate) fn forget() {
    CURRENT.with(|current| current.set(-1));
}

/// Notes that `device` holds a stream or memory of this crate.
#[inline]
pub(crate) fn note_in_use(device: Device) {
    match u32::try_from(device.ordinal()).ok().and_then(|ordinal| 1u64.checked_shl(ordinal)) {
        Some(bit) if bit != 0 => {
            if IN_USE.load(Ordering::Relaxed) & bit == 0 {
                IN_USE.fetch_or(bit, Ordering::Relaxed);
            }
        }
        _ => note_beyond_bits(),
    }
}

/// Whether streams or memory of this crate are on more than one device (or on a device
/// past 63, which the bit set cannot tell apart): only then can a launch's arguments live on
/// another device than its stream. One relaxed load.
#[inline]
pub(crate) fn several_in_use() -> bool {
    let in_use = IN_USE.load(Ordering::Relaxed);
    in_use & in_use.wrapping_sub(1) != 0
}

/// Marks devices past 63 as "several": they have no bit, so checks must always run.
fn note_beyond_bits() {
    IN_USE.store(u64::MAX, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remembered_device_follows_remember_and_forget() {
        remember(3);
        assert_eq!(cached().unwrap(), 3);
        forget();
        assert_eq!(CURRENT.with(Cell::get), -1);
        remember(0);
    }

    #[test]
    fn several_devices_in_use_is_seen_from_the_second_one() {
        // The set only grows (other tests may have added devices): check the bit logic.
        note_in_use(Device { ordinal: 0 });
        assert!(IN_USE.load(Ordering::Relaxed) & 1 == 1);
        note_in_use(Device { ordinal: 1 });
        assert!(several_in_use());
    }
}
