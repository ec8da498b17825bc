#include <cuda_graph.cuh>  // cuda_graph::slice<T>: a pointer and its length, shipped by cuda-build

extern "C" __global__ void saxpy(float a, cuda_graph::slice<const float> x,
                                 cuda_graph::slice<float> y) {
    uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (i < y.size() && i < x.size()) y[i] = a * x[i] + y[i];
}
