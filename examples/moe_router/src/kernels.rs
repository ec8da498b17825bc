//! The kernels of the mixture-of-experts router (kernels/moe.cu), declared for Rust.

use cuda_graph::DevicePtr;
use device_launch::{DeviceExecArg, DeviceExecTableArg, RawErrorSlot};

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu); the declarations are private to this crate, whose launches pass counts
// no larger than the buffers they point into.
cuda_graph::kernels! {
    /// The host-driven router: a thread per token, no launches.
    pub(crate) unsafe fn moe_route(
        x: DevicePtr<u32>,
        gate: DevicePtr<u32>,
        tokens: u32,
        d: u32,
        experts: u32,
        top_k: u32,
        counters: DevicePtr<u32>,
        lists: DevicePtr<u32>,
        gates: DevicePtr<u32>,
    );
    /// The device router: routes, then its last block fire-and-forgets the busy experts'
    /// graphs and tail-launches the combine graph.
    pub(crate) unsafe fn moe_route_dispatch(
        x: DevicePtr<u32>,
        gate: DevicePtr<u32>,
        tokens: u32,
        d: u32,
        experts: u32,
        top_k: u32,
        counters: DevicePtr<u32>,
        lists: DevicePtr<u32>,
        gates: DevicePtr<u32>,
        expert_graphs: DeviceExecTableArg,
        combine: DeviceExecArg,
        slot: DevicePtr<RawErrorSlot>,
    );
    /// One expert over the tokens routed to it (a grid-stride loop: any count, any grid).
    pub(crate) unsafe fn moe_expert(
        x: DevicePtr<u32>,
        w: DevicePtr<u32>,
        lists: DevicePtr<u32>,
        counters: DevicePtr<u32>,
        expert: u32,
        tokens: u32,
        d: u32,
        top_k: u32,
        out: DevicePtr<u32>,
    );
    /// The combine: gate-weighted sum of every token's expert outputs.
    pub(crate) unsafe fn moe_combine(out: DevicePtr<u32>, gates: DevicePtr<u32>, tokens: u32, d: u32, top_k: u32, y: DevicePtr<u32>);
    /// After the combine: totals, counts and ticket reset, steps counted.
    pub(crate) unsafe fn moe_finalize(counters: DevicePtr<u32>, experts: u32);
}

/// The kernels declared here against their C++ parameter types (`check_types` needs no GPU:
/// it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! {
            moe_route, moe_route_dispatch, moe_expert, moe_combine, moe_finalize
        }
    }
}
