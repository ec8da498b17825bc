// A kernel that talks with the host through mapped (zero-copy) host memory while it runs.
#include <stdint.h>
#include "cuda_graph.cuh"  // cuda_graph::slice<T>, shipped by cuda-build

// Thread 0 of block 0, with flags.size() >= 3 (else it does nothing): sets flags[0] = 1 (the
// kernel is running), waits up to `timeout_cycles` clock cycles for the host to make flags[1]
// non-zero, then sets flags[2] = 2 if it saw that, 3 if it timed out. The accesses are
// volatile so that each one goes to memory: the host's store reaches a kernel in flight.
extern "C" __global__ void mapped_handshake(cuda_graph::slice<uint32_t> flags, uint64_t timeout_cycles) {
    if (blockIdx.x != 0 || threadIdx.x != 0 || flags.size() < 3) {
        return;
    }
    volatile uint32_t* shared = flags.data();
    shared[0] = 1u;
    __threadfence_system();
    const long long start = clock64();
    uint32_t seen = 0u;
    while ((seen = shared[1]) == 0u && (uint64_t)(clock64() - start) < timeout_cycles) {
    }
    shared[2] = seen != 0u ? 2u : 3u;
}
