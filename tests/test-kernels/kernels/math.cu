// Floating-point kernels.
#include <stdint.h>

#include "cuda_graph.cuh"  // cuda_graph::slice<T>, shipped by cuda-build

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

// out[i] = value for every i < out.size(), grid-stride: the kernel bounds its writes by the
// slice it was given, so no launch geometry or argument makes it write out of bounds.
extern "C" __global__ void fill_slice(cuda_graph::slice<uint32_t> out, uint32_t value) {
    for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < out.size(); i += gridDim.x * blockDim.x) {
        out[i] = value;
    }
}

// *out = sum of in (one thread; for the check that a slice<const float> takes a DeviceSlice<f32>).
extern "C" __global__ void sum_slice(cuda_graph::slice<const float> in, float* out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        float sum = 0.0f;
        for (uint64_t i = 0; i < in.size(); ++i) sum += in[i];
        *out = sum;
    }
}
