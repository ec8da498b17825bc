// The kernels both sides of the benchmark launch: the Rust path (declared with
// cuda_graph::kernels! in src/kernels.rs) and the C++ twin (twin.cu). Each is as small as a
// kernel gets, so that what is measured is the launch, not the work; each leaves a count the
// host checks, so that a launch that did not run cannot pass for a fast one.
#include "bench_kernels.cuh"

// Does nothing: the stream-launch benchmark.
extern "C" __global__ void bench_empty() {}

// One node of a chain: *counter += value (one thread).
extern "C" __global__ void bench_chain_step(uint32_t* counter, uint32_t value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *counter += value;
}

// One step of the host-driven loop: *counter += 1; *keep_going = (*counter < limit). The host
// reads keep_going back after every step and decides whether to launch the next.
extern "C" __global__ void bench_host_step(uint32_t* counter, uint32_t limit, uint32_t* keep_going) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        uint32_t next = *counter + 1;
        *counter = next;
        *keep_going = next < limit ? 1u : 0u;
    }
}

// One step of the WHILE-node loop: *counter += 1, and the loop goes on while *counter < limit
// (cudaGraphSetConditional on the WHILE node's handle; the device decides, no host round trip).
extern "C" __global__ void bench_while_step(cudaGraphConditionalHandle handle, uint32_t* counter, uint32_t limit) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        uint32_t next = *counter + 1;
        *counter = next;
        cudaGraphSetConditional(handle, next < limit ? 1u : 0u);
    }
}

// The child of the CDP benchmark, launched from the host or from bench_cdp_parent.
extern "C" __global__ void bench_cdp_child(uint32_t* counter) {
    if (threadIdx.x == 0) atomicAdd(counter, 1u);
}

// One thread launches `children` children into the block's implicit (NULL) stream, where they
// run one after another, as host launches into one stream do. A launch the device runtime
// refuses (past cudaLimitDevRuntimePendingLaunchCount, say) shows as a short count.
extern "C" __global__ void bench_cdp_parent(uint32_t* counter, uint32_t children) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (uint32_t i = 0; i < children; ++i) {
        bench_cdp_child<<<1, 1>>>(counter);
    }
}
