// Queues and graphs together: a persistent scheduler that drains an atomic work queue by
// launching one device graph per item, relaunching itself until the queue is empty.
//
// Items are ids 0..N. Item i has a kind kinds[i] < kinds_count and a slice of `width`
// elements: ps_item writes output[i * width + j] = ps_work(input[i * width + j], kind) (wrapping
// integer arithmetic; the CPU model in src/model.rs matches it bit for bit), adds 1 to
// hits[i] and reports the item done to the queue.
//
// Which item a launch of a kind's graph processes: every kind k has a list
// lists[k * capacity ..] and two counters, tail[k] (entries written) and seq[k] (entries taken).
// Whoever launches a graph of kind k first appends the item to list k; each run of a kind-k
// graph takes the next entry (atomicAdd on seq[k]). A graph's shape and arguments are fixed
// when it is instantiated, so the item cannot be an argument; the list hands it over.
//
// ps_scheduler (one block of `batch` <= 120 threads, run inside a graph): claims up to `batch`
// items with one atomicAdd (dl_queue_pop_block), appends them to their kinds' lists, then
// fire-and-forgets one graph per item: graph (kind, replica), where the replica is the item's
// rank among this run's items of that kind. Every kind has `batch` replicas (separate execs
// of the same graph), because CUDA refuses to launch an exec again while its previous launch
// is pending: a run launches every exec at most once, and the next run starts only after all
// of them finished (DL_RELAUNCH_SELF is a tail launch, which waits for the run's
// fire-and-forget work). At most `batch` <= 120 fire-and-forget launches per run (CUDA's
// limit per launching kernel) and one tail launch (the relaunch), while items remain.
#include <device_launch.cuh>
#include <stdint.h>

// Shared with src/lib.rs.
#define PS_MAX_KINDS 16u
#define PS_MAX_BATCH 120u  // = DL_FIRE_AND_FORGET_LIMIT

// The counters array (src/lib.rs: `counters`).
#define PS_SEQ 0u                          // [k]: list entries of kind k taken by item graphs
#define PS_TAIL (PS_MAX_KINDS)             // [k]: list entries of kind k written
#define PS_LAUNCHED (2u * PS_MAX_KINDS)    // item graphs fire-and-forgotten (accepted)
#define PS_RUNS (PS_LAUNCHED + 1u)         // scheduler runs that claimed items
#define PS_COUNTERS (PS_LAUNCHED + 2u)     // length of the array

// The constants of kind k (src/model.rs: `Kind::of`).
static __device__ __forceinline__ uint32_t ps_mul(uint32_t k) { return (0x9e3779b1u ^ (k * 0x85ebca6bu)) | 1u; }
static __device__ __forceinline__ uint32_t ps_add(uint32_t k) { return k * 0xc2b2ae35u + 0x27d4eb2fu; }

// An item's work on one element (src/model.rs: `work`).
static __device__ __forceinline__ uint32_t ps_work(uint32_t v, uint32_t kind, uint32_t rounds) {
    const uint32_t mul = ps_mul(kind), add = ps_add(kind);
    for (uint32_t r = 0; r < rounds; ++r) {
        v = v * mul + add;
        v ^= v >> 16;
    }
    return v;
}

// The body of every item graph of kind `kind` (and of the host loop's graphs): one block of
// `width` threads processes the next item of its kind's list.
extern "C" __global__ void ps_item(const uint32_t* input, uint32_t* output, uint32_t width, uint32_t rounds,
                                   uint32_t kind, const uint32_t* lists, uint32_t capacity, uint32_t* counters,
                                   uint32_t* hits, DlQueue* queue) {
    __shared__ uint32_t item;
    if (threadIdx.x == 0) {
        const uint32_t entry = atomicAdd(&counters[PS_SEQ + kind], 1u);
        item = lists[(size_t)kind * capacity + entry];
    }
    __syncthreads();
    const uint32_t j = threadIdx.x;
    if (j < width) {
        const size_t at = (size_t)item * width + j;
        output[at] = ps_work(input[at], kind, rounds);
    }
    if (threadIdx.x == 0) {
        atomicAdd(&hits[item], 1u);
        dl_queue_done(queue, 1u);
    }
}

// The persistent scheduler: one run claims and dispatches up to blockDim.x items, then
// relaunches itself while the queue holds more. Launch one block of `batch` threads (at most
// PS_MAX_BATCH) inside a graph (device_launch::Launcher). graphs[k * replicas + r] is replica r
// of kind k; replicas >= blockDim.x. Threads below `launch_threads` make the launches (1: one
// thread launches them all, in order).
extern "C" __global__ void ps_scheduler(DlQueue* queue, const uint32_t* kinds, uint32_t* lists, uint32_t capacity,
                                        uint32_t* counters, const cudaGraphExec_t* graphs, uint32_t replicas,
                                        uint32_t launch_threads, DlErrorSlot* slot) {
    __shared__ uint32_t used[PS_MAX_KINDS];
    __shared__ uint32_t graph_of[PS_MAX_BATCH];
    __shared__ bool has[PS_MAX_BATCH];
    const uint32_t tid = threadIdx.x;
    if (tid < PS_MAX_KINDS) used[tid] = 0;
    __syncthreads();

    // One atomicAdd claims a batch: thread tid gets the item at head + tid, if any.
    uint32_t item = 0;
    bool got = false;
    if (!dl_queue_pop_block(queue, &item, &got)) return;  // drained (the same on every thread)
    if (tid < PS_MAX_BATCH) {
        has[tid] = got;
        if (got) {
            const uint32_t kind = kinds[item];
            const uint32_t replica = atomicAdd(&used[kind], 1u);  // < blockDim.x <= replicas
            const uint32_t entry = atomicAdd(&counters[PS_TAIL + kind], 1u);
            lists[(size_t)kind * capacity + entry] = item;
            graph_of[tid] = kind * replicas + replica;
        }
    }
    // Every list entry of this run is written, and visible, before any graph of it runs.
    __threadfence();
    __syncthreads();

    if (tid < launch_threads) {
        uint32_t launched = 0;
        for (uint32_t i = tid; i < blockDim.x && i < PS_MAX_BATCH; i += launch_threads) {
            if (has[i] && DL_FIRE_AND_FORGET(graphs[graph_of[i]], slot)) ++launched;
        }
        if (launched != 0) atomicAdd(&counters[PS_LAUNCHED], launched);
    }
    if (tid == 0) {
        counters[PS_RUNS] += 1u;
        // The only consumer: head is now past this run's claim. Relaunch while items remain;
        // the relaunch runs after every graph launched above has finished.
        if (*(volatile uint32_t*)&queue->head < *(volatile uint32_t*)&queue->count) DL_RELAUNCH_SELF(slot);
    }
}
