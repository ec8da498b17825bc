// device_launch.cuh: launching graphs and kernels from device code with every failure
// recorded. Include it from kernels compiled with -rdc=true (cuda-build does that); find it
// through the `device-launch` crate's links metadata (DEP_DEVICE_LAUNCH_INCLUDE).
//
// Every helper returns true when the launch was accepted and otherwise records the first
// failure (CUDA code, operation, source line) into a DlErrorSlot that lives in device memory
// allocated by the host (device_launch::ErrorSlot). The host reads it after synchronizing and
// gets Err(DeviceLaunchError { .. }): no device-side launch failure passes silently.
//
// The slot is passed to kernels as a pointer, never defined here: a __device__ variable in a
// header would be defined once per translation unit under -rdc and collide at device link.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

// The device-launch limits, defined once for device code and Rust alike by cudadevrt-sys
// (whose folder device-launch publishes next to this one).
#include "cudadevrt_limits.cuh"

// The same limits under this header's prefix.
#define DL_FIRE_AND_FORGET_LIMIT CUDADEVRT_FIRE_AND_FORGET_LIMIT
#define DL_TAIL_LAUNCH_LIMIT CUDADEVRT_TAIL_LAUNCH_LIMIT

// Which helper failed (DeviceLaunchError::operation on the host, device_launch::Operation,
// which numbers them in this order from 1).
enum DlOperation : int32_t {
    DL_OP_NONE = 0,
    DL_OP_FIRE_AND_FORGET,  // 1
    DL_OP_TAIL,             // 2
    DL_OP_SIBLING,          // 3
    DL_OP_RELAUNCH_SELF,    // 4
    DL_OP_KERNEL,           // 5
    DL_OP_USER,             // 6
};

// Layout shared with device_launch::ErrorSlot (repr(C), 16 bytes).
struct DlErrorSlot {
    int32_t code;          // first cudaError_t recorded; 0 = none
    int32_t operation;     // DlOperation of that failure
    int32_t line;          // source line of the helper call
    uint32_t failures;     // how many failures in all (the first is kept)
};

// Records a failure; the first one wins, later ones only count.
__device__ __forceinline__ void dl_record_failure(DlErrorSlot* slot, cudaError_t code, DlOperation op, int line) {
    atomicAdd(&slot->failures, 1u);
    if (atomicCAS(&slot->code, 0, (int32_t)code) == 0) {
        slot->operation = (int32_t)op;
        slot->line = line;
        __threadfence();
    }
}

__device__ __forceinline__ bool dl_check(DlErrorSlot* slot, cudaError_t code, DlOperation op, int line) {
    if (code == cudaSuccess) return true;
    dl_record_failure(slot, code, op, line);
    return false;
}

// Launches `graph` fire-and-forget: it runs concurrently with the launching grid's graph.
__device__ __forceinline__ bool dl_fire_and_forget_at(cudaGraphExec_t graph, DlErrorSlot* slot, int line) {
    return dl_check(slot, cudaGraphLaunch(graph, cudaStreamGraphFireAndForget), DL_OP_FIRE_AND_FORGET, line);
}
// Launches `graph` as a tail launch: it runs after the launching graph completes.
__device__ __forceinline__ bool dl_tail_launch_at(cudaGraphExec_t graph, DlErrorSlot* slot, int line) {
    return dl_check(slot, cudaGraphLaunch(graph, cudaStreamGraphTailLaunch), DL_OP_TAIL, line);
}
// Launches `graph` as a sibling of the launching graph (same parent, not a child).
__device__ __forceinline__ bool dl_sibling_launch_at(cudaGraphExec_t graph, DlErrorSlot* slot, int line) {
    return dl_check(slot, cudaGraphLaunch(graph, cudaStreamGraphFireAndForgetAsSibling), DL_OP_SIBLING, line);
}
// Tail-launches the graph this kernel belongs to again (a device-side loop).
__device__ __forceinline__ bool dl_relaunch_self_at(DlErrorSlot* slot, int line) {
    return dl_check(slot, cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch), DL_OP_RELAUNCH_SELF, line);
}

#define DL_FIRE_AND_FORGET(graph, slot) dl_fire_and_forget_at((cudaGraphExec_t)(graph), (slot), __LINE__)
#define DL_TAIL_LAUNCH(graph, slot) dl_tail_launch_at((cudaGraphExec_t)(graph), (slot), __LINE__)
#define DL_SIBLING_LAUNCH(graph, slot) dl_sibling_launch_at((cudaGraphExec_t)(graph), (slot), __LINE__)
#define DL_RELAUNCH_SELF(slot) dl_relaunch_self_at((slot), __LINE__)

// CDP2 kernel launch with the error checked: DL_LAUNCH_KERNEL(slot, kernel, grid, block,
// shared_bytes, stream, args...). Use cudaStreamFireAndForget or cudaStreamTailLaunch as the
// stream (CDP2 has no device-side synchronization). Evaluates to true when accepted.
#define DL_LAUNCH_KERNEL(slot, kernel, grid, block, shared_bytes, stream, ...)                \
    ([&]() -> bool {                                                                         \
        kernel<<<(grid), (block), (shared_bytes), (stream)>>>(__VA_ARGS__);                  \
        return dl_check((slot), cudaGetLastError(), DL_OP_KERNEL, __LINE__);                 \
    }())

// Records a failure of the user's own device-side check (for example a device cudaMalloc).
#define DL_CHECK(slot, call) dl_check((slot), (call), DL_OP_USER, __LINE__)

// ---------------------------------------------------------------------------------------------
// Work queue (device_launch::WorkQueue): items pushed by the host, claimed on the device.
//
// Layout shared with device_launch::RawQueue (repr(C), 24 bytes). The host writes `items`,
// `capacity` and `count`; consumers claim items by advancing `head` atomically and report
// finished ones in `processed`, which the host reads (WorkQueue::processed).
struct DlQueue {
    uint32_t* items;       // device array of `capacity` items
    uint32_t capacity;     // room in `items`
    uint32_t count;        // items pushed so far (the tail)
    uint32_t head;         // next item to claim; may run past `count` (claims past it are empty)
    uint32_t processed;    // items reported done with dl_queue_done
};

// The number of items to hand out: `count`, never more than `capacity`. The host may rewrite
// `count` (WorkQueue::push_all, reset) while consumers on an unordered stream run, so a
// consumer can read any value there; clamping keeps every claim inside `items`.
__device__ __forceinline__ uint32_t dl_queue_count(const DlQueue* q) {
    uint32_t count = *(const volatile uint32_t*)&q->count;
    return count < q->capacity ? count : q->capacity;
}

// Claims one item for the calling thread: true with the item in *item, false once the queue
// is drained. One atomicAdd per item. Loop: `uint32_t item; while (dl_queue_pop(q, &item)) ...`
__device__ __forceinline__ bool dl_queue_pop(DlQueue* q, uint32_t* item) {
    uint32_t count = dl_queue_count(q);
    if (*(volatile uint32_t*)&q->head >= count) return false;  // drained: do not push head further
    uint32_t index = atomicAdd(&q->head, 1u);
    if (index >= count) return false;
    *item = q->items[index];
    return true;
}

// Claims up to 32 items for a whole warp with one atomicAdd (lane 0 claims, __shfl_sync
// broadcasts). All 32 lanes must call it together (blockDim.x a multiple of 32, no divergence).
// Returns the same value on every lane: true while the warp's claim reached items (keep
// looping), false once the queue is drained. *got says whether this lane received an item.
//   uint32_t item; bool got;
//   while (dl_queue_pop_warp(q, &item, &got)) { if (got) work(item); }
__device__ __forceinline__ bool dl_queue_pop_warp(DlQueue* q, uint32_t* item, bool* got) {
    const unsigned lane = threadIdx.x & 31u;
    uint32_t count = dl_queue_count(q);
    uint32_t base = 0;
    if (lane == 0) {
        base = *(volatile uint32_t*)&q->head;
        if (base < count) base = atomicAdd(&q->head, 32u);
    }
    base = __shfl_sync(0xffffffffu, base, 0);
    uint32_t index = base + lane;
    *got = index < count;
    if (*got) *item = q->items[index];
    return base < count;
}

// Claims up to one item per thread of the block with one atomicAdd (thread 0 claims, shared
// memory broadcasts). Every thread of the block must call it (it synchronizes the block).
// Same return convention as dl_queue_pop_warp:
//   uint32_t item; bool got;
//   while (dl_queue_pop_block(q, &item, &got)) { if (got) work(item); }
__device__ __forceinline__ bool dl_queue_pop_block(DlQueue* q, uint32_t* item, bool* got) {
    __shared__ uint32_t dl_block_base;
    const uint32_t threads = blockDim.x * blockDim.y * blockDim.z;
    const uint32_t rank = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    uint32_t count = dl_queue_count(q);
    if (rank == 0) {
        uint32_t base = *(volatile uint32_t*)&q->head;
        dl_block_base = base < count ? atomicAdd(&q->head, threads) : base;
    }
    __syncthreads();
    uint32_t base = dl_block_base;
    __syncthreads();  // every thread has read the base before the next call overwrites it
    uint32_t index = base + rank;
    *got = index < count;
    if (*got) *item = q->items[index];
    return base < count;
}

// Reports `n` items finished (WorkQueue::processed on the host).
__device__ __forceinline__ void dl_queue_done(DlQueue* q, uint32_t n) {
    if (n != 0) atomicAdd(&q->processed, n);
}
