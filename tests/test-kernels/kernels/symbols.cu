// __device__ variables with C linkage (their host shadows keep the plain names, which
// cuda_graph::device_symbols! links to), and kernels that read and write them.
#include <stdint.h>

extern "C" {
__device__ uint32_t symbol_offset;
__device__ uint32_t symbol_table[16];
}

// out[i] = symbol_table[i % 16] + symbol_offset for i < n.
extern "C" __global__ void add_symbol_table(uint32_t* out, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = symbol_table[i % 16] + symbol_offset;
    }
}

// symbol_offset += by, once per launch (thread 0 of block 0 only).
extern "C" __global__ void bump_symbol_offset(uint32_t by) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        symbol_offset += by;
    }
}
