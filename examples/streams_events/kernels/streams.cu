// The one kernel every part of streams_events launches: out[i] = cc_lcg_rounds(in[i], rounds, salt)
// for i < n, one element per thread. `rounds` sets how long each thread works (a dependent
// chain of integer steps), so the same kernel is the compute stage of the copy/compute
// pipeline, a block of the low-priority flood, the urgent job, and a chunk of stealable work.
//
// Integer-only, so the CPU reference (src/work.rs: mix, chapter-common's lcg_rounds) agrees
// bit for bit. The result
// depends on the input value only, which lets the host check hundreds of millions of outputs
// against a small table of precomputed values (inputs are drawn from a small set).
#include <stdint.h>

#include "chapter_common_work.cuh"

extern "C" __global__ void se_work(const uint32_t* in, uint32_t* out, uint32_t n, uint32_t rounds, uint32_t salt) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = cc_lcg_rounds(in[i], rounds, salt);
    }
}
