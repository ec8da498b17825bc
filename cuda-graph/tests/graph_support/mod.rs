//! Helpers shared by the `graph_*` tests.
#![allow(dead_code)] // each test binary uses a different subset

use cuda_graph::{CudaError, Stream, StreamOptions};

/// Runs a test body, failing the test with the error's message if it returns one.
pub fn run(body: impl FnOnce() -> Result<(), CudaError>) {
    if let Err(err) = body() {
        panic!("{err}");
    }
}

/// A non-blocking stream: tests run in parallel threads, and a capture on a blocking stream
/// would be invalidated by another test's synchronous copy on the legacy default stream.
pub fn stream() -> Result<Stream, CudaError> {
    Stream::with_options(StreamOptions { non_blocking: true, priority: None })
}

/// One thread: for the counter and condition kernels.
pub fn one() -> cuda_graph::kernel::LaunchConfig {
    cuda_graph::kernel::LaunchConfig::new(1, 1)
}

/// One thread per element, 256 per block.
pub fn per_element(n: u32) -> cuda_graph::kernel::LaunchConfig {
    cuda_graph::kernel::LaunchConfig::for_elements(n, 256)
}

/// Whether the current device is sm_90 or later (programmatic dependent launch, clusters);
/// when not, prints that the test was skipped for lack of `what`.
pub fn sm90_or_skip(what: &str) -> Result<bool, CudaError> {
    let sm90 = cuda_graph::Device::current()?.properties()?.major >= 9;
    if !sm90 {
        eprintln!("skipped: {what} needs sm_90");
    }
    Ok(sm90)
}
