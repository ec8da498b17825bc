// Kernels that fail on purpose, for the fault tests: a trap, a long spin (work still in flight
// when its resources are dropped), and an out-of-bounds write for memcheck to catch.
#include <stdint.h>

// Traps (cudaErrorLaunchFailure, sticky: the context is lost) when *flag is nonzero.
extern "C" __global__ void trap_if(const uint32_t* flag) {
    if (*flag != 0) __trap();
}

// Spins for about `cycles` clock cycles, then writes `value` to out[0..n): work that is still
// running when the host drops the buffers, streams and execs it uses.
extern "C" __global__ void spin_then_fill(uint32_t* out, uint32_t n, unsigned long long cycles, uint32_t value) {
    long long start = clock64();
    while ((unsigned long long)(clock64() - start) < cycles) {
    }
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}

// Writes one element `past` elements beyond the end of an n-element buffer: a deliberate
// out-of-bounds write that only compute-sanitizer's memcheck reliably reports.
extern "C" __global__ void write_past_end(uint32_t* data, uint32_t n, uint32_t past) {
    if (blockIdx.x == 0 && threadIdx.x == 0) data[n + past] = 0xdeadbeefu;
}
