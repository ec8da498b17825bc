// Launcher kernels: each launches graphs from the device through device_launch.cuh, so every
// refused launch lands in the DlErrorSlot the host reads. Run them inside a graph
// (device_launch::Launcher): launched on a plain stream they do not run at all (CUDA 13.0: 801).
#include <device_launch.cuh>

static __device__ __forceinline__ bool dl_first_thread() {
    return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0 && blockIdx.x == 0 && blockIdx.y == 0 &&
           blockIdx.z == 0;
}

// Work for launched graphs: counters[index] += 1, once per launch.
extern "C" __global__ void dl_mark(uint32_t* counters, uint32_t index) {
    if (dl_first_thread()) atomicAdd(&counters[index], 1u);
}

// Work for launched graphs that records order: appends (value, *flag) to `log`, whose
// log[0] counts entries and whose entry k is log[1 + 2k], log[2 + 2k] (at most `capacity`).
extern "C" __global__ void dl_append(uint32_t* log, uint32_t capacity, uint32_t value, const uint32_t* flag) {
    if (!dl_first_thread()) return;
    uint32_t k = atomicAdd(&log[0], 1u);
    if (k < capacity) {
        log[1 + 2 * k] = value;
        log[2 + 2 * k] = *(volatile const uint32_t*)flag;
    }
}

// Work that stays pending until released: spins until *release != 0, then counters[index] += 1.
extern "C" __global__ void dl_wait_for_release(const uint32_t* release, uint32_t* counters, uint32_t index) {
    if (!dl_first_thread()) return;
    while (*(volatile const uint32_t*)release == 0) {
        __nanosleep(1000);
    }
    atomicAdd(&counters[index], 1u);
}

// Fire-and-forgets graphs[0..n) in order from one thread and stops at the first refused
// launch; then writes how many were accepted to *accepted.
extern "C" __global__ void dl_fire_and_forget_all(const cudaGraphExec_t* graphs, uint32_t n, uint32_t* accepted,
                                                  DlErrorSlot* slot) {
    if (!dl_first_thread()) return;
    uint32_t i = 0;
    while (i < n && DL_FIRE_AND_FORGET(graphs[i], slot)) ++i;
    *accepted = i;
}

// Tail-launches graphs[0..n) in order (they run after this graph completes, in this order)
// and stops at the first refused launch; then writes how many were accepted to *accepted,
// which the tail-launched graphs therefore see.
extern "C" __global__ void dl_tail_launch_all(const cudaGraphExec_t* graphs, uint32_t n, uint32_t* accepted,
                                              DlErrorSlot* slot) {
    if (!dl_first_thread()) return;
    uint32_t i = 0;
    while (i < n && DL_TAIL_LAUNCH(graphs[i], slot)) ++i;
    *accepted = i;
}

// Sibling-launches graphs[0..n) and stops at the first refused launch; *accepted as above.
extern "C" __global__ void dl_sibling_launch_all(const cudaGraphExec_t* graphs, uint32_t n, uint32_t* accepted,
                                                 DlErrorSlot* slot) {
    if (!dl_first_thread()) return;
    uint32_t i = 0;
    while (i < n && DL_SIBLING_LAUNCH(graphs[i], slot)) ++i;
    *accepted = i;
}

// Fire-and-forgets one graph.
extern "C" __global__ void dl_fire_and_forget_one(cudaGraphExec_t graph, DlErrorSlot* slot) {
    if (dl_first_thread()) DL_FIRE_AND_FORGET(graph, slot);
}

// Sibling-launches one graph.
extern "C" __global__ void dl_sibling_launch_one(cudaGraphExec_t graph, DlErrorSlot* slot) {
    if (dl_first_thread()) DL_SIBLING_LAUNCH(graph, slot);
}

// Fire-and-forgets `graph` twice in a row (the second while the first is pending: refused),
// then sets *release = 1 so that a graph waiting on it (dl_wait_for_release) finishes.
extern "C" __global__ void dl_fire_and_forget_twice(cudaGraphExec_t graph, uint32_t* release, DlErrorSlot* slot) {
    if (!dl_first_thread()) return;
    DL_FIRE_AND_FORGET(graph, slot);
    DL_FIRE_AND_FORGET(graph, slot);
    __threadfence();
    atomicExch(release, 1u);
}

// Exceeds the fire-and-forget limit on purpose: launches graphs[0..min(n, LIMIT + 1)) without
// stopping at a refusal; *accepted = how many were accepted (LIMIT when n > LIMIT).
extern "C" __global__ void dl_fire_and_forget_past_limit(const cudaGraphExec_t* graphs, uint32_t n,
                                                         uint32_t* accepted, DlErrorSlot* slot) {
    if (!dl_first_thread()) return;
    uint32_t count = 0;
    for (uint32_t i = 0; i < n && i < DL_FIRE_AND_FORGET_LIMIT + 1; ++i) count += DL_FIRE_AND_FORGET(graphs[i], slot);
    *accepted = count;
}

// Exceeds the tail-launch limit on purpose, like dl_fire_and_forget_past_limit.
extern "C" __global__ void dl_tail_launch_past_limit(const cudaGraphExec_t* graphs, uint32_t n, uint32_t* accepted,
                                                     DlErrorSlot* slot) {
    if (!dl_first_thread()) return;
    uint32_t count = 0;
    for (uint32_t i = 0; i < n && i < DL_TAIL_LAUNCH_LIMIT + 1; ++i) count += DL_TAIL_LAUNCH(graphs[i], slot);
    *accepted = count;
}

// A device-side loop: each run counts one step in *steps and, while fewer than `limit`
// steps ran, tail-launches its own graph again (DL_RELAUNCH_SELF). From steps = 0 it runs
// exactly `limit` times (at least once).
extern "C" __global__ void dl_relaunch_until(uint32_t* steps, uint32_t limit, DlErrorSlot* slot) {
    if (!dl_first_thread()) return;
    uint32_t done = atomicAdd(steps, 1u) + 1;
    if (done < limit) DL_RELAUNCH_SELF(slot);
}

// A device-side loop that runs until the host cancels it: each run counts one step in *steps
// and relaunches its own graph unless *cancel is set (DL_RELAUNCH_SELF_UNLESS_CANCELLED).
extern "C" __global__ void dl_relaunch_until_cancelled(uint32_t* steps, const uint32_t* cancel, DlErrorSlot* slot) {
    if (!dl_first_thread()) return;
    atomicAdd(steps, 1u);
    DL_RELAUNCH_SELF_UNLESS_CANCELLED(cancel, slot);
}
