// What the shape of the sweep costs a step of examples/cuda_graphs_conditional's WHILE loop.
// Plain CUDA C++, no Rust. Run it on a GPU machine with `bash scripts/run-standalone
// profile-while-sweep`.
//
// Bodies of the same WHILE graph (bench/profile/while_graph.h), 256 unknowns, one block:
//  before: the sweep as the example had it until 2026-11-26 (kept here, below): values
//          exchanged through shared memory behind a barrier, then a max reduction of the
//          changes through shared memory behind a second barrier, every step;
//  now:    the example's cgc_relax_while (kernels/conditional.cu): neighbours loaded from
//          global memory with the rest, one __syncthreads_or that orders reads before writes
//          and decides, the max reduction only in the last sweep;
//  block2x, block4x: the same sweep with 2 or 4 values a thread (128 or 64 threads);
//  warp8:  the same sweep by one warp, 8 values a lane, no barrier at all;
//  floor:  one thread that counts the step and sets the handle only to stop: what a step
//          costs with no work in it; floor-256 the same in a block of 256 threads (thread 0
//          works); floor-bar that block passing one __syncthreads_or first.
// An exec's step cost is fixed for its life but differs between execs (bench/results/
// while_placement.txt), so every body gets EXECS execs, made in turn (before, now, block2x,
// ..., before, ...), each timed (median of 5 launches after a warm-up, µs per step over 2000 steps,
// CUDA events) and destroyed before the next is made. Then the sweeps solve two problems from
// the same start (stopped by the tolerance; stopped by the step limit) and are compared with a
// CPU model, bit for bit: steps, residual and every value.
// Exit status 0 when every loop ran its steps and every solution matched, 2 otherwise.
//
// Usage: while_sweep [EXECS] (default 12)
#include "../../examples/cuda_graphs_conditional/kernels/conditional.cu"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_)); exit(2);} } while (0)
#include "while_graph.h"
#include "relax_model.h"

constexpr uint32_t TIMED_STEPS = 2000;
constexpr uint32_t N = 256;
struct Body {
  const char* name;
  const void* kernel;
  unsigned threads;
  bool sweeps;  // solves the problem (checked against the CPU model)
};

// The example's sweep until 2026-11-26, for comparison.
__global__ void sweep_before(cudaGraphConditionalHandle handle, float* x, const float* b, uint32_t n, float w,
                             float tol, uint32_t max_steps, uint32_t* state) {
  __shared__ float s_x[CGC_MAX_N + 2];
  __shared__ uint32_t s_max[32];
  const uint32_t i = threadIdx.x;
  float b_i = 0.0f;
  uint32_t steps_before = 0;
  if (i < n) { s_x[i + 1] = x[i]; b_i = b[i]; }
  if (i == 0) { s_x[0] = 0.0f; s_x[n + 1] = 0.0f; steps_before = state[0]; }
  __syncthreads();
  uint32_t change_bits = 0;
  if (i < n) {
    const float next = __fmul_rn(__fadd_rn(__fadd_rn(b_i, s_x[i]), s_x[i + 2]), w);
    change_bits = __float_as_uint(fabsf(__fsub_rn(next, s_x[i + 1])));
    x[i] = next;
  }
  change_bits = cgc_warp_max_bits(change_bits);
  if ((i & 31u) == 0) s_max[i >> 5] = change_bits;
  __syncthreads();
  if (i < 32) {
    const float residual = __uint_as_float(cgc_warp_max_bits(i < (blockDim.x >> 5) ? s_max[i] : 0u));
    if (i == 0) {
      const uint32_t steps = steps_before + 1u;
      const uint32_t go_on = (residual > tol && steps < max_steps) ? 1u : 0u;
      state[0] = steps; state[1] = __float_as_uint(residual); state[2] = go_on;
      if (go_on == 0) cudaGraphSetConditional(handle, 0);
    }
  }
}

// Counts the step in thread 0; stops the loop at max_steps. With BARRIER, every thread of the
// block passes one __syncthreads_or first (what the sweep's only barrier costs on its own).
template <bool BARRIER>
__global__ void floor_body(cudaGraphConditionalHandle handle, float*, const float*, uint32_t, float, float,
                           uint32_t max_steps, uint32_t* state) {
  if (BARRIER && __syncthreads_or(threadIdx.x == 7) == 0) return;
  if (threadIdx.x != 0) return;
  const uint32_t steps = state[0] + 1u;
  state[0] = steps;
  if (steps >= max_steps) cudaGraphSetConditional(handle, 0);
}

// The sweep done by one warp, K values a lane (value j * 32 + lane), no barrier: every load
// (both neighbours from global memory) issued at once, __any_sync decides, and the max
// reduction runs only in the last sweep. n <= 32 * K. Kept apart from sweep_block below on
// purpose: sweep_block<8> in a block of 32 threads with __any_sync for its barrier (values
// j * blockDim.x + t, the block size known only at run time) took 0.6 us a step more than
// "now" on one H100, where this kernel takes 0.35 us more on the two H100s it ran on: the
// generated code differs, so this kernel stays the figure of a one-warp sweep.
template <int K>
__global__ void sweep_warp(cudaGraphConditionalHandle handle, float* x, const float* b, uint32_t n, float w,
                           float tol, uint32_t max_steps, uint32_t* state) {
  const uint32_t lane = threadIdx.x;
  float left[K], old[K], right[K], b_v[K];
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const uint32_t i = j * 32 + lane;
    left[j] = (i < n && i > 0) ? x[i - 1] : 0.0f;
    old[j] = i < n ? x[i] : 0.0f;
    right[j] = i + 1 < n ? x[i + 1] : 0.0f;
    b_v[j] = i < n ? b[i] : 0.0f;
  }
  const uint32_t steps = state[0] + 1u;
  float next[K];
  uint32_t change_bits = 0;
  bool above_tol = false;
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const uint32_t i = j * 32 + lane;
    next[j] = __fmul_rn(__fadd_rn(__fadd_rn(b_v[j], left[j]), right[j]), w);
    const float change = i < n ? fabsf(__fsub_rn(next[j], old[j])) : 0.0f;
    above_tol |= change > tol;
    change_bits = max(change_bits, __float_as_uint(change));
  }
  const uint32_t go_on = (__any_sync(CGC_FULL_MASK, above_tol) && steps < max_steps) ? 1u : 0u;
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const uint32_t i = j * 32 + lane;
    if (i < n) x[i] = next[j];
  }
  if (go_on == 0) change_bits = cgc_warp_max_bits(change_bits);
  if (lane == 0) {
    state[0] = steps;
    state[2] = go_on;
    if (go_on == 0) {
      state[1] = change_bits;
      cudaGraphSetConditional(handle, 0);
    }
  }
}

// The "now" sweep with K values a thread (value j * blockDim.x + t): fewer warps meet at its
// one barrier. n <= K * blockDim.x.
template <int K>
__global__ void sweep_block(cudaGraphConditionalHandle handle, float* x, const float* b, uint32_t n, float w,
                            float tol, uint32_t max_steps, uint32_t* state) {
  __shared__ uint32_t s_max[32];
  const uint32_t t = threadIdx.x;
  float left[K], old[K], right[K], b_v[K];
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const uint32_t i = j * blockDim.x + t;
    left[j] = (i < n && i > 0) ? x[i - 1] : 0.0f;
    old[j] = i < n ? x[i] : 0.0f;
    right[j] = i + 1 < n ? x[i + 1] : 0.0f;
    b_v[j] = i < n ? b[i] : 0.0f;
  }
  const uint32_t steps = state[0] + 1u;
  float next[K];
  uint32_t change_bits = 0;
  bool above_tol = false;
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const uint32_t i = j * blockDim.x + t;
    next[j] = __fmul_rn(__fadd_rn(__fadd_rn(b_v[j], left[j]), right[j]), w);
    const float change = i < n ? fabsf(__fsub_rn(next[j], old[j])) : 0.0f;
    above_tol |= change > tol;
    change_bits = max(change_bits, __float_as_uint(change));
  }
  const uint32_t go_on = (__syncthreads_or(above_tol) && steps < max_steps) ? 1u : 0u;
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const uint32_t i = j * blockDim.x + t;
    if (i < n) x[i] = next[j];
  }
  if (t == 0) { state[0] = steps; state[2] = go_on; }
  if (go_on == 0) {
    const uint32_t warp_max = cgc_warp_max_bits(change_bits);
    if ((t & 31u) == 0) s_max[t >> 5] = warp_max;
    __syncthreads();
    if (t < 32) {
      const uint32_t residual_bits = cgc_warp_max_bits(t < (blockDim.x >> 5) ? s_max[t] : 0u);
      if (t == 0) { state[1] = residual_bits; cudaGraphSetConditional(handle, 0); }
    }
  }
}

static const Body BODIES[] = {
    {"before", (const void*)sweep_before, N, true},
    {"now", (const void*)cgc_relax_while, N, true},
    {"block2x", (const void*)sweep_block<2>, N / 2, true},
    {"block4x", (const void*)sweep_block<4>, N / 4, true},
    {"warp8", (const void*)sweep_warp<N / 32>, 32, true},
    {"floor", (const void*)floor_body<false>, 1, false},
    {"floor-256", (const void*)floor_body<false>, N, false},
    {"floor-bar", (const void*)floor_body<true>, N, false},
};
constexpr int BODY_COUNT = sizeof BODIES / sizeof BODIES[0];

struct Device {
  float* x; float* b; uint32_t* state; cudaStream_t stream;
};

static cudaGraphExec_t make_exec(int body, Device& d, uint32_t& n, float& w, float& tol, uint32_t& max_steps) {
  WhileGraph loop = make_while_graph();
  void* args[] = {&loop.handle, &d.x, &d.b, &n, &w, &tol, &max_steps, &d.state};
  add_body_kernel(loop.body, BODIES[body].kernel, BODIES[body].threads, args);
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, loop.graph, 0));
  CK(cudaGraphUpload(exec, d.stream));
  CK(cudaStreamSynchronize(d.stream));
  CK(cudaGraphDestroy(loop.graph));
  return exec;
}

// Starts from p.x0 with a zeroed state, launches once, returns the solution.
static Solution launch(cudaGraphExec_t exec, Device& d, const Problem& p, float* ms) {
  cudaEvent_t t0, t1; CK(cudaEventCreate(&t0)); CK(cudaEventCreate(&t1));
  CK(cudaMemcpyAsync(d.x, p.x0.data(), N * sizeof(float), cudaMemcpyHostToDevice, d.stream));
  CK(cudaMemsetAsync(d.state, 0, 3 * sizeof(uint32_t), d.stream));
  CK(cudaEventRecord(t0, d.stream)); CK(cudaGraphLaunch(exec, d.stream)); CK(cudaEventRecord(t1, d.stream));
  CK(cudaStreamSynchronize(d.stream));
  if (ms) CK(cudaEventElapsedTime(ms, t0, t1));
  CK(cudaEventDestroy(t1)); CK(cudaEventDestroy(t0));
  Solution s; s.x.resize(N); uint32_t state[3];
  CK(cudaMemcpy(s.x.data(), d.x, N * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(state, d.state, sizeof state, cudaMemcpyDeviceToHost));
  s.steps = state[0]; s.residual_bits = state[1];
  return s;
}

static double us_per_step(int body, Device& d, const Problem& p) {
  uint32_t n = N, max_steps = p.max_steps; float w = p.w, tol = p.tol;
  cudaGraphExec_t exec = make_exec(body, d, n, w, tol, max_steps);
  std::vector<double> times;
  for (int run = 0; run < 6; ++run) {
    float ms;
    const Solution s = launch(exec, d, p, &ms);
    if (s.steps != p.max_steps) { fprintf(stderr, "%s ran %u steps, not %u\n", BODIES[body].name, s.steps, p.max_steps); exit(2); }
    if (run > 0) times.push_back(ms * 1e3 / p.max_steps);
  }
  CK(cudaGraphExecDestroy(exec));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

static bool check(const char* label, int body, Device& d, const Problem& p, const Solution& want) {
  uint32_t n = N, max_steps = p.max_steps; float w = p.w, tol = p.tol;
  cudaGraphExec_t exec = make_exec(body, d, n, w, tol, max_steps);
  const Solution got = launch(exec, d, p, nullptr);
  CK(cudaGraphExecDestroy(exec));
  const bool same = got == want;
  printf("   %-9s %-22s %u steps (model %u), residual bits %08x (model %08x): %s\n", BODIES[body].name, label,
         got.steps, want.steps, got.residual_bits, want.residual_bits, same ? "same bits" : "DIFFERENT");
  return same;
}

int main(int argc, char** argv) {
  const int execs = argc > 1 ? atoi(argv[1]) : 12;
  if (execs < 1) { fprintf(stderr, "usage: while_sweep [EXECS >= 1]\n"); return 2; }
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  int driver; CK(cudaDriverGetVersion(&driver));
  printf("%s, CUDA driver %d; %u steps of %u unknowns per launch, %d execs per body\n", prop.name, driver,
         TIMED_STEPS, N, execs);
  const Problem timed = timed_problem(N, TIMED_STEPS);
  Device d;
  CK(cudaMalloc(&d.x, N * sizeof(float))); CK(cudaMalloc(&d.b, N * sizeof(float)));
  CK(cudaMalloc(&d.state, 3 * sizeof(uint32_t)));
  CK(cudaMemcpy(d.b, timed.b.data(), N * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));

  std::vector<double> by_body[BODY_COUNT];
  for (int e = 0; e < execs; ++e)
    for (int body = 0; body < BODY_COUNT; ++body) by_body[body].push_back(us_per_step(body, d, timed));
  printf("µs per step, one exec at a time:\n");
  for (int body = 0; body < BODY_COUNT; ++body) {
    std::vector<double> v = by_body[body];
    printf("   %-9s:", BODIES[body].name);
    for (double t : v) printf(" %.3f", t);
    std::sort(v.begin(), v.end());
    printf("   min %.3f, median %.3f, max %.3f\n", v.front(), v[v.size() / 2], v.back());
  }

  Problem converging = timed;
  converging.tol = 1e-4f; converging.max_steps = 100000;
  const Solution converged = solve_cpu(converging);
  Problem limited = converging;
  limited.max_steps = converged.steps / 2;
  const Solution stopped = solve_cpu(limited);
  printf("bit-for-bit against the CPU model:\n");
  bool ok = true;
  for (int body = 0; body < BODY_COUNT; ++body) {
    if (!BODIES[body].sweeps) continue;
    ok &= check("tolerance 1e-4", body, d, converging, converged);
    ok &= check("step limit (half)", body, d, limited, stopped);
  }

  CK(cudaStreamDestroy(d.stream));
  CK(cudaFree(d.state)); CK(cudaFree(d.b)); CK(cudaFree(d.x));
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 2;
}
