// Queue kernels: a consumer that drains a DlQueue per thread, per warp or per block, and a
// persistent scheduler that fire-and-forgets one graph per item and relaunches itself.
#include <device_launch.cuh>

// Drains `queue`, adding 1 to hits[item] for every item it claims (items must be < the
// length of `hits`), then reports them done. mode 0: dl_queue_pop (one atomic per item);
// 1: dl_queue_pop_warp (blockDim.x must be a multiple of 32); 2: dl_queue_pop_block.
extern "C" __global__ void dl_queue_consume(DlQueue* queue, uint32_t* hits, uint32_t mode) {
    uint32_t item = 0;
    bool got = false;
    uint32_t done = 0;
    if (mode == 0) {
        while (dl_queue_pop(queue, &item)) {
            atomicAdd(&hits[item], 1u);
            ++done;
        }
    } else if (mode == 1) {
        while (dl_queue_pop_warp(queue, &item, &got)) {
            if (got) {
                atomicAdd(&hits[item], 1u);
                ++done;
            }
        }
    } else {
        while (dl_queue_pop_block(queue, &item, &got)) {
            if (got) {
                atomicAdd(&hits[item], 1u);
                ++done;
            }
        }
    }
    dl_queue_done(queue, done);
}

// A persistent scheduler, one step per run of its graph (launch it with one thread, inside a
// graph): claims one item, fire-and-forgets graphs[item % n], counts the step, and tail-
// launches itself; stops once the queue is drained. The relaunch waits for the step's
// fire-and-forget work, so the same graph is never pending twice.
extern "C" __global__ void dl_queue_scheduler(DlQueue* queue, const cudaGraphExec_t* graphs, uint32_t n,
                                              uint32_t* steps, DlErrorSlot* slot) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    uint32_t item = 0;
    if (!dl_queue_pop(queue, &item)) return;
    atomicAdd(steps, 1u);
    if (DL_FIRE_AND_FORGET(graphs[item % n], slot)) dl_queue_done(queue, 1);
    DL_RELAUNCH_SELF(slot);
}
