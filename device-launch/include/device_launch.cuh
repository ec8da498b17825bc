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

// Limits measured on CUDA 13.0 (H100); equal to the constants of the Rust crates.
#define DL_FIRE_AND_FORGET_LIMIT 120
#define DL_TAIL_LAUNCH_LIMIT 255

// Which helper failed (DeviceLaunchError::operation on the host).
enum DlOperation : int32_t {
    DL_OP_NONE = 0,
    DL_OP_FIRE_AND_FORGET = 1,
    DL_OP_TAIL = 2,
    DL_OP_SIBLING = 3,
    DL_OP_RELAUNCH_SELF = 4,
    DL_OP_KERNEL = 5,
    DL_OP_USER = 6,
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
