// The WHILE node's condition: go on while the last step left a value above 1; count rounds.
#include <cstdint>

extern "C" __global__ void keep_going(cudaGraphConditionalHandle handle, uint32_t* active, uint32_t* rounds) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *rounds += 1;
        cudaGraphSetConditional(handle, *active != 0 ? 1u : 0u);
        *active = 0;
    }
}
