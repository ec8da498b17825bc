// Kernels that write or update whole buffers, one thread per element.
#include <stdint.h>

// out[i] = (i * 2654435761u) ^ seed: a value no buffer holds by accident.
extern "C" __global__ void fill_pattern(uint32_t* out, uint32_t n, uint32_t seed) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (i * 2654435761u) ^ seed;
}

// data[i] += value.
extern "C" __global__ void add_scalar(uint32_t* data, uint32_t n, uint32_t value) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += value;
}

// data[i] = data[i] * scale + i (wrapping, as unsigned arithmetic does).
extern "C" __global__ void scale_add_index(uint32_t* data, uint32_t n, uint32_t scale) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = data[i] * scale + i;
}

// Spins for `spin_cycles` clock cycles, then does what fill_pattern does: a kernel that
// writes its buffer long after it was launched, for tests of what must wait for it.
extern "C" __global__ void fill_pattern_after_spin(uint32_t* out, uint32_t n, uint32_t seed,
                                                   uint64_t spin_cycles) {
    long long start = clock64();
    while ((uint64_t)(clock64() - start) < spin_cycles) {
    }
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (i * 2654435761u) ^ seed;
}
