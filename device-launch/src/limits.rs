//! Device-launch limits, as configuration.
//!
//! Two kinds of limit bound what device code may launch:
//! - per launching kernel, fixed by CUDA (measured on 13.0): [`FIRE_AND_FORGET_LIMIT`] distinct
//!   graphs fire-and-forgotten (sibling launches count too) and [`TAIL_LAUNCH_LIMIT`] tail
//!   launches. Past them the device-side `cudaGraphLaunch` fails with `cudaErrorInvalidValue`,
//!   which `device_launch.cuh`'s helpers record into an [`crate::ErrorSlot`];
//! - per device, configurable: how many CDP2 kernel launches may be pending at once
//!   ([`LaunchLimits::pending_launch_count`], default [`DEFAULT_PENDING_LAUNCH_COUNT`]). Past it a
//!   device-side kernel launch fails with `cudaErrorLaunchPendingCountExceeded` (69), which
//!   `DL_LAUNCH_KERNEL` records the same way.

use cuda_graph::{Device, Limit};

// One definition, in cudadevrt-sys: its header defines the same numbers for device code
// (`device_launch.cuh` includes it), and its tests check that both agree.
use cudadevrt_sys as devrt;
pub use devrt::{DEFAULT_PENDING_LAUNCH_COUNT, FIRE_AND_FORGET_LIMIT, TAIL_LAUNCH_LIMIT};

use crate::error::{Error, Result};

/// The configurable device-runtime limits of one device.
///
/// ```no_run
/// use device_launch::limits::LaunchLimits;
/// let device = cuda_graph::Device::get(0)?;
/// let mut limits = LaunchLimits::of(device)?;
/// limits.pending_launch_count = 8192; // parents that fan out to many slow children
/// limits.apply(device)?;
/// # Ok::<(), device_launch::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchLimits {
    /// CDP2 kernel launches that may be pending at once on the device.
    pub pending_launch_count: u32,
}

impl Default for LaunchLimits {
    fn default() -> LaunchLimits {
        LaunchLimits { pending_launch_count: DEFAULT_PENDING_LAUNCH_COUNT }
    }
}

impl LaunchLimits {
    /// The limits `device` has now.
    pub fn of(device: Device) -> Result<LaunchLimits> {
        let pending = device.limit(Limit::DevRuntimePendingLaunchCount)?;
        Ok(LaunchLimits { pending_launch_count: u32::try_from(pending).unwrap_or(u32::MAX) })
    }

    /// Sets them on `device` (`cudaDeviceSetLimit`). A pending count of 0 is refused: no
    /// device-side kernel launch could ever succeed.
    pub fn apply(&self, device: Device) -> Result<()> {
        self.check()?;
        device.set_limit(Limit::DevRuntimePendingLaunchCount, self.pending_launch_count as usize)?;
        Ok(())
    }

    /// Refuses values no program could work with.
    pub fn check(&self) -> Result<()> {
        if self.pending_launch_count == 0 {
            return Err(Error::Cuda(cuda_graph::CudaError::InvalidArgument {
                call: "LaunchLimits::apply",
                reason: cuda_graph::Refusal::ZeroPendingLaunches,
            }));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header;

    #[test]
    fn the_header_takes_its_limits_from_cudadevrt_sys() {
        assert!(
            header::TEXT.lines().any(|l| l == "#include \"cudadevrt_limits.cuh\""),
            "no #include of the limits"
        );
        // Aliases of the cudadevrt-sys macros, whose values that crate's tests check against
        // these same constants: no number of its own.
        assert_eq!(header::define("DL_FIRE_AND_FORGET_LIMIT "), "CUDADEVRT_FIRE_AND_FORGET_LIMIT");
        assert_eq!(header::define("DL_TAIL_LAUNCH_LIMIT "), "CUDADEVRT_TAIL_LAUNCH_LIMIT");
        // INCLUDE_DIR is the build machine's path: where the binary runs elsewhere (a bundle
        // carried to a GPU machine) the folder is absent and only the lines above can be checked.
        let include_dir = std::path::Path::new(devrt::INCLUDE_DIR);
        if include_dir.is_dir() {
            let limits = include_dir.join("cudadevrt_limits.cuh");
            assert!(limits.is_file(), "{} missing", limits.display());
        } else {
            eprintln!(
                "note: {} is not on this machine; the header's folder was not checked",
                include_dir.display()
            );
        }
    }

    #[test]
    fn the_default_is_cudas_default_and_zero_is_refused() {
        assert_eq!(LaunchLimits::default().pending_launch_count, 2048);
        assert!(LaunchLimits::default().check().is_ok());
        let err = LaunchLimits { pending_launch_count: 0 }.check().unwrap_err();
        let zero = Some(&cuda_graph::Refusal::ZeroPendingLaunches);
        assert!(matches!(&err, Error::Cuda(err) if err.refusal() == zero), "{err}");
    }
}
