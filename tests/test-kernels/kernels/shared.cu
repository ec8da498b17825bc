// A kernel that needs its dynamic shared memory: how much a launch gives it decides whether the
// launch is allowed (above 48 KB only once the kernel's limit is raised).
#include <stdint.h>

// One block: out[i] = in[n - 1 - i] for i < n, through n words of dynamic shared memory. Where
// the launch gives fewer than n words, only the first (dynamic shared memory / 4) words take part
// (m of them: out[i] = in[m - 1 - i] for i < m), so no access leaves the shared memory given.
extern "C" __global__ void reverse_through_shared(const uint32_t* in, uint32_t* out, uint32_t n) {
    extern __shared__ uint32_t s_words[];
    uint32_t bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    const uint32_t m = min(n, bytes / 4u);
    for (uint32_t i = threadIdx.x; i < m; i += blockDim.x) s_words[i] = in[i];
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < m; i += blockDim.x) out[i] = s_words[m - 1u - i];
}
