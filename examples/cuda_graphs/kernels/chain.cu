// The steps of the kernel chain that cuda_graphs launches on a stream and replays as a graph:
// the port's integer step (cg_step) and, below, the chapter listing's three float maps.
//
// Port: step k maps every element through cc_mul_add with its own (mul, add) constants. Every step of a
// pass reads and writes the output buffer in place (each thread touches only its own element;
// the host copies the input there before a run), so each step depends on the one before it
// and each pass continues from where the previous one left off: the buffer after a run holds
// the chain applied (passes x kernels) times, so a pass that did not run, or ran twice, shows.
// The port's arithmetic is 32-bit unsigned and wraps, so the CPU reference (src/chain.rs:
// reference, through chapter-common's MulAdd) is bit-identical. The float maps work the same
// way, in place, one element per thread.
#include <stdint.h>

#include "chapter_common_work.cuh"

extern "C" __global__ void cg_step(const uint32_t* src, uint32_t* dst, uint32_t n, uint32_t mul, uint32_t add) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = cc_mul_add(src[i], mul, add);
    }
}

// The chapter listing's three kernels (kernelA, kernelB, kernelC of cuda_graphs.cu), each a float
// map of every element in place, with its constants as parameters (the listing's: 1.1 and 0.1,
// 1, 0.1). Each is written as nvcc compiles the listing's expression (default --fmad=true, no
// fast math): A and B one fused multiply-add, C a rounded product then sinf. The CPU side is
// src/chain.rs: MapStep::apply, with the same roundings; only sinf differs from the CPU's sine.

// A: x * mul + add.
extern "C" __global__ void cg_map_affine(float* data, uint32_t n, float mul, float add) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        data[i] = __fmaf_rn(data[i], mul, add);
    }
}

// B: sqrt(x * x + add).
extern "C" __global__ void cg_map_hypot(float* data, uint32_t n, float add) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float x = data[i];
        data[i] = __fsqrt_rn(__fmaf_rn(x, x, add));
    }
}

// C: sin(x * scale).
extern "C" __global__ void cg_map_sine(float* data, uint32_t n, float scale) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        data[i] = sinf(__fmul_rn(data[i], scale));
    }
}
