// Host code that takes a kernel's address, as a .cu file with its own C++ launcher would.
// Such an object carries host-reference information, which nvlink (CUDA 13) uses to drop every
// kernel no nvcc-compiled host code references, unless cuda-build links with
// -Xnvlink -ignore-host-info: the kernels the Rust tests launch (declared in src/lib.rs, seen
// by nothing nvcc compiled) would then be missing at run time (cudaErrorSymbolNotFound). Its
// presence here makes every GPU test of this crate's kernels a check of that flag.
#include <stdint.h>

extern "C" __global__ void host_referenced_kernel(uint32_t* out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *out = 1u;
}

extern "C" const void* test_kernels_host_referenced_kernel() {
    return reinterpret_cast<const void*>(&host_referenced_kernel);
}
