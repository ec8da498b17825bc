//! The checks made before CUDA sees an attribute: what the device cannot do, and what
//! contradicts the launch's geometry.

use std::ffi::c_void;

use crate::runtime as sys;

use super::caps::Caps;
use super::{KernelAttributes, LaunchAttributes};
use crate::error::{check, CudaError, Result};
use crate::event::Event;
use crate::kernel::{Dim3, LaunchConfig};
use crate::refusal::{AttributeRefusal, Refusal, Unsupported};

/// Attributes checked against the current device before CUDA sees them: a kernel node's
/// ([`KernelAttributes`]) or a stream launch's ([`LaunchAttributes`]: those and what only
/// stream launches carry).
pub(crate) trait CheckAttributes {
    /// The kernel attributes, and the launch attributes where one of those only stream
    /// launches carry is set.
    fn parts(&self) -> (&KernelAttributes, Option<&LaunchAttributes>);

    /// Refuses, before CUDA is called, what the current device cannot do or what contradicts
    /// `config`; `function` is the kernel (for a cooperative grid's occupancy).
    fn check(&self, call: &'static str, config: &LaunchConfig, function: *const c_void) -> Result<()> {
        let (kernel, launch_only) = self.parts();
        if kernel.is_empty() && launch_only.is_none() {
            return Ok(());
        }
        let caps = Caps::current()?;
        if let Some(launch) = launch_only {
            launch.check_launch_only(call, &caps)?;
        }
        kernel.check_with(call, config, &caps, || resident_blocks(function, config, &caps))
    }
}

impl CheckAttributes for KernelAttributes {
    fn parts(&self) -> (&KernelAttributes, Option<&LaunchAttributes>) {
        (self, None)
    }
}

impl CheckAttributes for LaunchAttributes {
    fn parts(&self) -> (&KernelAttributes, Option<&LaunchAttributes>) {
        let programmatic = self.programmatic_serialization || self.programmatic_event.is_some();
        let launch_only =
            programmatic || self.launch_completion_event.is_some() || self.shared_memory_carveout.is_some();
        (&self.kernel, launch_only.then_some(self))
    }
}

impl KernelAttributes {
    /// [`CheckAttributes::check`] against `caps`, with `resident` giving how many blocks of this
    /// launch can be resident at once (asked only for a cooperative grid).
    fn check_with(
        &self, call: &'static str, config: &LaunchConfig, caps: &Caps, resident: impl FnOnce() -> Result<u64>,
    ) -> Result<()> {
        let refuse = |reason: Refusal| Err(CudaError::refused(call, reason));
        if (self.cluster.is_some() || self.preferred_cluster.is_some()) && !caps.cluster_launch {
            return refuse(Unsupported::ClusterLaunch { sm: caps.sm() }.into());
        }
        if let Some(cluster) = self.cluster {
            divides("cluster", cluster, config.grid).or_else(refuse)?;
        }
        if let Some(preferred) = self.preferred_cluster {
            let Some(cluster) = self.cluster else {
                return refuse(AttributeRefusal::PreferredWithoutCluster.into());
            };
            divides("preferred cluster", preferred, config.grid).or_else(refuse)?;
            if preferred.x % cluster.x != 0 || preferred.y % cluster.y != 0 || preferred.z != cluster.z {
                return refuse(
                    AttributeRefusal::PreferredNotMultiple {
                        preferred: preferred.into(),
                        cluster: cluster.into(),
                    }
                    .into(),
                );
            }
        }
        if let Some(priority) = self.priority {
            let (least, greatest) = caps.priorities;
            if priority < greatest || priority > least {
                return refuse(AttributeRefusal::PriorityOutOfRange { priority, greatest, least }.into());
            }
        }
        if let Some(map) = self.mem_sync_domain_map {
            let count = caps.sync_domains;
            if i32::from(map.default) >= count || i32::from(map.remote) >= count {
                return refuse(
                    AttributeRefusal::SyncDomainOutOfRange {
                        default: map.default,
                        remote: map.remote,
                        count,
                    }
                    .into(),
                );
            }
        }
        if self.cooperative {
            if !caps.cooperative_launch {
                return refuse(Unsupported::CooperativeLaunch.into());
            }
            let (blocks, resident) = (config.grid.count(), resident()?);
            if blocks > resident {
                let block = config.block.into();
                return refuse(AttributeRefusal::CooperativeGridTooLarge { blocks, resident, block }.into());
            }
        }
        Ok(())
    }
}

/// Refuses programmatic dependent launch (programmatic attributes or edges) on a device
/// below sm_90, before CUDA is called.
pub(crate) fn require_programmatic_launch(call: &'static str) -> Result<()> {
    programmatic_launch_on(call, &Caps::current()?)
}

fn programmatic_launch_on(call: &'static str, caps: &Caps) -> Result<()> {
    if caps.programmatic_launch() {
        return Ok(());
    }
    Err(CudaError::refused(call, crate::refusal::Unsupported::ProgrammaticLaunch { sm: caps.sm() }))
}

/// Whether `part` (each dimension at least 1) divides `grid` in every dimension.
fn divides(what: &'static str, part: Dim3, grid: Dim3) -> std::result::Result<(), Refusal> {
    if part.count() == 0 {
        return Err(AttributeRefusal::ZeroDimension { what, part: part.into() }.into());
    }
    if grid.x % part.x != 0 || grid.y % part.y != 0 || grid.z % part.z != 0 {
        return Err(AttributeRefusal::DoesNotDivideGrid { what, part: part.into(), grid: grid.into() }.into());
    }
    Ok(())
}

/// How many blocks of `config` can be resident on the device at once
/// (`cudaOccupancyMaxActiveBlocksPerMultiprocessor` times the multiprocessors).
fn resident_blocks(function: *const c_void, config: &LaunchConfig, caps: &Caps) -> Result<u64> {
    let mut per_sm = 0;
    let threads = i32::try_from(config.block.count()).unwrap_or(i32::MAX);
    check(
        // SAFETY: `function` is a kernel's host stub (checked by `Kernel::function`); `per_sm`
        // is a valid, writable int.
        unsafe {
            sys::cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &mut per_sm,
                function,
                threads,
                config.shared_mem_bytes as usize,
            )
        },
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
    )?;
    Ok(per_sm.max(0) as u64 * caps.multiprocessors.max(0) as u64)
}

impl LaunchAttributes {
    /// What only stream launches carry, checked against `caps`.
    fn check_launch_only(&self, call: &'static str, caps: &Caps) -> Result<()> {
        let refuse = |reason: AttributeRefusal| Err(CudaError::refused(call, reason));
        if self.programmatic_serialization || self.programmatic_event.is_some() {
            programmatic_launch_on(call, caps)?;
        }
        let timed = |event: &Event| event.records_timing();
        if self.programmatic_event.as_ref().is_some_and(|p| timed(&p.event)) {
            return refuse(AttributeRefusal::TimedEvent { event: "programmatic" });
        }
        if self.launch_completion_event.as_deref().is_some_and(timed) {
            return refuse(AttributeRefusal::TimedEvent { event: "launch completion" });
        }
        if let Some(percent) = self.shared_memory_carveout.filter(|&p| p > 100) {
            return refuse(AttributeRefusal::CarveoutOver100 { percent });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::MemSyncDomainMap;

    const H100: Caps = Caps {
        compute_capability: (9, 0),
        cluster_launch: true,
        cooperative_launch: true,
        multiprocessors: 132,
        priorities: (0, -5),
        sync_domains: 4,
    };
    const A100: Caps = Caps { compute_capability: (8, 0), cluster_launch: false, sync_domains: 1, ..H100 };

    /// The refusal of `attributes` for `config` on a device of `caps` (264 blocks resident).
    fn check(
        attributes: &KernelAttributes, config: LaunchConfig, caps: &Caps,
    ) -> std::result::Result<(), Refusal> {
        attributes.check_with("launch", &config, caps, || Ok(264)).map_err(|err| match err {
            CudaError::InvalidArgument { call: "launch", reason } => reason,
            other => panic!("expected a refusal, got {other}"),
        })
    }

    fn with(f: impl FnOnce(&mut KernelAttributes)) -> KernelAttributes {
        let mut attributes = KernelAttributes::default();
        f(&mut attributes);
        attributes
    }

    #[test]
    fn clusters_must_divide_the_grid_and_need_sm_90() {
        let cluster = with(|a| a.cluster = Some(Dim3::from(2)));
        assert_eq!(check(&cluster, LaunchConfig::new(8, 32), &H100), Ok(()));
        let err = check(&cluster, LaunchConfig::new(7, 32), &H100).unwrap_err();
        let (part, grid) = ((2, 1, 1), (7, 1, 1));
        assert_eq!(err, AttributeRefusal::DoesNotDivideGrid { what: "cluster", part, grid }.into());
        let err = check(&cluster, LaunchConfig::new(8, 32), &A100).unwrap_err();
        assert_eq!(err, Unsupported::ClusterLaunch { sm: "sm_80".into() }.into());
        assert!(err.to_string().contains("(sm_90 or later); this one is sm_80"), "{err}");
        let zero = with(|a| a.cluster = Some(Dim3 { x: 0, y: 1, z: 1 }));
        let err = check(&zero, LaunchConfig::new(8, 32), &H100).unwrap_err();
        assert_eq!(err, AttributeRefusal::ZeroDimension { what: "cluster", part: (0, 1, 1) }.into());
    }

    #[test]
    fn a_preferred_cluster_is_a_multiple_of_the_cluster() {
        let alone = with(|a| a.preferred_cluster = Some(Dim3::from(4)));
        let err = check(&alone, LaunchConfig::new(8, 32), &H100).unwrap_err();
        assert_eq!(err, AttributeRefusal::PreferredWithoutCluster.into());
        let good = with(|a| {
            a.cluster = Some(Dim3::from(2));
            a.preferred_cluster = Some(Dim3::from(4));
        });
        assert_eq!(check(&good, LaunchConfig::new(8, 32), &H100), Ok(()));
        let odd = with(|a| {
            a.cluster = Some(Dim3::from(2));
            a.preferred_cluster = Some(Dim3::from(3));
        });
        let err = check(&odd, LaunchConfig::new(12, 32), &H100).unwrap_err();
        let (preferred, cluster) = ((3, 1, 1), (2, 1, 1));
        assert_eq!(err, AttributeRefusal::PreferredNotMultiple { preferred, cluster }.into());
    }

    #[test]
    fn cooperative_grids_must_fit_the_device() {
        let cooperative = with(|a| a.cooperative = true);
        assert_eq!(check(&cooperative, LaunchConfig::new(264, 256), &H100), Ok(()));
        let err = check(&cooperative, LaunchConfig::new(265, 256), &H100).unwrap_err();
        let block = (256, 1, 1);
        assert_eq!(
            err,
            AttributeRefusal::CooperativeGridTooLarge { blocks: 265, resident: 264, block }.into()
        );
        let old = Caps { cooperative_launch: false, ..H100 };
        let err = check(&cooperative, LaunchConfig::new(1, 1), &old).unwrap_err();
        assert_eq!(err, Unsupported::CooperativeLaunch.into());
    }

    #[test]
    fn priorities_and_domains_stay_in_the_devices_range() {
        assert_eq!(check(&with(|a| a.priority = Some(-5)), LaunchConfig::new(1, 1), &H100), Ok(()));
        let err = check(&with(|a| a.priority = Some(-6)), LaunchConfig::new(1, 1), &H100).unwrap_err();
        assert_eq!(err, AttributeRefusal::PriorityOutOfRange { priority: -6, greatest: -5, least: 0 }.into());
        assert!(check(&with(|a| a.priority = Some(1)), LaunchConfig::new(1, 1), &H100).is_err());
        let map = MemSyncDomainMap { default: 0, remote: 1 };
        let with_map = with(|a| a.mem_sync_domain_map = Some(map));
        assert_eq!(check(&with_map, LaunchConfig::new(1, 1), &H100), Ok(()));
        let err = check(&with_map, LaunchConfig::new(1, 1), &A100).unwrap_err();
        assert_eq!(err, AttributeRefusal::SyncDomainOutOfRange { default: 0, remote: 1, count: 1 }.into());
    }

    #[test]
    fn programmatic_launch_needs_sm_90() {
        let attributes = LaunchAttributes::programmatic();
        assert!(attributes.check_launch_only("launch", &H100).is_ok());
        let err = attributes.check_launch_only("launch", &A100).unwrap_err();
        let reason = Refusal::from(Unsupported::ProgrammaticLaunch { sm: "sm_80".into() });
        assert_eq!(err.refusal(), Some(&reason), "{err}");
        let carveout = LaunchAttributes { shared_memory_carveout: Some(101), ..Default::default() };
        let err = carveout.check_launch_only("launch", &H100).unwrap_err();
        assert_eq!(err.refusal(), Some(&AttributeRefusal::CarveoutOver100 { percent: 101 }.into()), "{err}");
    }
}
