// Kernels for the foundation smoke tests: a plain kernel, a CDP2 parent with a child and a tail
// launch, and a kernel for a graph built from the raw bindings.
#include <cuda_runtime.h>
#include <stdint.h>

// out[i] = pattern(i, seed): a value no buffer holds by accident.
__device__ __forceinline__ uint32_t smoke_pattern(uint32_t i, uint32_t seed) {
    return (i * 2654435761u) ^ seed;
}

extern "C" __global__ void smoke_fill_pattern(uint32_t* out, uint32_t n, uint32_t seed) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = smoke_pattern(i, seed);
}

// The child doubles each element; the tail kernel runs after the parent grid and all its
// children finished, so it must see every doubled element: it sums them.
extern "C" __global__ void smoke_cdp_child(uint32_t* data, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= 2u;
}

extern "C" __global__ void smoke_cdp_tail(const uint32_t* data, uint32_t n, unsigned long long* sum) {
    unsigned long long total = 0;
    for (uint32_t i = 0; i < n; ++i) total += data[i];
    *sum = total;
}

// status[0]: error of the child launch, status[1]: error of the tail launch (0 = cudaSuccess).
extern "C" __global__ void smoke_cdp_parent(uint32_t* data, uint32_t n, unsigned long long* sum, int* status) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    smoke_cdp_child<<<(n + 127) / 128, 128, 0, cudaStreamFireAndForget>>>(data, n);
    status[0] = (int)cudaGetLastError();
    smoke_cdp_tail<<<1, 1, 0, cudaStreamTailLaunch>>>(data, n, sum);
    status[1] = (int)cudaGetLastError();
}

// data[i] = data[i] * scale + i, for the raw 3-node graph (memset -> this -> memcpy).
extern "C" __global__ void smoke_scale_add_index(uint32_t* data, uint32_t n, uint32_t scale) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = data[i] * scale + i;
}
