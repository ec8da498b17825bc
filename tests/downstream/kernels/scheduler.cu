// A user's own kernels: work for a device-launched graph, and a scheduler kernel that
// fire-and-forgets that graph from the device with every failure recorded.
#include <device_launch.cuh>
#include <stdint.h>

extern "C" __global__ void downstream_add(uint32_t* data, uint32_t n, uint32_t value) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += value;
}

extern "C" __global__ void downstream_scheduler(cudaGraphExec_t work, uint32_t* launched, DlErrorSlot* slot) {
    if (threadIdx.x == 0 && blockIdx.x == 0 && DL_FIRE_AND_FORGET(work, slot)) atomicAdd(launched, 1u);
}
