// Kernels loaded at run time by the tests of cuda_graph::kernel::Module: plain arithmetic on
// device memory, no device runtime (so PTX holds them too).
#include <cstdint>
#include "cuda_graph.cuh"

// A global for the tests of Module::symbol (C linkage: its name stays plain).
extern "C" {
__device__ uint32_t mod_bias[4];
}

// data[i] += value for i < n.
extern "C" __global__ void mod_add(uint32_t* data, uint32_t n, uint32_t value) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        data[i] += value;
    }
}

// data[i] = data[i] * factor + 1 for i < n.
extern "C" __global__ void mod_scale(float* data, uint32_t n, float factor) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        data[i] = data[i] * factor + 1.0f;
    }
}

// out[i] = value for every element of the slice.
extern "C" __global__ void mod_fill(cuda_graph::slice<uint32_t> out, uint32_t value) {
    uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (i < out.size()) {
        out[i] = value;
    }
}
