// CDP2 kernel launches through DL_LAUNCH_KERNEL: a parent that fire-and-forgets one child per
// counter, each child spinning a while (so launches stay pending) before counting itself.
#include <device_launch.cuh>
#include <stdint.h>

extern "C" __global__ void dl_cdp_child(uint32_t* counters, uint32_t index, unsigned long long spin_cycles) {
    long long start = clock64();
    while ((unsigned long long)(clock64() - start) < spin_cycles) {
    }
    atomicAdd(&counters[index], 1u);
}

// One thread launches `children` children (child i counts into counters[i]); `accepted`
// counts the launches the device runtime took. Failures land in `slot`.
extern "C" __global__ void dl_cdp_parent(uint32_t* counters, uint32_t children, unsigned long long spin_cycles,
                                         uint32_t* accepted, DlErrorSlot* slot) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (uint32_t i = 0; i < children; ++i) {
        if (DL_LAUNCH_KERNEL(slot, dl_cdp_child, 1, 1, 0, cudaStreamFireAndForget, counters, i, spin_cycles)) {
            atomicAdd(accepted, 1u);
        }
    }
}
