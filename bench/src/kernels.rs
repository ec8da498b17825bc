//! The benchmark kernels (kernels/kernels.cu), declared for the Rust path. The C++ twin
//! launches the same compiled kernels, except the device-launch ones: the Rust path's are
//! written with `device_launch.cuh`, the twin has plain-CUDA versions of its own in twin.cu.

use cuda_graph::graph::ConditionalHandle;
use cuda_graph::DevicePtr;
use device_launch::{DeviceExecArg, RawErrorSlot};

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu). They trust those counts: this unpublished crate's benchmarks pass
// counts no larger than the buffers.
cuda_graph::kernels! {
    /// `bench_empty()`: does nothing.
    pub unsafe fn bench_empty();
    /// `bench_chain_step(uint32_t* counter, uint32_t value)`: `*counter += value`.
    pub unsafe fn bench_chain_step(counter: DevicePtr<u32>, value: u32);
    /// `bench_rmw(uint32_t* counter)`: `*counter += 1` (one thread): the plain
    /// read-modify-write chain's node.
    pub unsafe fn bench_rmw(counter: DevicePtr<u32>);
    /// `bench_pdl_empty()`: lets the next kernel launch, waits for the one before
    /// (`cuda_graph_pdl.cuh`), nothing else: the empty chain's node with programmatic edges.
    pub unsafe fn bench_pdl_empty();
    /// `bench_pdl_rmw(uint32_t* counter)`: lets the next kernel launch, waits for the one
    /// before, then `*counter += 1`: the read-modify-write chain's node with programmatic edges.
    pub unsafe fn bench_pdl_rmw(counter: DevicePtr<u32>);
    /// `bench_host_step(uint32_t* counter, uint32_t limit, uint32_t* keep_going)`:
    /// `*counter += 1; *keep_going = *counter < limit`.
    pub unsafe fn bench_host_step(counter: DevicePtr<u32>, limit: u32, keep_going: DevicePtr<u32>);
    /// `bench_while_step(cudaGraphConditionalHandle handle, uint32_t* counter, uint32_t limit)`:
    /// `*counter += 1`, and the WHILE node goes on while `*counter < limit`.
    pub unsafe fn bench_while_step(handle: ConditionalHandle, counter: DevicePtr<u32>, limit: u32);
    /// `bench_count(uint32_t* counter)`: `atomicAdd(counter, 1)`: the CDP child, and each
    /// node of the width graphs.
    pub unsafe fn bench_count(counter: DevicePtr<u32>);
    /// `bench_cdp_parent(uint32_t* counter, uint32_t children, int* error)`: launches
    /// `children` `bench_count(counter)` from one device thread, one after another; the first
    /// launch that fails stops it and leaves its `cudaError_t` in `*error`.
    pub unsafe fn bench_cdp_parent(counter: DevicePtr<u32>, children: u32, error: DevicePtr<i32>);
}

// kernels/kernels.cu: the Rust path's device-launch kernels.
// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu). They trust those counts: this unpublished crate's benchmarks pass
// counts no larger than the buffers.
cuda_graph::kernels! {
    /// `bench_dl_scheduler(cudaGraphExec_t work, uint32_t mode, uint32_t iters, uint32_t* steps, DlErrorSlot* slot)`:
    /// one step per run of its own graph: launches `work` fire-and-forget (`mode` 1) or as a
    /// tail launch (2), counts the step, and tail-relaunches itself until `iters` steps ran.
    /// One thread, inside a device-launch graph.
    pub unsafe fn bench_dl_scheduler(
        work: DeviceExecArg,
        mode: u32,
        iters: u32,
        steps: DevicePtr<u32>,
        slot: DevicePtr<RawErrorSlot>,
    );
    /// `bench_dl_relaunch_step(uint32_t* counter, uint32_t limit, DlErrorSlot* slot)`:
    /// `*counter += 1`, and while `*counter < limit` it tail-relaunches its own graph. One
    /// thread, inside a device-launch graph.
    pub unsafe fn bench_dl_relaunch_step(counter: DevicePtr<u32>, limit: u32, slot: DevicePtr<RawErrorSlot>);
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    #[test]
    fn match_the_cpp_parameter_types() {
        for (name, outcome) in [
            ("bench_empty", super::bench_empty().check_types()),
            ("bench_chain_step", super::bench_chain_step().check_types()),
            ("bench_rmw", super::bench_rmw().check_types()),
            ("bench_pdl_empty", super::bench_pdl_empty().check_types()),
            ("bench_pdl_rmw", super::bench_pdl_rmw().check_types()),
            ("bench_host_step", super::bench_host_step().check_types()),
            ("bench_while_step", super::bench_while_step().check_types()),
            ("bench_count", super::bench_count().check_types()),
            ("bench_cdp_parent", super::bench_cdp_parent().check_types()),
            ("bench_dl_scheduler", super::bench_dl_scheduler().check_types()),
            ("bench_dl_relaunch_step", super::bench_dl_relaunch_step().check_types()),
        ] {
            assert_eq!(outcome, Ok(()), "{name}");
        }
    }
}
