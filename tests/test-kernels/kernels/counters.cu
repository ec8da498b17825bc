// Kernels that count how often they ran: for checking that graph nodes ran, and how many times.
#include <stdint.h>

// counters[index] += 1, once per launch (thread 0 of block 0 only, whatever the geometry).
extern "C" __global__ void increment_counter(uint32_t* counters, uint32_t index) {
    if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0 && threadIdx.y == 0 &&
        threadIdx.z == 0) {
        atomicAdd(&counters[index], 1u);
    }
}
