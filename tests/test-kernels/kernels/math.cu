// Floating-point kernels.
#include <stdint.h>

// y[i] = a * x[i] + y[i], for i < n.
extern "C" __global__ void saxpy(float a, const float* x, float* y, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
