// The tiny kernel kernel_launches launches thousands of times: one warp, one thread of which
// folds `value` into a single accumulator (an FNV-1a step). Its GPU work is a few instructions,
// so what a sequence of these costs is almost all launch overhead.
//
// The fold is order-dependent, so the final accumulator proves that every launch ran, exactly
// once, in order; the CPU model (src/lib.rs: fold) computes the same in 32-bit integers.
#include <stdint.h>

extern "C" __global__ void kl_tick(uint32_t* acc, uint32_t value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        acc[0] = (acc[0] ^ value) * 0x01000193u;
    }
}
