// kl_tick with programmatic dependent launch: the same fold, after letting the next
// launch start and waiting for the previous one (cuda_graph_pdl.cuh). Launched with
// programmatic stream serialization, or as nodes joined by programmatic edges, the next
// kernel's launch overlaps this one; the wait keeps the fold in order, which the accumulator
// proves against the CPU model.
#include <stdint.h>

#include "cuda_graph_pdl.cuh"

extern "C" __global__ void kl_tick_pdl(uint32_t* acc, uint32_t value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        cuda_graph::pdl::launch_dependents();
        cuda_graph::pdl::wait_upstream();
        acc[0] = (acc[0] ^ value) * 0x01000193u;
    }
}
