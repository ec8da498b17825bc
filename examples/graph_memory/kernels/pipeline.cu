// One stage of graph_memory's pipeline: dst[i] = cc_mul_add(src[i], mul, add) for i < n.
// A pipeline of K stages reads the input, passes K-1 scratch buffers from stage to stage and
// writes the output; the host decides where the scratch memory comes from (preallocated
// buffers, graph memory nodes, or a stream-ordered pool). Integer-only, so the CPU reference
// (src/pipeline.rs: reference, through chapter-common's MulAdd) agrees bit for bit.
#include <stdint.h>

#include "chapter_common_work.cuh"

extern "C" __global__ void gm_stage(const uint32_t* src, uint32_t* dst, uint32_t n, uint32_t mul, uint32_t add) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = cc_mul_add(src[i], mul, add);
    }
}
