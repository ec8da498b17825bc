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

/// Probes once per process with `cudaGetDeviceCount`.
pub fn probe() -> &'static Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    PROBE.get_or_init(|| {
        let mut count = 0;
        // SAFETY: `count` is a valid, writable i32 for the duration of the call.
        let status = unsafe { sys::cudaGetDeviceCount(&mut count) };
        match status {
            sys::cudaError::cudaSuccess if count > 0 => Probe::Present(count),
            sys::cudaError::cudaSuccess => Probe::Absent("cudaGetDeviceCount found 0 devices".into()),
            sys::cudaError::cudaErrorInsufficientDriver
            | sys::cudaError::cudaErrorNoDevice
            | sys::cudaError::cudaErrorStubLibrary => {
                Probe::Absent(format!("cudaGetDeviceCount returned error {}", status.0))
            }
            other => {
                panic!("cudaGetDeviceCount failed with error {}: the GPU is present but broken", other.0)
            }
        }
    })
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
