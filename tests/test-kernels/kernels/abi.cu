// Kernels for the parameter (ABI) check: one with mixed sizes and alignments, one with none.
#include <stdint.h>

// Parameters at offsets 0 (8 bytes), 8 (4), 16 (8), 24 (1), 28 (4): padding after `a` and
// after `c`, so a wrong Rust declaration shows up as a wrong size or offset.
// Writes p[0] = a, p[1] = b, p[2] = c, p[3] = d (as floats) from thread 0 of block 0, so a
// test can see every value arrived intact.
extern "C" __global__ void abi_probe(float* p, uint32_t a, double b, uint8_t c, int32_t d) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        p[0] = (float)a;
        p[1] = (float)b;
        p[2] = (float)c;
        p[3] = (float)d;
    }
}

// Does nothing: for launch overhead, empty-ish graph nodes and zero-parameter declarations.
extern "C" __global__ void noop() {}
