// Kernels that set the condition of a conditional graph node (IF, IF/ELSE, WHILE, SWITCH).
// Launch them with one thread, as a node of the graph that owns `handle` (or of a body
// inside it): cudaGraphSetConditional from a kernel outside that graph is undefined.
#include <cuda_runtime.h>
#include <stdint.h>

// Sets the condition to *value (for IF: nonzero runs the body; for SWITCH: the body index).
extern "C" __global__ void set_condition_from(cudaGraphConditionalHandle handle, const uint32_t* value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) cudaGraphSetConditional(handle, *value);
}

// One WHILE step: *counter += 1, then the loop continues while *counter < limit.
extern "C" __global__ void while_step(cudaGraphConditionalHandle handle, uint32_t* counter, uint32_t limit) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        uint32_t next = *counter + 1;
        *counter = next;
        cudaGraphSetConditional(handle, next < limit ? 1u : 0u);
    }
}
