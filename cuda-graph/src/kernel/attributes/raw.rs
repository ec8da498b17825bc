//! Attributes as CUDA takes them: `cudaLaunchAttribute` entries, built on the stack.

use std::mem::MaybeUninit;

use crate::runtime as sys;

use super::{ClusterScheduling, KernelAttributes, LaunchAttributes, MemSyncDomain};
use crate::kernel::Dim3;

/// The most attributes one launch sets (one entry per field of [`LaunchAttributes`]).
const CAPACITY: usize = 11;

/// Up to [`CAPACITY`] raw attributes, in field order. Only the first `len` entries are
/// written: a launch with one attribute writes one entry, not all of them.
pub(crate) struct RawAttributes {
    entries: [MaybeUninit<sys::cudaLaunchAttribute>; CAPACITY],
    len: usize,
}

impl RawAttributes {
    fn new() -> RawAttributes {
        RawAttributes { entries: [const { MaybeUninit::uninit() }; CAPACITY], len: 0 }
    }

    /// Appends the attribute `id` with the value `set` writes (into a zeroed value).
    fn push(&mut self, id: sys::cudaLaunchAttributeID, set: impl FnOnce(&mut sys::cudaLaunchAttributeValue)) {
        let mut entry =
            sys::cudaLaunchAttribute { id, pad: [0; 4], val: sys::cudaLaunchAttributeValue { pad: [0; 64] } };
        set(&mut entry.val);
        self.entries[self.len].write(entry);
        self.len += 1;
    }

    /// The entries set, for `cudaLaunchConfig_t::attrs` (CUDA only reads them).
    pub(crate) fn as_mut_slice(&mut self) -> &mut [sys::cudaLaunchAttribute] {
        // SAFETY: the first `len` entries were written by `push` (and `MaybeUninit<T>` has
        // `T`'s layout); the slice borrows `self` mutably.
        unsafe { std::slice::from_raw_parts_mut(self.entries.as_mut_ptr().cast(), self.len) }
    }

    /// The entries set.
    pub(crate) fn as_slice(&self) -> &[sys::cudaLaunchAttribute] {
        // SAFETY: as in `as_mut_slice`, shared.
        unsafe { std::slice::from_raw_parts(self.entries.as_ptr().cast(), self.len) }
    }

    /// Each entry's id and value, for `cudaGraphKernelNodeSetAttribute`.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &sys::cudaLaunchAttribute> {
        self.as_slice().iter()
    }
}

fn dims(d: Dim3) -> sys::cudaLaunchAttributeValue__bindgen_ty_1 {
    sys::cudaLaunchAttributeValue__bindgen_ty_1 { x: d.x, y: d.y, z: d.z }
}

impl ClusterScheduling {
    fn raw(self) -> sys::cudaClusterSchedulingPolicy {
        use sys::cudaClusterSchedulingPolicy as P;
        match self {
            ClusterScheduling::Default => P::cudaClusterSchedulingPolicyDefault,
            ClusterScheduling::Spread => P::cudaClusterSchedulingPolicySpread,
            ClusterScheduling::LoadBalancing => P::cudaClusterSchedulingPolicyLoadBalancing,
        }
    }
}

impl MemSyncDomain {
    fn raw(self) -> sys::cudaLaunchMemSyncDomain {
        match self {
            MemSyncDomain::Default => sys::cudaLaunchMemSyncDomain::cudaLaunchMemSyncDomainDefault,
            MemSyncDomain::Remote => sys::cudaLaunchMemSyncDomain::cudaLaunchMemSyncDomainRemote,
        }
    }
}

impl KernelAttributes {
    /// The raw entries of the fields that are set.
    pub(crate) fn raw(&self) -> RawAttributes {
        let mut raw = RawAttributes::new();
        self.push_raw(&mut raw);
        raw
    }

    fn push_raw(&self, raw: &mut RawAttributes) {
        use sys::cudaLaunchAttributeID as Id;
        if self.cooperative {
            raw.push(Id::cudaLaunchAttributeCooperative, |v| v.cooperative = 1);
        }
        if let Some(cluster) = self.cluster {
            raw.push(Id::cudaLaunchAttributeClusterDimension, |v| v.clusterDim = dims(cluster));
        }
        if let Some(preferred) = self.preferred_cluster {
            raw.push(Id::cudaLaunchAttributePreferredClusterDimension, |v| {
                v.preferredClusterDim = sys::cudaLaunchAttributeValue__bindgen_ty_3 {
                    x: preferred.x,
                    y: preferred.y,
                    z: preferred.z,
                }
            });
        }
        if let Some(policy) = self.cluster_scheduling {
            raw.push(Id::cudaLaunchAttributeClusterSchedulingPolicyPreference, |v| {
                v.clusterSchedulingPolicyPreference = policy.raw()
            });
        }
        if let Some(priority) = self.priority {
            raw.push(Id::cudaLaunchAttributePriority, |v| v.priority = priority);
        }
        if let Some(domain) = self.mem_sync_domain {
            raw.push(Id::cudaLaunchAttributeMemSyncDomain, |v| v.memSyncDomain = domain.raw());
        }
        if let Some(map) = self.mem_sync_domain_map {
            raw.push(Id::cudaLaunchAttributeMemSyncDomainMap, |v| {
                v.memSyncDomainMap =
                    sys::cudaLaunchMemSyncDomainMap { default_: map.default, remote: map.remote }
            });
        }
    }
}

impl LaunchAttributes {
    /// The raw entries of the fields that are set. The events' handles are copied in: the
    /// caller keeps `self` (and so the events) alive across the launch call.
    pub(crate) fn raw(&self) -> RawAttributes {
        use sys::cudaLaunchAttributeID as Id;
        let mut raw = RawAttributes::new();
        self.kernel.push_raw(&mut raw);
        if self.programmatic_serialization {
            raw.push(Id::cudaLaunchAttributeProgrammaticStreamSerialization, |v| {
                v.programmaticStreamSerializationAllowed = 1
            });
        }
        if let Some(programmatic) = &self.programmatic_event {
            raw.push(Id::cudaLaunchAttributeProgrammaticEvent, |v| {
                v.programmaticEvent = sys::cudaLaunchAttributeValue__bindgen_ty_2 {
                    event: programmatic.event.as_raw(),
                    flags: 0,
                    triggerAtBlockStart: i32::from(programmatic.trigger_at_block_start),
                }
            });
        }
        if let Some(event) = &self.launch_completion_event {
            raw.push(Id::cudaLaunchAttributeLaunchCompletionEvent, |v| {
                v.launchCompletionEvent =
                    sys::cudaLaunchAttributeValue__bindgen_ty_4 { event: event.as_raw(), flags: 0 }
            });
        }
        if let Some(percent) = self.shared_memory_carveout {
            raw.push(Id::cudaLaunchAttributePreferredSharedMemoryCarveout, |v| {
                v.sharedMemCarveout = u32::from(percent)
            });
        }
        raw
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::MemSyncDomainMap;

    fn ids(raw: &RawAttributes) -> Vec<u32> {
        raw.iter().map(|entry| entry.id.0).collect()
    }

    #[test]
    fn nothing_set_is_no_entry() {
        assert_eq!(LaunchAttributes::default().raw().len, 0);
        assert_eq!(KernelAttributes::default().raw().len, 0);
    }

    #[test]
    fn every_field_set_fits_and_keeps_its_value() {
        let kernel = KernelAttributes {
            cooperative: true,
            cluster: Some(Dim3::from((2, 1, 1))),
            preferred_cluster: Some(Dim3::from((4, 1, 1))),
            cluster_scheduling: Some(ClusterScheduling::Spread),
            priority: Some(-3),
            mem_sync_domain: Some(MemSyncDomain::Remote),
            mem_sync_domain_map: Some(MemSyncDomainMap { default: 0, remote: 1 }),
        };
        let launch = LaunchAttributes {
            kernel,
            programmatic_serialization: true,
            shared_memory_carveout: Some(50),
            ..Default::default()
        };
        let raw = launch.raw();
        // Cooperative 2, cluster 4, preferred cluster 11, scheduling 5, priority 8, domain 10,
        // map 9, programmatic serialization 6, carveout 14.
        assert_eq!(ids(&raw), [2, 4, 11, 5, 8, 10, 9, 6, 14]);
        // SAFETY: entry 4 is the priority entry, whose `priority` member was written.
        assert_eq!(unsafe { raw.as_slice()[4].val.priority }, -3);
        // SAFETY: entry 1 is the cluster entry, whose `clusterDim` member was written.
        assert_eq!(unsafe { raw.as_slice()[1].val.clusterDim }.x, 2);
        // SAFETY: entry 6 is the map entry, whose `memSyncDomainMap` member was written.
        assert_eq!(unsafe { raw.as_slice()[6].val.memSyncDomainMap }.remote, 1);
        assert!(raw.len <= CAPACITY);
    }
}
