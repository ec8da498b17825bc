//! The checks made before CUDA sees an attribute: what the device cannot do, and what
//! contradicts the launch's geometry.

use std::ffi::c_void;

use crate::runtime as sys;

use super::caps::Caps;
use super::{KernelAttributes, LaunchAttributes};
use crate::error::{check, CudaError, Result};
use crate::event::Event;
use crate::kernel::{Dim3, LaunchConfig};

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
        let refuse = |problem: String| Err(CudaError::invalid(call, problem));
        if (self.cluster.is_some() || self.preferred_cluster.is_some()) && !caps.cluster_launch {
            return refuse(format!(
                "cluster dimensions need a device with cluster launch (sm_90 or later); this one is {}",
                caps.sm()
            ));
        }
        if let Some(cluster) = self.cluster {
            divides("cluster", cluster, config.grid).or_else(refuse)?;
        }
        if let Some(preferred) = self.preferred_cluster {
            let Some(cluster) = self.cluster else {
                return refuse("a preferred cluster needs cluster dimensions too (`cluster`)".into());
            };
            divides("preferred cluster", preferred, config.grid).or_else(refuse)?;
            if preferred.x % cluster.x != 0 || preferred.y % cluster.y != 0 || preferred.z != cluster.z {
                return refuse(format!(
                    "the preferred cluster {preferred:?} must be a multiple of the cluster {cluster:?} in x and y and \
                     equal to it in z"
                ));
            }
        }
        if let Some(priority) = self.priority {
            let (least, greatest) = caps.priorities;
            if priority < greatest || priority > least {
                return refuse(format!(
                    "priority {priority} is outside this device's range {greatest} (highest) ..= {least} (lowest)"
                ));
            }
        }
        if let Some(map) = self.mem_sync_domain_map {
            let count = caps.sync_domains;
            if i32::from(map.default) >= count || i32::from(map.remote) >= count {
                return refuse(format!(
                    "memory synchronization domain map {map:?}: this device has {count} domain(s), ids 0..{count}"
                ));
            }
        }
        if self.cooperative {
            if !caps.cooperative_launch {
                return refuse(
                    "this device cannot launch cooperative grids (cudaDevAttrCooperativeLaunch is 0)".into(),
                );
            }
            let (blocks, resident) = (config.grid.count(), resident()?);
            if blocks > resident {
                return refuse(format!(
                    "a cooperative grid of {blocks} blocks cannot be resident at once: this kernel fits {resident} \
                     blocks of {:?} threads on this device",
                    config.block
                ));
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
    Err(CudaError::invalid(
        call,
        format!(
            "programmatic dependent launch needs sm_90 or later; this device is {} (use plain launches and \
             edges on it)",
            caps.sm()
        ),
    ))
}

/// Whether `part` (each dimension at least 1) divides `grid` in every dimension.
fn divides(what: &str, part: Dim3, grid: Dim3) -> std::result::Result<(), String> {
    if part.count() == 0 {
        return Err(format!("{what} {part:?}: every dimension must be at least 1"));
    }
    if grid.x % part.x != 0 || grid.y % part.y != 0 || grid.z % part.z != 0 {
        return Err(format!("{what} {part:?} does not divide the grid {grid:?}"));
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
        let refuse = |problem: String| Err(CudaError::invalid(call, problem));
        if self.programmatic_serialization || self.programmatic_event.is_some() {
            programmatic_launch_on(call, caps)?;
        }
        let timed = |event: &Event| event.records_timing();
        if self.programmatic_event.as_ref().is_some_and(|p| timed(&p.event)) {
            return refuse("the programmatic event records timing: create it with `timing: false`".into());
        }
        if self.launch_completion_event.as_deref().is_some_and(timed) {
            return refuse(
                "the launch completion event records timing: create it with `timing: false`".into(),
            );
        }
        if let Some(percent) = self.shared_memory_carveout.filter(|&p| p > 100) {
            return refuse(format!("shared memory carveout {percent}% is more than 100%"));
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

    fn check(
        attributes: &KernelAttributes, config: LaunchConfig, caps: &Caps,
    ) -> std::result::Result<(), String> {
        attributes.check_with("launch", &config, caps, || Ok(264)).map_err(|err| err.to_string())
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
        assert!(err.contains("does not divide the grid"), "{err}");
        let err = check(&cluster, LaunchConfig::new(8, 32), &A100).unwrap_err();
        assert!(err.contains("(sm_90 or later); this one is sm_80"), "{err}");
        let zero = with(|a| a.cluster = Some(Dim3 { x: 0, y: 1, z: 1 }));
        assert!(check(&zero, LaunchConfig::new(8, 32), &H100).unwrap_err().contains("at least 1"));
    }

    #[test]
    fn a_preferred_cluster_is_a_multiple_of_the_cluster() {
        let alone = with(|a| a.preferred_cluster = Some(Dim3::from(4)));
        assert!(check(&alone, LaunchConfig::new(8, 32), &H100)
            .unwrap_err()
            .contains("needs cluster dimensions"));
        let good = with(|a| {
            a.cluster = Some(Dim3::from(2));
            a.preferred_cluster = Some(Dim3::from(4));
        });
        assert_eq!(check(&good, LaunchConfig::new(8, 32), &H100), Ok(()));
        let odd = with(|a| {
            a.cluster = Some(Dim3::from(2));
            a.preferred_cluster = Some(Dim3::from(3));
        });
        assert!(check(&odd, LaunchConfig::new(12, 32), &H100)
            .unwrap_err()
            .contains("multiple of the cluster"));
    }

    #[test]
    fn cooperative_grids_must_fit_the_device() {
        let cooperative = with(|a| a.cooperative = true);
        assert_eq!(check(&cooperative, LaunchConfig::new(264, 256), &H100), Ok(()));
        let err = check(&cooperative, LaunchConfig::new(265, 256), &H100).unwrap_err();
        assert!(err.contains("265 blocks cannot be resident at once: this kernel fits 264"), "{err}");
        let old = Caps { cooperative_launch: false, ..H100 };
        assert!(check(&cooperative, LaunchConfig::new(1, 1), &old).unwrap_err().contains("cooperative"));
    }

    #[test]
    fn priorities_and_domains_stay_in_the_devices_range() {
        assert_eq!(check(&with(|a| a.priority = Some(-5)), LaunchConfig::new(1, 1), &H100), Ok(()));
        let err = check(&with(|a| a.priority = Some(-6)), LaunchConfig::new(1, 1), &H100).unwrap_err();
        assert!(err.contains("priority -6 is outside this device's range -5 (highest) ..= 0"), "{err}");
        assert!(check(&with(|a| a.priority = Some(1)), LaunchConfig::new(1, 1), &H100).is_err());
        let map = with(|a| a.mem_sync_domain_map = Some(MemSyncDomainMap { default: 0, remote: 1 }));
        assert_eq!(check(&map, LaunchConfig::new(1, 1), &H100), Ok(()));
        assert!(check(&map, LaunchConfig::new(1, 1), &A100).unwrap_err().contains("1 domain(s)"));
    }

    #[test]
    fn programmatic_launch_needs_sm_90() {
        let attributes = LaunchAttributes::programmatic();
        assert!(attributes.check_launch_only("launch", &H100).is_ok());
        let err = attributes.check_launch_only("launch", &A100).unwrap_err().to_string();
        assert!(
            err.contains("programmatic dependent launch needs sm_90 or later; this device is sm_80"),
            "{err}"
        );
        let carveout = LaunchAttributes { shared_memory_carveout: Some(101), ..Default::default() };
        assert!(carveout.check_launch_only("launch", &H100).unwrap_err().to_string().contains("101%"));
    }
}
