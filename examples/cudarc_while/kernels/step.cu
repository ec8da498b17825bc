// One Collatz step for every value not yet at 1: v -> v / 2 (even) or 3v + 1 (odd), counting
// the steps each value took, and raising *active when some value is still not at 1.
#include <cstdint>

extern "C" __global__ void collatz_step(uint64_t* values, uint32_t* steps, uint32_t n, uint32_t* active) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint64_t v = values[i];
    if (v <= 1) return;
    v = (v % 2 == 0) ? v / 2 : 3 * v + 1;
    values[i] = v;
    steps[i] += 1;
    if (v != 1) *active = 1;
}
