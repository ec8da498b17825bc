// Floating-point kernels.
#include <stdint.h>

// y[i] = a * x[i] + y[i], for i < n.
extern "C" __global__ void saxpy(float a, const float* x, float* y, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

// p[i] *= 2, for i < n. Takes `double*`: cuda-graph's tests check that a declaration with
// `DevicePtr<f32>` (same size, half the element width) is refused before it can run.
extern "C" __global__ void scale_f64(double* p, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= 2.0;
}
