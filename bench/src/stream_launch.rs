//! (a) Empty-kernel stream launch: `launches` launches of a kernel that does nothing between
//! two events, µs per launch. Rust: `Kernel::launch` (geometry check, parameter check kept
//! from the first use, `cudaLaunchKernel`); C++: `cudaLaunchKernel` with its status checked.

use cuda_graph::LaunchConfig;

use crate::error::Result;
use crate::harness::{interleave, Plan, Row, RustSide};
use crate::kernels::bench_empty;
use crate::twin::Twin;

/// The operation's name in the results.
pub const OPERATION: &str = "stream launch, empty kernel";

/// Measures both sides.
pub fn measure(rust: &mut RustSide, twin: &Twin, plan: &Plan, launches: u32) -> Result<Vec<Row>> {
    let kernel = bench_empty();
    kernel.function()?; // the parameter check, before any timing
    let config = LaunchConfig::new(1, 1);
    let pair = interleave(
        plan,
        || {
            rust.start.record(&rust.stream)?;
            for _ in 0..launches {
                kernel.launch(&rust.stream, config, ())?;
            }
            Ok(rust.end_sample()? * 1e3 / f64::from(launches))
        },
        || twin.stream_empty(launches),
    )?;
    Ok(vec![Row::new(OPERATION, format!("launches={launches}"), "µs/launch", pair)])
}
