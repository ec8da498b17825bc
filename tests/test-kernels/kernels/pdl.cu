// Kernels for the launch-attribute and programmatic-edge tests: an ordered log that
// only a correct chain of programmatic dependencies fills in order, and kernels that report
// how they were launched (cluster size, cooperative grid).
#include <cooperative_groups.h>
#include <stdint.h>

#include "cuda_graph.cuh"
#include "cuda_graph_pdl.cuh"

// Appends `value` to `log`, not atomically: log[0] counts entries, entry k is log[1 + k]
// (dropped past the end of the slice). One thread. It lets its dependents launch first, then
// waits for the kernels before it: a chain joined by programmatic edges (or launched with
// programmatic serialization) appends in chain order, one entry per kernel, only if every
// wait holds; read-modify-writes that overlapped would lose or misplace entries.
extern "C" __global__ void pdl_append(cuda_graph::slice<uint32_t> log, uint32_t value) {
    cuda_graph::pdl::launch_dependents();
    if (blockIdx.x != 0 || threadIdx.x != 0 || log.size() == 0) return;
    cuda_graph::pdl::wait_upstream();
    const uint32_t k = log[0];
    if (1 + static_cast<uint64_t>(k) < log.size()) log[1 + k] = value;
    log[0] = k + 1;
}

// out[b] = the number of blocks in block b's cluster (1 without clusters, or below sm_90), for
// every block b of the grid that fits in `out` (thread 0 of each block).
extern "C" __global__ void cluster_blocks(cuda_graph::slice<uint32_t> out) {
    if (threadIdx.x != 0 || threadIdx.y != 0 || threadIdx.z != 0) return;
    uint32_t blocks = 1;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    blocks = cooperative_groups::this_cluster().num_blocks();
#endif
    const uint64_t b = blockIdx.x + static_cast<uint64_t>(gridDim.x) * (blockIdx.y + static_cast<uint64_t>(gridDim.y) * blockIdx.z);
    if (b < out.size()) out[b] = blocks;
}

// A grid-wide barrier: thread 0 of block b writes out[b] = b + 1, every thread of the grid
// waits at cooperative_groups::this_grid().sync(), then thread 0 of block 0 writes the sum of
// out[0..gridDim.x) to out[gridDim.x] (1-D grids; nothing is written when `out` is shorter
// than gridDim.x + 1). The barrier needs every block resident at once: launch it only as a
// cooperative grid (`KernelAttributes::cooperative`), or it may never return.
extern "C" __global__ void grid_sync_sum(cuda_graph::slice<uint32_t> out) {
    if (out.size() < static_cast<uint64_t>(gridDim.x) + 1) return;  // the same for every block
    if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x + 1;
    cooperative_groups::this_grid().sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        uint32_t sum = 0;
        for (uint32_t b = 0; b < gridDim.x; ++b) sum += out[b];
        out[gridDim.x] = sum;
    }
}
