// Declarations of the benchmark kernels (defined in kernels.cu), for the C++ twin (twin.cu),
// which launches the very kernels the Rust side launches.
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" __global__ void bench_empty();
extern "C" __global__ void bench_chain_step(uint32_t* counter, uint32_t value);
extern "C" __global__ void bench_rmw(uint32_t* counter);
extern "C" __global__ void bench_pdl_empty();
extern "C" __global__ void bench_pdl_rmw(uint32_t* counter);
extern "C" __global__ void bench_host_step(uint32_t* counter, uint32_t limit, uint32_t* keep_going);
extern "C" __global__ void bench_while_step(cudaGraphConditionalHandle handle, uint32_t* counter, uint32_t limit);
extern "C" __global__ void bench_count(uint32_t* counter);
extern "C" __global__ void bench_cdp_parent(uint32_t* counter, uint32_t children, int* error);

// How a device scheduler launches the work graph of (f): the `mode` argument of both sides'
// scheduler kernels (bench_dl_scheduler in device_launch.cu, the twin's own in twin.cu), and
// src/device_launch_width.rs's `Mode` (0 is the host launch, which needs no scheduler).
#define BENCH_MODE_HOST_SYNC 0u
#define BENCH_MODE_FIRE_AND_FORGET 1u
#define BENCH_MODE_TAIL 2u
