// The kernels of one gradient step of a least-squares solve, min |X w - y|^2, with the rows of
// X (and y) partitioned across GPUs. Each GPU computes its rows' share of the gradient
// X^T (X w - y) into g; an all-reduce (NCCL, between these kernels) sums g over the GPUs; then
// every GPU takes the same step on its own copy of w and decides whether to go on.
#include <cuda_runtime.h>
#include <stdint.h>

// Most features (columns of X) the kernels handle: one warp's lanes in solve_update.
#define SOLVE_MAX_FEATURES 32
#define SOLVE_WARPS_PER_BLOCK 8

// g[j] += sum over this GPU's rows i < rows of (x_i . w - y_i) * x_ij, for j < features.
// x is column-major (x[j * rows + i]) so that neighbouring threads read neighbouring rows.
// Launch with SOLVE_WARPS_PER_BLOCK * 32 threads a block; the grid strides over the rows.
extern "C" __global__ void solve_partial_gradient(const double* x, const double* y, const double* w, double* g,
                                                  uint32_t rows, uint32_t features) {
    __shared__ double warp_sums[SOLVE_WARPS_PER_BLOCK][SOLVE_MAX_FEATURES];
    if (features > SOLVE_MAX_FEATURES || blockDim.x != SOLVE_WARPS_PER_BLOCK * 32) {
        return;
    }
    double acc[SOLVE_MAX_FEATURES];
    for (uint32_t j = 0; j < features; ++j) {
        acc[j] = 0.0;
    }
    const uint32_t stride = gridDim.x * blockDim.x;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += stride) {
        double r = -y[i];
        for (uint32_t j = 0; j < features; ++j) {
            r += x[(size_t)j * rows + i] * w[j];
        }
        for (uint32_t j = 0; j < features; ++j) {
            acc[j] += r * x[(size_t)j * rows + i];
        }
    }
    const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (uint32_t j = 0; j < features; ++j) {
        double v = acc[j];
        for (int offset = 16; offset > 0; offset /= 2) {
            v += __shfl_down_sync(0xffffffffu, v, offset);
        }
        if (lane == 0) {
            warp_sums[warp][j] = v;
        }
    }
    __syncthreads();
    if (threadIdx.x < features) {
        double sum = 0.0;
        for (uint32_t k = 0; k < SOLVE_WARPS_PER_BLOCK; ++k) {
            sum += warp_sums[k][threadIdx.x];
        }
        atomicAdd(&g[threadIdx.x], sum);
    }
}

// After the all-reduce every GPU holds the same g: w -= step * g, then g = 0 for the next
// pass, |g|^2 into *gnorm2, one more pass counted, and *keep_going = (|g|^2 > tol2 and fewer
// than max_passes passes). One warp (features <= 32).
extern "C" __global__ void solve_update(double* w, double* g, double* gnorm2, uint32_t* passes, uint32_t* keep_going,
                                        uint32_t features, double step, double tol2, uint32_t max_passes) {
    const uint32_t lane = threadIdx.x;
    if (blockIdx.x != 0 || lane >= 32 || features > SOLVE_MAX_FEATURES) {
        return;
    }
    double gj = lane < features ? g[lane] : 0.0;
    if (lane < features) {
        w[lane] -= step * gj;
        g[lane] = 0.0;
    }
    double s = gj * gj;
    for (int offset = 16; offset > 0; offset /= 2) {
        s += __shfl_down_sync(0xffffffffu, s, offset);
    }
    if (lane == 0) {
        uint32_t done = *passes + 1;
        *passes = done;
        *gnorm2 = s;
        *keep_going = (s > tol2 && done < max_passes) ? 1u : 0u;
    }
}

// The WHILE node's condition: go on while *keep_going. One thread.
extern "C" __global__ void solve_continue(cudaGraphConditionalHandle loop, const uint32_t* keep_going) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        cudaGraphSetConditional(loop, *keep_going);
    }
}
