// Declarations of the benchmark kernels (defined in kernels.cu), for the C++ twin (twin.cu),
// which launches the very kernels the Rust side launches.
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" __global__ void bench_empty();
extern "C" __global__ void bench_chain_step(uint32_t* counter, uint32_t value);
extern "C" __global__ void bench_host_step(uint32_t* counter, uint32_t limit, uint32_t* keep_going);
extern "C" __global__ void bench_while_step(cudaGraphConditionalHandle handle, uint32_t* counter, uint32_t limit);
extern "C" __global__ void bench_cdp_child(uint32_t* counter);
extern "C" __global__ void bench_cdp_parent(uint32_t* counter, uint32_t children);
