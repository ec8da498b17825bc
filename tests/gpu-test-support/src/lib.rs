//! Runs GPU tests where a CUDA device exists and skips them, visibly, where none does.
//!
//! ```no_run
//! #[test]
//! fn fills_a_buffer() {
//!     gpu_test_support::require_gpu!();
//!     // ... GPU work ...
//! }
//! ```
//!
//! Without a device the test prints `skipped: no CUDA device (<why>)` on stderr (past the test
//! harness's capture, so it shows) and returns, passing. With `REQUIRE_GPU=1` a missing device
//! fails the test instead, so a GPU run can never pass by skipping.
//!
//! Tests that need several GPUs use [`require_gpus!`]`(n)`: with fewer devices they print
//! `skipped: needs n CUDA devices (found m)` and pass, also under `REQUIRE_GPU=1` (a one-GPU
//! machine runs the one-GPU tests and skips these visibly). `REQUIRE_GPUS=n` (set on the
//! multi-GPU run) makes them fail instead, so that run cannot pass by skipping either.

use std::io::Write;
use std::sync::OnceLock;

use cudart_graph_sys as sys;

/// What probing for a device found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// At least one device answered.
    Present(i32),
    /// No usable device, and why (e.g. error 35: no driver).
    Absent(String),
}

/// Probes once per process with `cudaGetDeviceCount` (see [`count_devices`]); panics when the
/// answer is an error that means a broken GPU or driver rather than none.
pub fn probe() -> &'static Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    PROBE.get_or_init(|| count_devices().unwrap_or_else(|broken| panic!("{broken}")))
}

/// Asks `cudaGetDeviceCount` now (not cached, no panic) and [`classify`]es the answer: the
/// one definition of "no device" shared by the tests and the chapter runner (`ch12`).
///
/// ```no_run
/// match gpu_test_support::count_devices() {
///     Ok(gpu_test_support::Probe::Present(n)) => println!("{n} devices"),
///     Ok(gpu_test_support::Probe::Absent(why)) => println!("skip: {why}"),
///     Err(broken) => panic!("{broken}"),
/// }
/// ```
pub fn count_devices() -> Result<Probe, String> {
    let mut count = 0;
    // SAFETY: `count` is a valid, writable i32 for the duration of the call.
    let status = unsafe { sys::cudaGetDeviceCount(&mut count) };
    classify(status, count)
}

/// What a `cudaGetDeviceCount` answer means: `Ok(Present)` for devices, `Ok(Absent)` for none
/// (zero devices, no device, no or too old a driver, the stub library), and `Err` for any
/// other error: a GPU or driver that is there but broken, which must fail, never skip.
///
/// ```
/// use cudart_graph_sys::cudaError;
/// use gpu_test_support::{classify, Probe};
/// assert_eq!(classify(cudaError::cudaSuccess, 2), Ok(Probe::Present(2)));
/// assert!(matches!(classify(cudaError::cudaErrorNoDevice, 0), Ok(Probe::Absent(_))));
/// assert!(classify(cudaError::cudaErrorUnknown, 0).is_err());
/// ```
pub fn classify(status: sys::cudaError, count: i32) -> Result<Probe, String> {
    match status {
        sys::cudaError::cudaSuccess if count > 0 => Ok(Probe::Present(count)),
        sys::cudaError::cudaSuccess => Ok(Probe::Absent("cudaGetDeviceCount found 0 devices".into())),
        sys::cudaError::cudaErrorInsufficientDriver
        | sys::cudaError::cudaErrorNoDevice
        | sys::cudaError::cudaErrorStubLibrary => {
            Ok(Probe::Absent(format!("cudaGetDeviceCount returned error {}", status.0)))
        }
        other => {
            Err(format!("cudaGetDeviceCount failed with error {}: the GPU is present but broken", other.0))
        }
    }
}

/// True when the tests run under compute-sanitizer (`scripts/gpu-sanitize` sets
/// `UNDER_SANITIZER`, `bash .gpu/run` takes `SANITIZE`): a test then uses fewer iterations or
/// smaller sizes where the tool would make it take minutes.
///
/// ```
/// let rounds = if gpu_test_support::under_sanitizer() { 2 } else { 48 };
/// # let _ = rounds;
/// ```
pub fn under_sanitizer() -> bool {
    ["UNDER_SANITIZER", "SANITIZE"].iter().any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()))
}

/// The compute-sanitizer tool the tests run under, when the runner says which
/// (`scripts/gpu-sanitize` sets `SANITIZER_TOOL`, `bash .gpu/run` takes `SANITIZE`), e.g.
/// `racecheck`: for a test that must avoid a defect of one tool.
///
/// ```
/// let one_kind = gpu_test_support::sanitizer_tool().as_deref() == Some("racecheck");
/// # let _ = one_kind;
/// ```
pub fn sanitizer_tool() -> Option<String> {
    ["SANITIZER_TOOL", "SANITIZE"]
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|tool| !tool.is_empty()))
}

/// True when `REQUIRE_GPU=1`: a skip must then fail.
pub fn gpu_required() -> bool {
    std::env::var("REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// True when a device is there; otherwise prints the skip line for `test` and returns false,
/// or panics under `REQUIRE_GPU=1`.
pub fn gpu_available(test: &str) -> bool {
    match probe() {
        Probe::Present(_) => true,
        Probe::Absent(why) => {
            if gpu_required() {
                panic!("REQUIRE_GPU=1 but there is no CUDA device ({why}); {test} cannot pass by skipping");
            }
            let line = format!("skipped: no CUDA device ({why}): {test}\n");
            let _ = std::io::stderr().write_all(line.as_bytes());
            false
        }
    }
}

/// Returns from the enclosing test (passing, with a visible `skipped: no CUDA device` line)
/// when there is no device; fails it under `REQUIRE_GPU=1`.
#[macro_export]
macro_rules! require_gpu {
    () => {
        fn __here() {}
        let __name = ::std::any::type_name_of_val(&__here);
        if !$crate::gpu_available(__name.strip_suffix("::__here").unwrap_or(__name)) {
            return;
        }
    };
}

/// The number of GPUs a run must have: `REQUIRE_GPUS=N` (e.g. 2 on a two-GPU machine), else 0.
/// Under it, a test that needs more devices than there are fails instead of skipping.
/// `REQUIRE_GPU=1` alone does not fail tests that need several GPUs on a one-GPU machine: it
/// says a GPU is there, not how many.
pub fn gpus_required() -> i32 {
    std::env::var("REQUIRE_GPUS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}

/// True when at least `needed` devices are there; otherwise prints
/// `skipped: needs N CUDA devices (found M): test` and returns false, or panics when
/// `REQUIRE_GPUS` asks for at least `needed` (and, with no device at all, under
/// `REQUIRE_GPU=1`, as [`gpu_available`] does).
///
/// ```no_run
/// if !gpu_test_support::gpus_available(2, "peer_copies") {
///     return;
/// }
/// ```
pub fn gpus_available(needed: i32, test: &str) -> bool {
    if !gpu_available(test) {
        return false;
    }
    let found = match probe() {
        Probe::Present(count) => *count,
        Probe::Absent(_) => 0,
    };
    if found >= needed {
        return true;
    }
    if gpus_required() >= needed {
        panic!("REQUIRE_GPUS={} but there are {found} CUDA devices; {test} needs {needed}", gpus_required());
    }
    let line = format!("skipped: needs {needed} CUDA devices (found {found}): {test}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    false
}

/// Returns from the enclosing test (passing, with a visible
/// `skipped: needs N CUDA devices` line) when fewer than `n` devices are there; fails it
/// under `REQUIRE_GPUS=N` (or more), and with no device at all under `REQUIRE_GPU=1`.
///
/// ```no_run
/// #[test]
/// fn copies_between_two_gpus() {
///     gpu_test_support::require_gpus!(2);
///     // ... work on devices 0 and 1 ...
/// }
/// ```
#[macro_export]
macro_rules! require_gpus {
    ($n:expr) => {
        fn __here() {}
        let __name = ::std::any::type_name_of_val(&__here);
        if !$crate::gpus_available($n, __name.strip_suffix("::__here").unwrap_or(__name)) {
            return;
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_no_device_and_no_driver_are_absent() {
        assert_eq!(classify(sys::cudaError::cudaSuccess, 1), Ok(Probe::Present(1)));
        for absent in [
            (sys::cudaError::cudaSuccess, 0),
            (sys::cudaError::cudaErrorNoDevice, 0),
            (sys::cudaError::cudaErrorInsufficientDriver, 0),
            (sys::cudaError::cudaErrorStubLibrary, 0),
        ] {
            assert!(matches!(classify(absent.0, absent.1), Ok(Probe::Absent(_))), "{}", absent.0 .0);
        }
        for broken in [
            sys::cudaError::cudaErrorUnknown,
            sys::cudaError::cudaErrorInitializationError,
            sys::cudaError::cudaErrorSystemDriverMismatch,
            sys::cudaError::cudaErrorDevicesUnavailable,
        ] {
            let why = classify(broken, 0).unwrap_err();
            assert!(why.contains(&broken.0.to_string()) && why.contains("broken"), "{why}");
        }
    }
}
