// Graphs launched from the device: a self-relaunching scheduler that launches a work graph
// once per iteration (fire-and-forget, tail or sibling), the work graph's node kernel, and
// launchers that exceed the device-launch limits on purpose.
//
// Every device-side launch goes through device_launch.cuh's helpers, so a refused launch lands
// in the DlErrorSlot that the host reads. Launchers must run inside a graph
// (device_launch::Launcher): on a plain stream CUDA 13.0 refuses to start them (801).
#include <device_launch.cuh>
#include <stdint.h>

// Scheduler modes (src/sweep.rs: Mode).
#define DGL_RELAUNCH_ONLY 0u
#define DGL_FIRE_AND_FORGET 1u
#define DGL_TAIL 2u
#define DGL_SIBLING 3u
#define DGL_FIRE_AND_FORGET_BATCH 4u

// How long a scheduler waits for a launched graph's nodes before giving up (ns): normal waits
// take microseconds (far longer under compute-sanitizer); a graph that cannot start while its
// launcher runs shows as an error.
#define DGL_WAIT_TIMEOUT_NS 2000000000ull

static __device__ __forceinline__ bool dgl_first_thread() {
    return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0 && blockIdx.x == 0 && blockIdx.y == 0 &&
           blockIdx.z == 0;
}

static __device__ __forceinline__ unsigned long long dgl_now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// One node of a work graph: counters[index] += amount, then *done += 1 (after a fence, so a
// scheduler that sees `done` also sees the counter).
extern "C" __global__ void dgl_work(uint32_t* counters, uint32_t index, uint32_t amount, uint32_t* done) {
    if (!dgl_first_thread()) return;
    atomicAdd(&counters[index], amount);
    __threadfence();
    atomicAdd(done, 1u);
}

// Spins until *counter >= target; records cudaErrorTimeout (DL_OP_USER) after 2 s.
static __device__ bool dgl_wait_for(const uint32_t* counter, uint32_t target, DlErrorSlot* slot) {
    const unsigned long long start = dgl_now_ns();
    while (*(volatile const uint32_t*)counter < target) {
        if (dgl_now_ns() - start > DGL_WAIT_TIMEOUT_NS) {
            DL_CHECK(slot, cudaErrorTimeout);
            return false;
        }
    }
    __threadfence();
    return true;
}

// One iteration per run of its own graph (launch it with one thread, inside a graph, with
// *steps = 0): launches graphs[step % copies] in `mode`, counts the step, and tail-launches its
// own graph again (cudaGetCurrentGraphExec) until `iters` steps ran. Each iteration waits for
// the previous one's work, like a host loop that synchronizes after every launch:
//   fire-and-forget: the self-relaunch is a tail launch, which waits for the launching graph's
//                    fire-and-forget work;
//   tail:            the work graph is tail-launched before the self-relaunch, and tail
//                    launches run one after another, in order;
//   sibling:         a sibling does not belong to the launching graph, so nothing waits for it:
//                    the scheduler spins until the work graph's `width` nodes have counted
//                    themselves in *done. A sibling stays pending until the top-level launch
//                    that started this chain completes, so a chain sibling-launches each of
//                    its copies once (the host caps sibling runs at the number of copies).
//   fire-and-forget batch: one run makes up to `copies` iterations, fire-and-forgetting
//                    graphs[0], graphs[1], ... (distinct copies: none is launched twice in a
//                    run) and spinning on *done after each, then relaunches itself: one
//                    scheduler step per `copies` iterations instead of one per iteration.
// Stops at the first refused launch (recorded in the slot).
extern "C" __global__ void dgl_scheduler(const cudaGraphExec_t* graphs, uint32_t copies, uint32_t mode,
                                         uint32_t iters, uint32_t width, uint32_t* steps, uint32_t* done,
                                         DlErrorSlot* slot) {
    if (!dgl_first_thread()) return;
    const uint32_t step = *steps;
    if (step >= iters) return;
    if (mode == DGL_FIRE_AND_FORGET_BATCH) {
        uint32_t done_steps = step;
        bool accepted = true;
        for (uint32_t j = 0; j < copies && done_steps < iters; ++j) {
            accepted = DL_FIRE_AND_FORGET(graphs[j], slot) && dgl_wait_for(done, width * (done_steps + 1u), slot);
            if (!accepted) break;
            ++done_steps;
        }
        *steps = done_steps;
        if (accepted && done_steps < iters) DL_RELAUNCH_SELF(slot);
        return;
    }
    const cudaGraphExec_t work = graphs[step % copies];
    bool ok = true;
    if (mode == DGL_FIRE_AND_FORGET) {
        ok = DL_FIRE_AND_FORGET(work, slot);
    } else if (mode == DGL_TAIL) {
        ok = DL_TAIL_LAUNCH(work, slot);
    } else if (mode == DGL_SIBLING) {
        ok = DL_SIBLING_LAUNCH(work, slot) && dgl_wait_for(done, width * (step + 1u), slot);
    }
    *steps = step + 1u;
    if (ok && step + 1u < iters) DL_RELAUNCH_SELF(slot);
}

// Exceeds a limit on purpose: launches graphs[0..n) fire-and-forget (mode 1) or as tail
// launches (mode 2) without stopping at a refusal; *accepted = how many were accepted.
extern "C" __global__ void dgl_launch_many(const cudaGraphExec_t* graphs, uint32_t n, uint32_t mode,
                                           uint32_t* accepted, DlErrorSlot* slot) {
    if (!dgl_first_thread()) return;
    uint32_t count = 0;
    for (uint32_t i = 0; i < n; ++i) {
        count += mode == DGL_TAIL ? DL_TAIL_LAUNCH(graphs[i], slot) : DL_FIRE_AND_FORGET(graphs[i], slot);
    }
    *accepted = count;
}

// A node that stays pending until released: spins until *release != 0, then counters[index] += 1.
extern "C" __global__ void dgl_wait_for_release(const uint32_t* release, uint32_t* counters, uint32_t index) {
    if (!dgl_first_thread()) return;
    while (*(volatile const uint32_t*)release == 0) {
        __nanosleep(1000);
    }
    atomicAdd(&counters[index], 1u);
}

// Fire-and-forgets `graph` twice in a row: the second launch comes while the first is still
// pending (its node waits for *release) and must be refused. Then releases it.
extern "C" __global__ void dgl_launch_twice(cudaGraphExec_t graph, uint32_t* release, DlErrorSlot* slot) {
    if (!dgl_first_thread()) return;
    DL_FIRE_AND_FORGET(graph, slot);
    DL_FIRE_AND_FORGET(graph, slot);
    __threadfence();
    atomicExch(release, 1u);
}
