//! The CDP2 pending-launch limit as configuration: a parent that fans out to more slow
//! children than `LaunchLimits::pending_launch_count` allows gets the refusals recorded in
//! its `ErrorSlot` (`cudaErrorLaunchPendingCountExceeded`, with the fix in the message), and
//! exactly the accepted children run.
//!
//! Alone in its binary: the limit applies to the whole device, before any CDP launch. Named
//! `deliberate_*`: its refused launches are the outcome it checks, so the sanitizer script
//! does not count them as errors.

mod support;

use cuda_graph::{Device, DeviceBuffer};
use device_launch::limits::LaunchLimits;
use device_launch::{ErrorSlot, Operation};
use device_launch_cdp_kernels::dl_cdp_parent;
use gpu_test_support::require_gpu;
use support::{one, run, stream};

/// `cudaErrorLaunchPendingCountExceeded`.
const PENDING_COUNT_EXCEEDED: i32 = 69;

#[test]
fn launches_past_the_pending_count_are_reported_and_the_rest_run() {
    require_gpu!();
    run(|| {
        let device = Device::get(0)?;
        let limits = LaunchLimits { pending_launch_count: 32 };
        limits.apply(device)?;
        assert_eq!(LaunchLimits::of(device)?, limits);

        let children = 256u32;
        let stream = stream()?;
        let counters = DeviceBuffer::<u32>::zeroed(children as usize)?;
        let accepted = DeviceBuffer::<u32>::zeroed(1)?;
        let slot = ErrorSlot::new()?;
        // Children spin ~10 ms each, so they are all still pending while the parent launches.
        dl_cdp_parent().launch(
            &stream,
            one(),
            (counters.ptr(), children, 20_000_000, accepted.ptr(), slot.ptr()),
        )?;
        stream.synchronize()?;

        let accepted = accepted.to_vec()?[0];
        let err = slot.check()?.expect_err("256 slow children cannot all be pending under a limit of 32");
        assert_eq!(err.code, PENDING_COUNT_EXCEEDED, "{err}");
        assert_eq!(err.operation, Operation::KernelLaunch);
        assert_eq!(err.failures, children - accepted, "every refused launch is counted");
        assert!(err.to_string().contains("DevRuntimePendingLaunchCount"), "{err}");
        assert!(accepted >= 1 && accepted < children, "accepted {accepted}");
        let ran: u32 = counters.to_vec()?.iter().sum();
        assert_eq!(ran, accepted, "exactly the accepted children ran");
        LaunchLimits::default().apply(device)?;
        Ok(())
    });
}
