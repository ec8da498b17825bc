//! What the current device can do with launch attributes, read once per device.

use std::cell::Cell;
use std::sync::{Mutex, PoisonError};

use crate::runtime as sys;

use crate::device::Device;
use crate::error::Result;
use crate::stream::Stream;

/// The device facts the attribute checks need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Caps {
    /// Compute capability: (major, minor).
    pub(super) compute_capability: (i32, i32),
    /// `cudaDevAttrClusterLaunch`.
    pub(super) cluster_launch: bool,
    /// `cudaDevAttrCooperativeLaunch`.
    pub(super) cooperative_launch: bool,
    /// `cudaDevAttrMultiProcessorCount`.
    pub(super) multiprocessors: i32,
    /// `cudaDeviceGetStreamPriorityRange`: (least, greatest); greatest is numerically lower.
    pub(super) priorities: (i32, i32),
    /// `cudaDevAttrMemSyncDomainCount`.
    pub(super) sync_domains: i32,
}

/// Devices already read, by ordinal.
static CACHE: Mutex<Vec<(i32, Caps)>> = Mutex::new(Vec::new());

thread_local! {
    /// The last device whose caps this thread looked up: a launch's checks find them here
    /// without a lock.
    static LAST: Cell<Option<(i32, Caps)>> = const { Cell::new(None) };
}

impl Caps {
    /// The current device's (read from CUDA the first time for each device). The current
    /// device is the one this crate remembers (launches make their stream's device current
    /// first), so a launch's check asks CUDA nothing.
    pub(super) fn current() -> Result<Caps> {
        let device = Device::current_remembered()?;
        if let Some((ordinal, caps)) = LAST.with(Cell::get) {
            if ordinal == device.ordinal() {
                return Ok(caps);
            }
        }
        let caps = Caps::read(device)?;
        LAST.with(|last| last.set(Some((device.ordinal(), caps))));
        Ok(caps)
    }

    /// `device`'s, from the process-wide cache or, the first time, from CUDA.
    fn read(device: Device) -> Result<Caps> {
        let cached = CACHE
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|(d, _)| *d == device.ordinal())
            .map(|(_, caps)| *caps);
        if let Some(caps) = cached {
            return Ok(caps);
        }
        let attribute = |a| device.attribute_raw(a);
        use sys::cudaDeviceAttr as A;
        let caps = Caps {
            compute_capability: (
                attribute(A::cudaDevAttrComputeCapabilityMajor)?,
                attribute(A::cudaDevAttrComputeCapabilityMinor)?,
            ),
            cluster_launch: attribute(A::cudaDevAttrClusterLaunch)? != 0,
            cooperative_launch: attribute(A::cudaDevAttrCooperativeLaunch)? != 0,
            multiprocessors: attribute(A::cudaDevAttrMultiProcessorCount)?,
            priorities: Stream::priority_range()?,
            sync_domains: attribute(A::cudaDevAttrMemSyncDomainCount)?,
        };
        CACHE.lock().unwrap_or_else(PoisonError::into_inner).push((device.ordinal(), caps));
        Ok(caps)
    }

    /// Whether the device runs programmatic dependent launch (sm_90 and later).
    pub(super) fn programmatic_launch(&self) -> bool {
        self.compute_capability.0 >= 9
    }

    /// The architecture's name, `sm_90` for compute capability 9.0.
    pub(super) fn sm(&self) -> String {
        let (major, minor) = self.compute_capability;
        format!("sm_{major}{minor}")
    }
}
