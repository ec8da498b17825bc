// One step of the kernel chain that cuda_graphs launches on a stream and replays as a graph.
//
// Step k maps every element through cc_mul_add with its own (mul, add) constants. Every step of a
// pass reads and writes the output buffer in place (each thread touches only its own element;
// the host copies the input there before a run), so each step depends on the one before it
// and each pass continues from where the previous one left off: the buffer after a run holds
// the chain applied (passes x kernels) times, so a pass that did not run, or ran twice, shows.
// The arithmetic is 32-bit unsigned and wraps, so the CPU reference (src/chain.rs: reference,
// through chapter-common's MulAdd) is bit-identical.
#include <stdint.h>

#include "chapter_common_work.cuh"

extern "C" __global__ void cg_step(const uint32_t* src, uint32_t* dst, uint32_t n, uint32_t mul, uint32_t add) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = cc_mul_add(src[i], mul, add);
    }
}
