// A kernel that drives a WHILE node from data: it calls the device runtime
// (cudaGraphSetConditional), so it is loaded from a device-linked fatbin.
#include <cstdint>

// One step of a loop that doubles *value until it reaches *limit: the loop goes on while the
// doubled value is still below the limit read from memory.
extern "C" __global__ void mod_double_until(cudaGraphConditionalHandle handle, uint32_t* value, const uint32_t* limit) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        uint32_t next = *value * 2;
        *value = next;
        cudaGraphSetConditional(handle, next < *limit ? 1u : 0u);
    }
}
