// Conditional graph nodes whose conditions are set on the device.
//
// Every condition here is set by a kernel of the graph that owns the handle, upstream of the
// conditional node, by one thread, with cudaGraphSetConditional(handle, value): the call CUDA's
// device runtime declares (cuda_device_runtime_api.h). Nothing sets a condition from the host.
//
// Two families of kernels:
// - routing (IF, IF/ELSE, SWITCH, nested IF): cgc_set_field sets a condition from a bit field
//   of the current input; the bodies run cgc_mark, which records in trace[cursor] and in
//   counters[] which body ran; cgc_advance moves to the next input once every node is done.
// - relaxation (WHILE): one damped Jacobi sweep of a small tridiagonal system per step, in one
//   block; the block decides whether to go on, thread 0 counts the step and, in the last
//   sweep, stores the residual (the largest change of any value). A WHILE body (or a host
//   round trip) may hold several sweeps in a row; those after the last one do nothing.
//   cgc_relax_while sets the WHILE node's condition with the decision; cgc_relax_host writes
//   it where a host loop looks: back into the state, which the host copies back, or into
//   mapped host memory, which the host reads in place. The arithmetic
//   is the CPU model's (src/relax.rs), operation for operation (explicit _rn intrinsics: no FMA
//   contraction) and the reduction is a max, which does not depend on order, so results match
//   bit for bit.
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_graph_pdl.cuh"

#define CGC_FULL_MASK 0xffffffffu
#define CGC_MAX_N 1024

// ---------------------------------------------------------------------------------------------
// Routing

// Sets `handle` to (inputs[*cursor] >> shift) & mask. Launch with one thread.
extern "C" __global__ void cgc_set_field(cudaGraphConditionalHandle handle, const uint32_t* inputs,
                                         const uint32_t* cursor, uint32_t shift, uint32_t mask) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const uint32_t value = (inputs[*cursor] >> shift) & mask;
        cudaGraphSetConditional(handle, value);
    }
}

// Records that body `body` (0..31) ran for the current input: sets its bit in trace[*cursor]
// and counts it in counters[body]. Bodies of different conditional nodes may run at the same
// time, hence the atomics.
extern "C" __global__ void cgc_mark(uint32_t* trace, uint32_t* counters, const uint32_t* cursor, uint32_t body) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        atomicOr(&trace[*cursor], 1u << body);
        atomicAdd(&counters[body], 1u);
    }
}

// Moves to the next input: the last node of the routing graph.
extern "C" __global__ void cgc_advance(uint32_t* cursor) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *cursor += 1u;
    }
}

// ---------------------------------------------------------------------------------------------
// Relaxation (WHILE)

// The largest of the 32 lanes' `bits`. The bits are those of non-negative floats, whose order
// as unsigned integers is their order as floats, so this is their max, and the same value
// whatever the order. One warp-wide reduction instruction on sm_80 and later (a step is a few
// microseconds, and five shuffle rounds are a visible part of it); shuffles before.
static __device__ __forceinline__ uint32_t cgc_warp_max_bits(uint32_t bits) {
#if __CUDA_ARCH__ >= 800
    return __reduce_max_sync(CGC_FULL_MASK, bits);
#else
    for (int offset = 16; offset > 0; offset >>= 1) {
        bits = max(bits, __shfl_xor_sync(CGC_FULL_MASK, bits, offset));
    }
    return bits;
#endif
}

// What cgc_relax_sweep returns in thread 0.
#define CGC_STOPPED 0u  // swept, and the loop is done: this was its last sweep
#define CGC_GO_ON 1u    // swept, and the loop goes on
#define CGC_SKIPPED 2u  // did not sweep: an earlier sweep of the same round stopped the loop

// One sweep x[i] <- ((b[i] + x[i-1]) + x[i+1]) * w with x[-1] = x[n] = 0, in place. state[0]
// counts steps, state[2] holds whether to go on (residual > tol and steps < max_steps) and,
// written by the last sweep only, state[1] the residual's bits (the largest change of any
// value in that sweep). One block of blockDim.x >= n threads, a multiple of 32; n <= CGC_MAX_N.
// Returns, in thread 0, CGC_STOPPED, CGC_GO_ON or CGC_SKIPPED (0 in every other thread).
//
// A round (one run of the WHILE body, or one host round trip) holds one or more sweep kernels
// in a row. A sweep after the one that stopped the loop does nothing: it finds the step count
// above 0 (the state is zeroed before every loop) and state[2] cleared. So a loop runs exactly
// the sweeps of a loop with one sweep a round, whatever the round's length. The sweeps of a
// round may be joined by programmatic edges (or stream launches with programmatic
// serialization): every sweep waits for the one before it before it reads anything, and lets
// the next one launch once it has written everything.
//
// A step of the WHILE loop is a few microseconds, so the sweep keeps its critical path to one
// global round trip and one barrier: every thread loads its value, both neighbours, its
// right-hand side and the state at once (their latencies overlap), and one
// __syncthreads_or both orders every read before any write (the update is in place) and
// answers "did any value change by more than tol", which is "residual > tol" (the residual is
// the largest change). Only the last sweep, where the block agrees to stop, pays for the max
// reduction that gives the residual itself.
static __device__ uint32_t cgc_relax_sweep(float* x, const float* b, uint32_t n, float w, float tol,
                                           uint32_t max_steps, uint32_t* state) {
    __shared__ uint32_t s_max[32];
    cuda_graph::pdl::wait_upstream();
    const uint32_t i = threadIdx.x;
    const bool mine = i < n;
    const float left = (mine && i > 0) ? x[i - 1] : 0.0f;
    const float old = mine ? x[i] : 0.0f;
    const float right = (i + 1 < n) ? x[i + 1] : 0.0f;
    const float b_i = mine ? b[i] : 0.0f;
    const uint32_t steps_before = state[0];
    const uint32_t went_on = state[2];
    if (steps_before != 0 && went_on == 0) {  // the same in every thread; exiting lets the next launch
        return i == 0 ? CGC_SKIPPED : 0u;
    }
    const uint32_t steps = steps_before + 1u;

    // |next - old| >= 0, never NaN: with the diagonal above 2 (the options' rule) the sweep
    // contracts, so every value stays finite.
    const float next = __fmul_rn(__fadd_rn(__fadd_rn(b_i, left), right), w);
    const float change = mine ? fabsf(__fsub_rn(next, old)) : 0.0f;
    const bool above_tol = __syncthreads_or(change > tol) != 0;
    const uint32_t go_on = (above_tol && steps < max_steps) ? CGC_GO_ON : CGC_STOPPED;  // the same in every thread
    if (mine) {
        x[i] = next;
    }
    if (i == 0) {
        state[0] = steps;
        state[2] = go_on;
    }
    if (go_on == CGC_STOPPED) {
        const uint32_t warp_max = cgc_warp_max_bits(__float_as_uint(change));
        if ((i & 31u) == 0) {
            s_max[i >> 5] = warp_max;
        }
        __syncthreads();
        if (i < 32) {
            const uint32_t residual_bits = cgc_warp_max_bits(i < (blockDim.x >> 5) ? s_max[i] : 0u);
            if (i == 0) {
                state[1] = residual_bits;
            }
        }
    }
    cuda_graph::pdl::launch_dependents();
    return i == 0 ? go_on : 0u;
}

// A WHILE body's sweep; thread 0 stops the loop after its last one. The handle's
// default, 1, is applied at every launch (cudaGraphCondAssignDefault) and holds between body
// runs, so only the last sweep needs to set it: on the same exec that makes a step 0.08 us
// shorter than setting it every step (bench/profile/while_placement.cu, section 4).
extern "C" __global__ void cgc_relax_while(cudaGraphConditionalHandle handle, float* x, const float* b, uint32_t n,
                                           float w, float tol, uint32_t max_steps, uint32_t* state) {
    if (cgc_relax_sweep(x, b, n, w, tol, max_steps, state) == CGC_STOPPED && threadIdx.x == 0) {
        cudaGraphSetConditional(handle, 0);
    }
}

// A host-driven loop's sweep; thread 0 writes the decision to *flag (a skipped sweep leaves it:
// the last sweep has cleared it). The copy loop passes &state[2] (device memory, copied back with
// the state); the mapped-flag loop a word of mapped (zero-copy) host memory, which the host
// reads in place once the stream is done, with no copy per round.
extern "C" __global__ void cgc_relax_host(float* x, const float* b, uint32_t n, float w, float tol,
                                          uint32_t max_steps, uint32_t* state, uint32_t* flag) {
    const uint32_t done = cgc_relax_sweep(x, b, n, w, tol, max_steps, state);
    if (threadIdx.x == 0 && done != CGC_SKIPPED) {
        *flag = done;
    }
}
