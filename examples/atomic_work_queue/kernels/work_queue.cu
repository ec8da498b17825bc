// Irregular work spread over a grid six ways: three fixed (static) splits (a tile per block, a
// grid-stride loop, one thread per item over a full grid), a global
// atomic counter claimed per thread, per warp (the leader claims a batch and broadcasts it
// with __shfl_sync), and per block then per warp (a shared-memory counter under the global one).
//
// Each way is compiled twice, for the two kinds of per-item work (AwqLcg and AwqSinCos below):
// the kernel `awq_X` does the port's integer rounds, `awq_X_sincos` the listing's float ones.
// Every kernel writes out[i] = W::work(i, costs[i], n, salt) for each i < n exactly once; only
// the order and the thread that does it differ, so every output is bit-identical to the CPU
// reference (src/workload.rs). No kernel calls a CUDA API that returns a status: they use
// atomics, shuffles, votes and barriers only.
//
// Counters (`next`) are zeroed by the host before each launch. A claim may run past n by at
// most one claim per group of lanes (the host keeps n <= 2^30, so it cannot wrap).
#include <stdint.h>

#include "chapter_common_work.cuh"

#define AWQ_FULL_MASK 0xffffffffu

// The port's work: `cost` rounds of an LCG step and an xorshift from the item's index and the
// salt (chapter_common_work.cuh); the CPU side is src/workload.rs: item_work.
struct AwqLcg {
    static __device__ __forceinline__ uint32_t work(uint32_t index, uint32_t cost, uint32_t, uint32_t salt) {
        return cc_lcg_rounds(index, cost, salt);
    }
};

// The listing's value of an item: x = index / n, as the listing fills its input array with
// (float)i / N (here computed, not loaded: the cost is the one load per item instead).
static __device__ __forceinline__ float awq_listing_x(uint32_t index, uint32_t n) {
    return (float)index / (float)n;
}

// The listing's work: `cost` rounds of result += sinf(x) * cosf(x). nvcc (default --fmad=true)
// compiles the listing's statement to one fused multiply-add of the two calls each round, both
// computed in the loop; this is that, written out so the CPU side (src/workload.rs:
// listing_item_work) can do the same rounding. The result's bits are stored as a uint32_t.
struct AwqSinCos {
    static __device__ __forceinline__ uint32_t work(uint32_t index, uint32_t cost, uint32_t n, uint32_t) {
        const float x = awq_listing_x(index, n);
        float result = 0.0f;
        for (uint32_t k = 0; k < cost; ++k) {
            result = __fmaf_rn(sinf(x), cosf(x), result);
        }
        return __float_as_uint(result);
    }
};

// The GPU's own sinf(x) and cosf(x) of every item's x (bits), for the CPU reference of the
// listing's rounds and for the check of both against the CPU's sine and cosine. Untimed.
extern "C" __global__ void awq_sincos_table(uint32_t* sines, uint32_t* cosines, uint32_t n) {
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float x = awq_listing_x((uint32_t)i, n);
        sines[i] = __float_as_uint(sinf(x));
        cosines[i] = __float_as_uint(cosf(x));
    }
}

// (1) Static: block b owns the b-th contiguous tile of ceil(n / gridDim.x) items; its threads
// stride through the tile (coalesced). A block whose tile is costly keeps its SM busy long after
// the others have finished, with only its own warps left to hide latency.
template <class W>
static __device__ __forceinline__ void awq_static_tiles_body(const uint32_t* costs, uint32_t* out, uint32_t n,
                                                             uint32_t salt) {
    const uint64_t tile = ((uint64_t)n + gridDim.x - 1) / gridDim.x;
    const uint64_t begin = (uint64_t)blockIdx.x * tile;
    const uint64_t end = begin + tile < (uint64_t)n ? begin + tile : (uint64_t)n;
    for (uint64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
        out[i] = W::work((uint32_t)i, costs[i], n, salt);
    }
}

// (1b) Static, the chapter's form: one thread per item over a full grid of ceil(n / blockDim.x)
// blocks (not the persistent grid). Each thread's item is fixed, but blocks are handed to SMs
// by the block scheduler as earlier ones retire, so a hot block delays only its own SM slot.
template <class W>
static __device__ __forceinline__ void awq_static_per_item_body(const uint32_t* costs, uint32_t* out, uint32_t n,
                                                                uint32_t salt) {
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = W::work((uint32_t)i, costs[i], n, salt);
    }
}

// (1c) Static, grid-stride: on the persistent grid, thread t of T takes items t, t + T, t + 2T...
// A hot span is spread over every block instead of sitting in one block's tile.
template <class W>
static __device__ __forceinline__ void awq_static_grid_stride_body(const uint32_t* costs, uint32_t* out,
                                                                   uint32_t n, uint32_t salt) {
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = W::work((uint32_t)i, costs[i], n, salt);
    }
}

// (2) Dynamic, one item per claim: every thread takes the next item from the global counter
// until none is left. One atomic per item, all on one address.
template <class W>
static __device__ __forceinline__ void awq_dynamic_per_thread_body(const uint32_t* costs, uint32_t* out,
                                                                   uint32_t n, uint32_t salt, uint32_t* next) {
    for (;;) {
        const uint32_t i = atomicAdd(next, 1u);
        if (i >= n) {
            return;
        }
        out[i] = W::work(i, costs[i], n, salt);
    }
}

// (3) and (5) Warp-leader batching: `batch` items per atomic (a power of two). For batch >= 32
// lane 0 claims for the whole warp and the lanes stride through the batch; for batch < 32 the
// warp is split into groups of `batch` lanes, each with its own leader, so every lane works.
// The leader's claim reaches its group through __shfl_sync (width = group size). The loop is
// warp-uniform (__any_sync), so the full-mask shuffles always see all 32 lanes; blockDim.x is a
// multiple of 32.
template <class W>
static __device__ __forceinline__ void awq_warp_batched_body(const uint32_t* costs, uint32_t* out, uint32_t n,
                                                             uint32_t salt, uint32_t* next, uint32_t batch) {
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t width = batch < 32u ? batch : 32u;
    const uint32_t rank = lane % width;
    for (;;) {
        uint32_t base = 0;
        if (rank == 0) {
            base = atomicAdd(next, batch);
        }
        base = __shfl_sync(AWQ_FULL_MASK, base, 0, (int)width);
        if (!__any_sync(AWQ_FULL_MASK, base < n)) {
            return;
        }
        for (uint32_t j = rank; j < batch; j += width) {
            const uint64_t i = (uint64_t)base + j;
            if (i < n) {
                out[i] = W::work((uint32_t)i, costs[i], n, salt);
            }
        }
    }
}

// (4) Hierarchical: thread 0 claims `chunk` items (a multiple of 32) for the block with one global
// atomic; the block's warps then claim 32 at a time from that chunk with a shared-memory atomic
// (lane 0 claims, __shfl_sync broadcasts). When the chunk is used up the block meets at a barrier
// and claims the next one.
template <class W>
static __device__ __forceinline__ void awq_hierarchical_body(const uint32_t* costs, uint32_t* out, uint32_t n,
                                                             uint32_t salt, uint32_t* next, uint32_t chunk) {
    __shared__ uint32_t chunk_base;
    __shared__ uint32_t chunk_taken;
    const uint32_t lane = threadIdx.x & 31u;
    for (;;) {
        if (threadIdx.x == 0) {
            chunk_base = atomicAdd(next, chunk);
            chunk_taken = 0;
        }
        __syncthreads();
        const uint32_t base = chunk_base;  // the same for the whole block: read after the barrier
        if (base >= n) {
            return;
        }
        for (;;) {
            uint32_t offset = 0;
            if (lane == 0) {
                offset = atomicAdd(&chunk_taken, 32u);
            }
            offset = __shfl_sync(AWQ_FULL_MASK, offset, 0);
            if (offset >= chunk) {
                break;
            }
            const uint64_t i = (uint64_t)base + offset + lane;
            if (offset + lane < chunk && i < n) {
                out[i] = W::work((uint32_t)i, costs[i], n, salt);
            }
        }
        // Every warp is done with this chunk before thread 0 overwrites chunk_base/chunk_taken.
        __syncthreads();
    }
}

// Each way, once with each work: `NAME` (the port's rounds) and `NAME_sincos` (the listing's).
#define AWQ_KERNELS(NAME, PARAMS, ARGS)                                                     \
    extern "C" __global__ void NAME PARAMS { NAME##_body<AwqLcg> ARGS; }                   \
    extern "C" __global__ void NAME##_sincos PARAMS { NAME##_body<AwqSinCos> ARGS; }

AWQ_KERNELS(awq_static_tiles, (const uint32_t* costs, uint32_t* out, uint32_t n, uint32_t salt),
            (costs, out, n, salt))
AWQ_KERNELS(awq_static_per_item, (const uint32_t* costs, uint32_t* out, uint32_t n, uint32_t salt),
            (costs, out, n, salt))
AWQ_KERNELS(awq_static_grid_stride, (const uint32_t* costs, uint32_t* out, uint32_t n, uint32_t salt),
            (costs, out, n, salt))
AWQ_KERNELS(awq_dynamic_per_thread,
            (const uint32_t* costs, uint32_t* out, uint32_t n, uint32_t salt, uint32_t* next),
            (costs, out, n, salt, next))
AWQ_KERNELS(awq_warp_batched,
            (const uint32_t* costs, uint32_t* out, uint32_t n, uint32_t salt, uint32_t* next, uint32_t batch),
            (costs, out, n, salt, next, batch))
AWQ_KERNELS(awq_hierarchical,
            (const uint32_t* costs, uint32_t* out, uint32_t n, uint32_t salt, uint32_t* next, uint32_t chunk),
            (costs, out, n, salt, next, chunk))
