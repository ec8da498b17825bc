// The kernels both sides of the benchmark launch: the Rust path (declared with
// cuda_graph::kernels! in src/kernels.rs) and the C++ twin (twin.cu). Each is as small as a
// kernel gets, so that what is measured is the launch, not the work; each leaves a count the
// host checks, so that a launch that did not run cannot pass for a fast one.
#include <device_launch.cuh>

#include "bench_kernels.cuh"
#include "cuda_graph_pdl.cuh"

// Does nothing: the stream-launch benchmark.
extern "C" __global__ void bench_empty() {}

// One node of a chain: *counter += value (one thread).
extern "C" __global__ void bench_chain_step(uint32_t* counter, uint32_t value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *counter += value;
}

// The chains of programmatic dependent launch, one thread each: without PDL, an
// empty kernel and `*counter += 1`; with it, the same after letting the next kernel launch
// and waiting for the one before (cuda_graph_pdl.cuh), which a chain joined by programmatic
// edges needs. Triggering first lets the next kernel launch as early as possible; the wait
// still covers this kernel's whole run.
extern "C" __global__ void bench_rmw(uint32_t* counter) { *counter += 1u; }
extern "C" __global__ void bench_pdl_empty() {
    cuda_graph::pdl::launch_dependents();
    cuda_graph::pdl::wait_upstream();
}
extern "C" __global__ void bench_pdl_rmw(uint32_t* counter) {
    cuda_graph::pdl::launch_dependents();
    cuda_graph::pdl::wait_upstream();
    *counter += 1u;
}

// One step of the host-driven loop: *counter += 1; *keep_going = (*counter < limit). The host
// reads keep_going back after every step and decides whether to launch the next.
extern "C" __global__ void bench_host_step(uint32_t* counter, uint32_t limit, uint32_t* keep_going) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        uint32_t next = *counter + 1;
        *counter = next;
        *keep_going = next < limit ? 1u : 0u;
    }
}

// One step of the WHILE-node loop: *counter += 1, and the loop goes on while *counter < limit
// (cudaGraphSetConditional on the WHILE node's handle; the device decides, no host round trip).
extern "C" __global__ void bench_while_step(cudaGraphConditionalHandle handle, uint32_t* counter, uint32_t limit) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        uint32_t next = *counter + 1;
        *counter = next;
        cudaGraphSetConditional(handle, next < limit ? 1u : 0u);
    }
}

// atomicAdd(counter, 1): the child of the CDP benchmark (launched from the host or from
// bench_cdp_parent), and each node of the width graphs of host vs device launch.
extern "C" __global__ void bench_count(uint32_t* counter) {
    if (threadIdx.x == 0) atomicAdd(counter, 1u);
}

// One thread launches `children` children into the block's implicit (NULL) stream, where they
// run one after another, as host launches into one stream do. A launch the device runtime
// refuses (past cudaLimitDevRuntimePendingLaunchCount, say) stops the loop and leaves its
// cudaError_t in *error (the first one; 0 = none), which the host checks after each sample;
// the count is then short too.
extern "C" __global__ void bench_cdp_parent(uint32_t* counter, uint32_t children, int* error) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (uint32_t i = 0; i < children; ++i) {
        bench_count<<<1, 1>>>(counter);
        const cudaError_t status = cudaGetLastError();
        if (status != cudaSuccess) {
            atomicCAS(error, 0, static_cast<int>(status));
            return;
        }
    }
}

// The Rust path's device-launch kernels, written as a user of the device-launch crate writes
// them: every device-side launch goes through device_launch.cuh's helpers, which record the
// first refusal into the DlErrorSlot (device_launch::ErrorSlot) that the host reads after each
// sample. They run inside graphs (device_launch::Launcher): a kernel that launches graphs from
// the device cannot start on a plain stream (801). The C++ twin has its own, plain-CUDA
// versions of both (twin.cu).

// (f) The scheduler: one step per run of its own graph (one thread, inside a device-launch
// graph, *steps = 0 before the host's one launch). Launches `work` fire-and-forget
// (BENCH_MODE_FIRE_AND_FORGET) or as a tail launch (BENCH_MODE_TAIL), counts the step, and
// tail-relaunches its own graph until `iters` steps ran. Each step waits for the previous
// step's work: the self-relaunch is a tail launch, which runs after the launching graph's
// fire-and-forget work; a tail-launched work graph runs before the relaunch queued after it.
// Stops at the first refused launch (recorded in the slot; the step count is then short).
extern "C" __global__ void bench_dl_scheduler(cudaGraphExec_t work, uint32_t mode, uint32_t iters, uint32_t* steps,
                                              DlErrorSlot* slot) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const uint32_t step = *steps;
    if (step >= iters) return;
    const bool accepted = mode == BENCH_MODE_TAIL ? DL_TAIL_LAUNCH(work, slot) : DL_FIRE_AND_FORGET(work, slot);
    *steps = step + 1u;
    if (accepted && step + 1u < iters) DL_RELAUNCH_SELF(slot);
}

// (g) One step of the self-relaunching loop: *counter += 1, and while *counter < limit the
// kernel tail-relaunches its own graph (one thread, inside a device-launch graph).
extern "C" __global__ void bench_dl_relaunch_step(uint32_t* counter, uint32_t limit, DlErrorSlot* slot) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const uint32_t next = *counter + 1u;
    *counter = next;
    if (next < limit) DL_RELAUNCH_SELF(slot);
}
