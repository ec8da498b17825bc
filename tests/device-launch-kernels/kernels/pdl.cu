// Work for device-launched graphs joined by programmatic edges.
#include <stdint.h>

#include "cuda_graph_pdl.cuh"

// counters[index] += 1, not atomically, after letting its dependents launch and waiting for
// the kernels before it (one thread). A chain joined by programmatic edges counts every node
// only if every wait holds: overlapping read-modify-writes would lose counts.
extern "C" __global__ void dl_pdl_count(uint32_t* counters, uint32_t index) {
    cuda_graph::pdl::launch_dependents();
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    cuda_graph::pdl::wait_upstream();
    counters[index] += 1u;
}
