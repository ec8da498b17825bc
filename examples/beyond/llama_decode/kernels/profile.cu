// Stand-ins for the profile (src/profile.rs): kernels that do nothing, launched with the step's
// geometry, so that a WHILE loop of them costs what loop control and launches cost without
// the step's work.
#include <cuda_runtime.h>
#include <stdint.h>

// Does nothing.
extern "C" __global__ void ll_idle() {}

// Counts one iteration in *counter and ends the WHILE loop of `handle` at `steps` (thread 0 of
// block 0 alone touches memory).
extern "C" __global__ void ll_count_while(cudaGraphConditionalHandle handle, uint32_t* counter, uint32_t steps) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const uint32_t done = *counter + 1u;
        *counter = done;
        if (done >= steps) {
            cudaGraphSetConditional(handle, 0);
        }
    }
}
