//! Peer access between the devices of one host: whether kernels of one device may read and
//! write another's memory (`cudaDeviceCanAccessPeer`), turning it on
//! (`cudaDeviceEnablePeerAccess`), and the record of what this crate turned on, which
//! launches and graph nodes check their arguments against.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::runtime as sys;

use super::Device;
use crate::error::{check, CudaError, Result};

/// Most devices the peer record holds (ordinals 0 to 63).
const MAX_DEVICES: usize = 64;

/// Bit `j` of entry `i`: device `i` may access device `j`'s memory (enabled by this crate).
static ENABLED: [AtomicU64; MAX_DEVICES] = [const { AtomicU64::new(0) }; MAX_DEVICES];

impl Device {
    /// Whether kernels and copies on this device can access `peer`'s memory once peer access
    /// is enabled (`cudaDeviceCanAccessPeer`). A device can always access its own memory.
    ///
    /// ```no_run
    /// use cuda_graph::Device;
    /// let (a, b) = (Device::get(0)?, Device::get(1)?);
    /// if a.can_access_peer(b)? {
    ///     a.enable_peer_access(b)?;
    /// }
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn can_access_peer(self, peer: Device) -> Result<bool> {
        if self == peer {
            return Ok(true);
        }
        let mut can = 0;
        check(
            // SAFETY: `can` is a valid, writable int; CUDA checks both ordinals.
            unsafe { sys::cudaDeviceCanAccessPeer(&mut can, self.ordinal, peer.ordinal) },
            "cudaDeviceCanAccessPeer",
        )?;
        Ok(can != 0)
    }

    /// Lets kernels and copies on this device access `peer`'s memory
    /// (`cudaDeviceEnablePeerAccess`, made with this device current; the thread's current
    /// device is restored). One direction only: call it on `peer` too for the other.
    /// Idempotent: enabling it again, here or through raw calls before, is `Ok`. Refused,
    /// naming both devices, when [`can_access_peer`](Self::can_access_peer) says no.
    ///
    /// Launches and graph nodes refuse arguments in another device's memory unless this
    /// was called for that pair (see [`DeviceBuffer::device`](crate::DeviceBuffer::device)).
    ///
    /// ```no_run
    /// use cuda_graph::Device;
    /// let (a, b) = (Device::get(0)?, Device::get(1)?);
    /// a.enable_peer_access(b)?;
    /// a.enable_peer_access(b)?; // again: fine
    /// assert!(a.peer_access_enabled(b));
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn enable_peer_access(self, peer: Device) -> Result<()> {
        if self == peer || self.peer_access_enabled(peer) {
            return Ok(());
        }
        let slot = slot(self, peer, "Device::enable_peer_access")?;
        if !self.can_access_peer(peer)? {
            return Err(CudaError::refused(
                "Device::enable_peer_access",
                crate::Refusal::PeerAccessImpossible { device: self.ordinal, peer: peer.ordinal },
            ));
        }
        self.with_current(|| {
            // SAFETY: plain call with this device current; flags must be 0.
            let status = unsafe { sys::cudaDeviceEnablePeerAccess(peer.ordinal, 0) };
            if status == sys::cudaError::cudaErrorPeerAccessAlreadyEnabled {
                // Enabled before (by raw calls): the runtime also stored this as the
                // thread's last error; take it out so that no later call reports it.
                crate::error::forget_last_error();
                return Ok(());
            }
            check(status, "cudaDeviceEnablePeerAccess")
        })?;
        slot.0.fetch_or(slot.1, Ordering::Release);
        Ok(())
    }

    /// Whether [`enable_peer_access`](Self::enable_peer_access) turned on this device's access
    /// to `peer`'s memory (always true for the device itself). Access enabled by raw calls is
    /// not seen here until `enable_peer_access` is called for the pair.
    ///
    /// ```no_run
    /// let device = cuda_graph::Device::get(0)?;
    /// assert!(device.peer_access_enabled(device));
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn peer_access_enabled(self, peer: Device) -> bool {
        self == peer
            || slot(self, peer, "").is_ok_and(|(entry, bit)| entry.load(Ordering::Acquire) & bit != 0)
    }
}

/// The record's word and bit for `user` accessing `owner`'s memory.
fn slot(user: Device, owner: Device, call: &'static str) -> Result<(&'static AtomicU64, u64)> {
    let index = |device: Device| usize::try_from(device.ordinal).ok().filter(|&i| i < MAX_DEVICES);
    match (index(user), index(owner)) {
        (Some(user), Some(owner)) => Ok((&ENABLED[user], 1u64 << owner)),
        _ => Err(CudaError::refused(call, crate::Refusal::PeerDeviceUntracked { max_devices: MAX_DEVICES })),
    }
}

/// `Ok` when work on `user` may access memory of `owner`: the same device, or peer access
/// enabled through [`Device::enable_peer_access`]. Else the error for `call`, naming both.
pub(crate) fn check_access(user: Device, owner: Device, call: &'static str) -> Result<()> {
    if user.peer_access_enabled(owner) {
        return Ok(());
    }
    Err(CudaError::refused(call, crate::Refusal::NoPeerAccess { owner: owner.ordinal, user: user.ordinal }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_reaches_its_own_memory_and_not_an_unenabled_peers() {
        let (a, b) = (Device { ordinal: 0 }, Device { ordinal: 41 });
        assert!(check_access(a, a, "x").is_ok());
        let err = check_access(a, b, "Kernel::launch").unwrap_err();
        assert_eq!(err.refusal(), Some(&crate::Refusal::NoPeerAccess { owner: 41, user: 0 }), "{err}");
        // The text users read.
        let text = err.to_string();
        assert!(
            text.starts_with("Kernel::launch: memory of device 41 is used by work on device 0"),
            "{text}"
        );
        assert!(text.contains("Device::get(0).enable_peer_access(Device::get(41))"), "{text}");
    }

    #[test]
    fn the_record_has_room_for_64_devices() {
        assert!(slot(Device { ordinal: 63 }, Device { ordinal: 0 }, "x").is_ok());
        assert!(slot(Device { ordinal: 64 }, Device { ordinal: 0 }, "x").is_err());
        assert!(!Device { ordinal: 70 }.peer_access_enabled(Device { ordinal: 0 }));
    }
}
