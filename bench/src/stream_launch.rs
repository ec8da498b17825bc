//! (a) Empty-kernel stream launch: `launches` launches of a kernel that does nothing between
//! two events, µs per launch, plain and with programmatic stream serialization. Rust:
//! `Kernel::launch` (geometry check, parameter check kept from the first use,
//! `cudaLaunchKernel`) and `Kernel::launch_with` with `LaunchAttributes::programmatic()` (the
//! attribute checks too, `cudaLaunchKernelExC`); C++: `cudaLaunchKernel` and
//! `cudaLaunchKernelEx` with the attribute, their status checked. The programmatic kernel lets
//! the next one launch, then waits for the one before (`bench_pdl_empty`): a host loop's
//! launches of several kernels per round trip, as `cuda_graphs_conditional`'s.

use cuda_graph::kernel::LaunchAttributes;
use cuda_graph::LaunchConfig;

use crate::error::Result;
use crate::harness::{interleave, Plan, Row, RustSide};
use crate::kernels::{bench_empty, bench_pdl_empty};
use crate::twin::Twin;

/// The operation's name in the results.
pub const OPERATION: &str = cuda_graph_bench_report::operations::STREAM_LAUNCH;
/// The same with programmatic stream serialization.
pub const PROGRAMMATIC: &str = cuda_graph_bench_report::operations::STREAM_LAUNCH_PROGRAMMATIC;

/// Measures both sides, plain and programmatic.
pub fn measure(rust: &mut RustSide, twin: &Twin, plan: &Plan, launches: u32) -> Result<Vec<Row>> {
    let config = LaunchConfig::new(1, 1);
    let plain = bench_empty();
    plain.function()?; // the parameter check, before any timing
    let pair = interleave(
        plan,
        || {
            rust.start.record(&rust.stream)?;
            for _ in 0..launches {
                plain.launch(&rust.stream, config, ())?;
            }
            Ok(rust.end_sample()? * 1e3 / f64::from(launches))
        },
        || twin.stream_empty(launches, false),
    )?;
    let mut rows = vec![Row::new(OPERATION, format!("launches={launches}"), "µs/launch", pair)];

    let programmatic = bench_pdl_empty();
    programmatic.function()?;
    let attributes = LaunchAttributes::programmatic();
    let pair = interleave(
        plan,
        || {
            rust.start.record(&rust.stream)?;
            for _ in 0..launches {
                programmatic.launch_with(&rust.stream, config, &attributes, ())?;
            }
            Ok(rust.end_sample()? * 1e3 / f64::from(launches))
        },
        || twin.stream_empty(launches, true),
    )?;
    rows.push(Row::new(PROGRAMMATIC, format!("launches={launches}"), "µs/launch", pair));
    Ok(rows)
}
