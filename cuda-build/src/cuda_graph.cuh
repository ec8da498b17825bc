// cuda_graph.cuh: shipped by the `cuda-build` crate (on the include path of every kernel build
// it runs). `cuda_graph::slice<T>` is a pointer and its length as one kernel parameter: the C++
// side of `cuda_graph::DeviceSlice<T>`, which passes a buffer's (or sub-range's) address and
// element count together, so a kernel can bound its accesses by construction instead of
// trusting a separate `n`.
//
//     #include "cuda_graph.cuh"
//     extern "C" __global__ void fill(cuda_graph::slice<uint32_t> out, uint32_t value) {
//         for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < out.size(); i += gridDim.x * blockDim.x)
//             out[i] = value;
//     }
//
// `slice<const T>` is a read-only view; a Rust `DeviceSlice<T>` fits both.
#pragma once

#include <stdint.h>

namespace cuda_graph {

template <class T>
struct slice {
    // The first element (laid out first: 8 bytes).
    T* ptr;
    // The number of elements (8 bytes): the kernel parameter is 16 bytes, 8-aligned.
    uint64_t len;

    __host__ __device__ uint64_t size() const { return len; }
    __host__ __device__ T* data() const { return ptr; }
    // Element `i`; an index past the end traps (the launch fails with
    // cudaErrorLaunchFailure) instead of touching memory the kernel was not given.
    __device__ T& operator[](uint64_t i) const {
        if (i >= len) {
            __trap();
        }
        return ptr[i];
    }
};

}  // namespace cuda_graph
