// Adaptive refinement with CUDA Dynamic Parallelism (CDP2), and the device graph launch that
// post-processes its result.
//
// The field v has `cells` cells of `points` points (values below 65536). A cell needs refining
// when its steepest step |v[i+1] - v[i]| (i in the cell, i + 1 < n) exceeds `threshold`.
// Every point i gets an output out[i], the sum of `r` sub-samples over [i, i+1]:
//   coarse (cell not refined, written by the parent's warp): r * v[i]
//   refined (written by a child kernel):  sum_k (v[i] * (r - k) + v[i+1] * k) / r, k < r
// (integer arithmetic: the CPU model in src/model.rs matches it bit for bit). Then a reduction
// sums each cell: cell_sums[c].
//
// dp_parent:   one warp per cell; refined cells get a child grid (dp_refine) launched from the
//              device into cudaStreamFireAndForget, counted in *launched; thread 0 tail-launches
//              dp_reduce (cudaStreamTailLaunch), which therefore runs after the parent grid AND
//              all its fire-and-forget children: it sees their writes without any device-side
//              synchronization (removed in CDP2). Every launch goes through DL_LAUNCH_KERNEL, so
//              a refused launch lands in the DlErrorSlot instead of passing silently.
// dp_inspect:  the same inspection for the host-driven versions: the baseline then launches
//              dp_refine_all once over every cell (it reads `flags` on the device), then
//              dp_reduce: three host launches per pass, no round trip; the per-cell variant
//              reads `flags` back and launches dp_refine per refined cell, then dp_reduce.
// dp_dispatch: a launcher kernel (run inside a graph: device_launch::Launcher) that
//              fire-and-forgets the uploaded post-processing graph (dp_post_total ->
//              dp_post_share) when any cell was refined.
#include <device_launch.cuh>
#include <stdint.h>

#define DP_FULL_MASK 0xffffffffu
// Launch geometry shared with src/lib.rs.
#define DP_WARPS_PER_BLOCK 4u     // dp_parent / dp_inspect: blocks of 128 threads, a warp per cell
#define DP_CHILD_THREADS 128u     // dp_refine: blocks of 128 threads over one cell's points
#define DP_REDUCE_THREADS 256u    // dp_reduce, dp_post_total: blocks of 256 threads

// The output of point i when its cell is refined.
static __device__ __forceinline__ uint32_t dp_refined_value(const uint32_t* v, uint32_t n, uint32_t i, uint32_t r) {
    const uint32_t a = v[i];
    const uint32_t b = i + 1u < n ? v[i + 1u] : a;
    uint32_t sum = 0;
    for (uint32_t k = 0; k < r; ++k) sum += (a * (r - k) + b * k) / r;
    return sum;
}

// Called by a whole warp for `cell`: the cell's steepest step, valid on every lane.
static __device__ uint32_t dp_cell_gradient(const uint32_t* v, uint32_t n, uint32_t cell, uint32_t points) {
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t first = cell * points;
    uint32_t steepest = 0;
    for (uint32_t j = lane; j < points; j += 32u) {
        const uint32_t i = first + j;
        if (i + 1u < n) {
            const uint32_t a = v[i], b = v[i + 1u];
            steepest = max(steepest, a > b ? a - b : b - a);
        }
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        steepest = max(steepest, __shfl_xor_sync(DP_FULL_MASK, steepest, offset));
    }
    return steepest;
}

// Called by a whole warp for `cell`: decides, records flags[cell], and writes the coarse
// output when the cell is not refined. Returns the decision (on every lane).
static __device__ bool dp_inspect_cell(const uint32_t* v, uint32_t cells, uint32_t points, uint32_t r,
                                       uint32_t threshold, uint32_t cell, uint32_t* out, uint32_t* flags) {
    const uint32_t n = cells * points;
    const bool refine = dp_cell_gradient(v, n, cell, points) > threshold;
    const uint32_t lane = threadIdx.x & 31u;
    if (lane == 0) flags[cell] = refine ? 1u : 0u;
    if (!refine) {
        const uint32_t first = cell * points;
        for (uint32_t j = lane; j < points; j += 32u) out[first + j] = r * v[first + j];
    }
    return refine;
}

// Child: the refined output of every point of `cell`. Launch ceil(points / 128) blocks of 128.
// Block 0's thread 0 counts the child in *ran.
extern "C" __global__ void dp_refine(const uint32_t* v, uint32_t n, uint32_t cell, uint32_t points, uint32_t r,
                                     uint32_t* out, uint32_t* ran) {
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < points) {
        const uint32_t i = cell * points + j;
        out[i] = dp_refined_value(v, n, i, r);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(ran, 1u);
}

// The host-driven baseline's refinement, one launch over every cell: ceil(points / blockDim.x)
// blocks per cell (blocks of DP_CHILD_THREADS), block b serving cell b / that count. A block
// of an unrefined cell (flags[cell] == 0) exits at once; a refined cell's blocks write what
// dp_refine would. Block 0 of each refined cell counts the cell in *ran, as a child does.
extern "C" __global__ void dp_refine_all(const uint32_t* v, uint32_t cells, uint32_t points, uint32_t r,
                                         const uint32_t* flags, uint32_t* out, uint32_t* ran) {
    const uint32_t per_cell = (points + blockDim.x - 1u) / blockDim.x;
    const uint32_t cell = blockIdx.x / per_cell;
    if (cell >= cells || flags[cell] == 0u) return;  // whole blocks leave together
    const uint32_t part = blockIdx.x % per_cell;
    const uint32_t j = part * blockDim.x + threadIdx.x;
    if (j < points) {
        const uint32_t i = cell * points + j;
        out[i] = dp_refined_value(v, cells * points, i, r);
    }
    if (part == 0 && threadIdx.x == 0) atomicAdd(ran, 1u);
}

// cell_sums[c] = sum of out over cell c. Launch `cells` blocks of 256 threads.
extern "C" __global__ void dp_reduce(const uint32_t* out, uint32_t points, unsigned long long* cell_sums) {
    __shared__ unsigned long long partial[DP_REDUCE_THREADS / 32u];
    const uint32_t cell = blockIdx.x;
    unsigned long long sum = 0;
    for (uint32_t j = threadIdx.x; j < points; j += blockDim.x) sum += out[cell * points + j];
    for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(DP_FULL_MASK, sum, offset);
    if ((threadIdx.x & 31u) == 0) partial[threadIdx.x / 32u] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long total = 0;
        for (uint32_t w = 0; w < blockDim.x / 32u; ++w) total += partial[w];
        cell_sums[cell] = total;
    }
}

// The CDP2 parent: one warp per cell, blocks of 128 threads (ceil(cells / 4) blocks).
extern "C" __global__ void dp_parent(const uint32_t* v, uint32_t cells, uint32_t points, uint32_t r,
                                     uint32_t threshold, uint32_t* out, uint32_t* flags,
                                     unsigned long long* cell_sums, uint32_t* launched, uint32_t* ran,
                                     DlErrorSlot* slot) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        // Runs after this whole grid and every child it fire-and-forgets, issued before or after.
        DL_LAUNCH_KERNEL(slot, dp_reduce, cells, DP_REDUCE_THREADS, 0, cudaStreamTailLaunch, out, points, cell_sums);
    }
    const uint32_t cell = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
    if (cell >= cells) return;  // whole warps leave together
    if (dp_inspect_cell(v, cells, points, r, threshold, cell, out, flags) && (threadIdx.x & 31u) == 0) {
        const uint32_t blocks = (points + DP_CHILD_THREADS - 1u) / DP_CHILD_THREADS;
        if (DL_LAUNCH_KERNEL(slot, dp_refine, blocks, DP_CHILD_THREADS, 0, cudaStreamFireAndForget, v, cells * points,
                             cell, points, r, out, ran)) {
            atomicAdd(launched, 1u);
        }
    }
}

// The host-driven version's first kernel: the same inspection, no launches.
extern "C" __global__ void dp_inspect(const uint32_t* v, uint32_t cells, uint32_t points, uint32_t r,
                                      uint32_t threshold, uint32_t* out, uint32_t* flags) {
    const uint32_t cell = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
    if (cell >= cells) return;
    dp_inspect_cell(v, cells, points, r, threshold, cell, out, flags);
}

// Post-processing graph, node 1: *total = sum of cell_sums. One block of 256 threads.
extern "C" __global__ void dp_post_total(const unsigned long long* cell_sums, uint32_t cells,
                                         unsigned long long* total) {
    __shared__ unsigned long long partial[DP_REDUCE_THREADS / 32u];
    unsigned long long sum = 0;
    for (uint32_t c = threadIdx.x; c < cells; c += blockDim.x) sum += cell_sums[c];
    for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(DP_FULL_MASK, sum, offset);
    if ((threadIdx.x & 31u) == 0) partial[threadIdx.x / 32u] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long all = 0;
        for (uint32_t w = 0; w < blockDim.x / 32u; ++w) all += partial[w];
        *total = all;
    }
}

// Post-processing graph, node 2: share[c] = cell c's part of the total in millionths; block
// 0's thread 0 counts the graph's runs in *runs. Nothing else writes share, total or runs.
extern "C" __global__ void dp_post_share(const unsigned long long* cell_sums, uint32_t cells,
                                         const unsigned long long* total, uint32_t* share, uint32_t* runs) {
    const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long all = *total;
    if (c < cells) share[c] = all == 0 ? 0u : (uint32_t)(cell_sums[c] * 1000000ull / all);
    if (c == 0) atomicAdd(runs, 1u);
}

// The launcher: counts the refined cells and, when there are any, fire-and-forgets the
// post-processing graph, counting accepted launches in *dispatched. One thread. Must run
// inside a graph: launched on a plain stream (as the book's program does) it does not run.
extern "C" __global__ void dp_dispatch(cudaGraphExec_t post, const uint32_t* flags, uint32_t cells,
                                       uint32_t* dispatched, DlErrorSlot* slot) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    uint32_t refined = 0;
    for (uint32_t c = 0; c < cells; ++c) refined += flags[c];
    if (refined > 0 && DL_FIRE_AND_FORGET(post, slot)) atomicAdd(dispatched, 1u);
}
