// A data-dependent branch per iteration: a predicate looks at the data and picks the heavy or the
// light update, which changes the data the next predicate looks at.
//
// gcr_predicate_graph sets the condition of an IF/ELSE node (heavy body when 1, light when 0)
// with cudaGraphSetConditional; gcr_predicate_host stores the same decision for the host to read
// back. The updates are 32-bit integer arithmetic, so the CPU model (src/model.rs) matches them
// bit for bit. Each update's thread (0, 0) also appends its code (1 heavy, 2 light) to
// trace[*step] and advances *step: the record of which branch ran, iteration by iteration.
#include <cuda_runtime.h>
#include <stdint.h>

#define GCR_FULL_MASK 0xffffffffu

// The decision: one warp xor-folds 32 samples spread over the data and takes bit 11 of the
// result (1: heavy). Lanes read data[(lane * stride) % n]. Valid in lane 0 of warp 0.
static __device__ uint32_t gcr_decide(const uint32_t* data, uint32_t n) {
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t stride = n >= 32u ? n / 32u : 1u;
    uint32_t folded = data[(lane * stride) % n];
    for (int offset = 16; offset > 0; offset >>= 1) {
        folded ^= __shfl_xor_sync(GCR_FULL_MASK, folded, offset);
    }
    return (folded >> 11) & 1u;
}

// Launch with one block of 32 threads.
extern "C" __global__ void gcr_predicate_graph(cudaGraphConditionalHandle handle, const uint32_t* data, uint32_t n) {
    const uint32_t heavy = gcr_decide(data, n);
    if (threadIdx.x == 0) {
        cudaGraphSetConditional(handle, heavy);
    }
}

// Launch with one block of 32 threads.
extern "C" __global__ void gcr_predicate_host(uint32_t* flag, const uint32_t* data, uint32_t n) {
    const uint32_t heavy = gcr_decide(data, n);
    if (threadIdx.x == 0) {
        *flag = heavy;
    }
}

static __device__ void gcr_record(uint32_t* trace, uint32_t* step, uint32_t code) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const uint32_t s = *step;
        trace[s] = code;
        *step = s + 1u;
    }
}

// The heavy branch: `rounds` LCG steps and xorshifts per element.
extern "C" __global__ void gcr_heavy(uint32_t* data, uint32_t n, uint32_t rounds, uint32_t* trace, uint32_t* step) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        uint32_t x = data[i];
        for (uint32_t r = 0; r < rounds; ++r) {
            x = x * 1664525u + 1013904223u;
            x ^= x >> 13;
        }
        data[i] = x;
    }
    gcr_record(trace, step, 1u);
}

// The light branch: one xorshift and an add per element.
extern "C" __global__ void gcr_light(uint32_t* data, uint32_t n, uint32_t* trace, uint32_t* step) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const uint32_t x = data[i];
        data[i] = (x ^ (x >> 9)) + 0x9e3779b9u + i;
    }
    gcr_record(trace, step, 2u);
}
