//! The benchmark kernels (kernels/kernels.cu), declared for the Rust path. The C++ twin
//! launches the same compiled kernels.

use cuda_graph::graph::ConditionalHandle;
use cuda_graph::DevicePtr;

cuda_graph::kernels! {
    /// `bench_empty()`: does nothing.
    pub fn bench_empty();
    /// `bench_chain_step(uint32_t* counter, uint32_t value)`: `*counter += value`.
    pub fn bench_chain_step(counter: DevicePtr<u32>, value: u32);
    /// `bench_host_step(uint32_t* counter, uint32_t limit, uint32_t* keep_going)`:
    /// `*counter += 1; *keep_going = *counter < limit`.
    pub fn bench_host_step(counter: DevicePtr<u32>, limit: u32, keep_going: DevicePtr<u32>);
    /// `bench_while_step(cudaGraphConditionalHandle handle, uint32_t* counter, uint32_t limit)`:
    /// `*counter += 1`, and the WHILE node goes on while `*counter < limit`.
    pub fn bench_while_step(handle: ConditionalHandle, counter: DevicePtr<u32>, limit: u32);
    /// `bench_cdp_child(uint32_t* counter)`: `atomicAdd(counter, 1)`.
    pub fn bench_cdp_child(counter: DevicePtr<u32>);
    /// `bench_cdp_parent(uint32_t* counter, uint32_t children)`: launches `children`
    /// `bench_cdp_child(counter)` from one device thread, one after another.
    pub fn bench_cdp_parent(counter: DevicePtr<u32>, children: u32);
}
