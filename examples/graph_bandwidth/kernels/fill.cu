// Fills a copy source with a seeded pattern, so that a copy that moved the wrong bytes (or
// none) is caught. Word i of the buffer is gb_pattern(i, seed); the CPU check
// (src/lib.rs: pattern) computes the same in 32-bit integers. The buffer comes from cudaMalloc
// (256-byte aligned) and its size is a multiple of 4, so it is written as 32-bit words.
#include <stdint.h>

static __device__ __forceinline__ uint32_t gb_pattern(uint32_t i, uint32_t seed) {
    uint32_t x = (i * 0x9E3779B9u) ^ seed;
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

extern "C" __global__ void gb_fill(uint8_t* out, uint32_t words, uint32_t seed) {
    uint32_t* w = reinterpret_cast<uint32_t*>(out);
    const uint32_t stride = gridDim.x * blockDim.x;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) {
        w[i] = gb_pattern(i, seed);
    }
}

// Counts passes: one thread adds 1 to counter[0]. One launch ends every group of copies or
// memsets (a kernel node at the end of each graph, a launch after each group on the stream),
// because a copy or memset leaves the same bytes however often it runs: the count is what shows
// that every graph replay and every stream group ran, exactly once.
extern "C" __global__ void gb_count(uint32_t* counter) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        counter[0] += 1u;
    }
}
