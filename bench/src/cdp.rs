//! (e) CDP child launch vs host launch of the same child kernel: `children` launches of
//! `bench_cdp_child` (one thread, one atomic add), issued
//!
//! - from the device: one launch of `bench_cdp_parent`, whose one thread launches the
//!   children into its block's stream (they run in order, as on a host stream); the parent
//!   completes when its children have;
//! - from the host: `children` launches into one stream.
//!
//! Both between two events, µs per child. Each is measured through the Rust path and through
//! the C++ twin (for the device launches only the parent's launch differs). The parent checks
//! each child launch (`cudaGetLastError`) and leaves the first failure's code in a device
//! word, which either side turns into an error with that code; and the counter must equal
//! `children`.

use cuda_graph::{Device, LaunchConfig, Limit};

use crate::error::{expect_count, BenchError, Result};
use crate::harness::{interleave, Plan, Row, RustSide};
use crate::kernels::{bench_cdp_parent, bench_count};
use crate::twin::Twin;

/// The device-launch row's name.
pub const FROM_DEVICE: &str = cuda_graph_bench_report::operations::CDP_FROM_DEVICE;
/// The host-launch row's name.
pub const FROM_HOST: &str = cuda_graph_bench_report::operations::CDP_FROM_HOST;

/// What failed when the parent's device word holds an error (the twin names it the same way).
const CHILD_LAUNCH: &str = "bench_cdp_parent: device-side <<<>>> launch (cudaGetLastError)";

/// Measures both sides, both ways.
pub fn measure(
    rust: &mut RustSide, twin: &Twin, plan: &Plan, device: Device, children: u32,
) -> Result<Vec<Row>> {
    let pending = device.limit(Limit::DevRuntimePendingLaunchCount)?;
    if children as usize > pending {
        return Err(BenchError::Options(format!(
            "{children} CDP children exceed the device's pending launch limit ({pending})"
        )));
    }
    let config = LaunchConfig::new(1, 1);
    bench_cdp_parent().function()?;
    bench_count().function()?;

    let from_device = interleave(
        plan,
        || {
            rust.begin_sample()?;
            let args = (rust.counter.ptr(), children, rust.device_error.ptr());
            bench_cdp_parent().launch(&rust.stream, config, args)?;
            let ms = rust.end_sample()?;
            rust.check_device_error(CHILD_LAUNCH)?;
            expect_count(FROM_DEVICE, "Rust", rust.counter()?, children)?;
            Ok(ms * 1e3 / f64::from(children))
        },
        || {
            let (us, counter) = twin.cdp_device(children)?;
            expect_count(FROM_DEVICE, "C++", counter, children)?;
            Ok(us)
        },
    )?;

    let from_host = interleave(
        plan,
        || {
            rust.begin_sample()?;
            for _ in 0..children {
                bench_count().launch(&rust.stream, config, (rust.counter.ptr(),))?;
            }
            let ms = rust.end_sample()?;
            expect_count(FROM_HOST, "Rust", rust.counter()?, children)?;
            Ok(ms * 1e3 / f64::from(children))
        },
        || {
            let (us, counter) = twin.cdp_host(children)?;
            expect_count(FROM_HOST, "C++", counter, children)?;
            Ok(us)
        },
    )?;

    Ok(vec![
        Row::new(FROM_DEVICE, format!("children={children}"), "µs/child", from_device),
        Row::new(FROM_HOST, format!("children={children}"), "µs/child", from_host),
    ])
}
