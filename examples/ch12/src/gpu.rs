//! Whether the runner may run, skip, or must fail, from what probing for a device found.
//!
//! "No device" means what it means in the tests: `gpu_test_support::classify` is the one
//! definition (zero devices, no device, no or too old a driver, the stub library). Any other
//! error from `cudaGetDeviceCount` is a broken GPU or driver and fails the runner, and
//! `REQUIRE_GPU=1` turns a skip into a failure, as it does for the tests.

use gpu_test_support::Probe;

/// What the runner does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Run the programs (there are this many devices).
    Run(i32),
    /// Mark every program SKIPPED and exit 0: there is no device, and none is required.
    Skip(String),
    /// Run nothing and exit non-zero, for this reason.
    Fail(String),
}

/// The plan for a probe's answer (`Err`: a broken GPU or driver) when `required` says whether
/// `REQUIRE_GPU=1` is set.
pub fn plan(probe: Result<Probe, String>, required: bool) -> Plan {
    match probe {
        Ok(Probe::Present(count)) => Plan::Run(count),
        Ok(Probe::Absent(why)) if required => Plan::Fail(format!(
            "REQUIRE_GPU=1 but there is no CUDA device ({why}): the programs cannot pass by skipping"
        )),
        Ok(Probe::Absent(why)) => Plan::Skip(why),
        Err(broken) => Plan::Fail(broken),
    }
}

/// The plan for this machine and environment.
pub fn plan_here() -> Plan {
    plan(gpu_test_support::count_devices(), gpu_test_support::gpu_required())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_runs_whether_required_or_not() {
        assert_eq!(plan(Ok(Probe::Present(2)), false), Plan::Run(2));
        assert_eq!(plan(Ok(Probe::Present(1)), true), Plan::Run(1));
    }

    #[test]
    fn no_device_skips_unless_required() {
        let absent = || Ok(Probe::Absent("cudaGetDeviceCount returned error 100".into()));
        assert_eq!(plan(absent(), false), Plan::Skip("cudaGetDeviceCount returned error 100".into()));
        match plan(absent(), true) {
            Plan::Fail(why) => assert!(why.contains("REQUIRE_GPU=1") && why.contains("error 100"), "{why}"),
            other => panic!("a required GPU that is absent must fail, not {other:?}"),
        }
    }

    #[test]
    fn a_broken_driver_fails_and_never_skips() {
        let broken =
            || Err("cudaGetDeviceCount failed with error 999: the GPU is present but broken".to_string());
        for required in [false, true] {
            assert!(matches!(plan(broken(), required), Plan::Fail(why) if why.contains("999")));
        }
    }

    #[test]
    fn the_classification_is_the_tests_one() {
        // Raw answers go through gpu_test_support::classify, so the runner and the tests agree
        // on what a skip is: only "no device" or "no driver".
        use cudart_graph_sys::cudaError;
        let from = |status, count| plan(gpu_test_support::classify(status, count), false);
        assert!(matches!(from(cudaError::cudaErrorNoDevice, 0), Plan::Skip(_)));
        assert!(matches!(from(cudaError::cudaErrorInsufficientDriver, 0), Plan::Skip(_)));
        assert!(matches!(from(cudaError::cudaSuccess, 0), Plan::Skip(_)));
        assert_eq!(from(cudaError::cudaSuccess, 1), Plan::Run(1));
        assert!(matches!(from(cudaError::cudaErrorUnknown, 0), Plan::Fail(_)));
        assert!(matches!(from(cudaError::cudaErrorSystemDriverMismatch, 0), Plan::Fail(_)));
    }
}
