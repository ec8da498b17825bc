// One stage of the six-stage pipeline: out[i] = three affine passes over in[i], in 32-bit integer
// arithmetic (wrapping), with the stage's constants passed by the host. Small work per element
// on purpose: the pipeline is launch-bound, like the chapter's, so what is measured is how the
// stages get launched. The CPU reference (src/model.rs) composes the same maps exactly.
#include <stdint.h>

extern "C" __global__ void cgp_stage(const uint32_t* in, uint32_t* out, uint32_t n, uint32_t a0, uint32_t b0,
                                     uint32_t a1, uint32_t b1, uint32_t a2, uint32_t b2) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        uint32_t x = in[i];
        x = x * a0 + b0;
        x = x * a1 + b1;
        x = x * a2 + b2;
        out[i] = x;
    }
}
