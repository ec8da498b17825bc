// How much of a WHILE step is the body: the WHILE loop of examples/cuda_graphs_conditional
// timed with three bodies, against that example's host-driven loop. Plain CUDA C++, no Rust.
// Run it on a GPU machine with `bash scripts/run-standalone profile-while-body`.
//
// Bodies: a kernel that only counts the step and sets the condition; the example's sweep
// (cgc_relax_while, one block of 256 threads, two barriers); the same sweep done by one warp
// (8 values per lane, neighbours by shuffle, no barrier), which must leave the same bits. The
// host loop is the example's copy loop: launch cgc_relax_host (its flag pointed at state[2]),
// copy the state to pinned memory, synchronize, read the flag. Every loop runs 2000 steps of a 256-unknown system (tolerance
// -1, so the step limit ends it); each figure is the median over 5 timed launches after one
// warm-up, in µs per step. Exit status 0 when every loop ran its steps and both sweeps agree,
// 1 when not, 2 on a CUDA error.
//
// Usage: while_body [ROUNDS]   (default 3)
#include "../../examples/cuda_graphs_conditional/kernels/conditional.cu"
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_)); exit(2);} } while (0)
#include "while_graph.h"

__global__ void trivial_while(cudaGraphConditionalHandle h, uint32_t* state, uint32_t max_steps) {
  if (threadIdx.x == 0) { uint32_t s = state[0] + 1; state[0] = s; cudaGraphSetConditional(h, s < max_steps); }
}

template <int K>
__global__ void relax_warp(cudaGraphConditionalHandle h, float* x, const float* b, uint32_t n, float w, float tol,
                           uint32_t max_steps, uint32_t* state) {
  const uint32_t lane = threadIdx.x;
  float xv[K], bv[K];
  uint32_t steps_before = lane == 0 ? state[0] : 0;
#pragma unroll
  for (int j = 0; j < K; ++j) { uint32_t i = lane * K + j; xv[j] = i < n ? x[i] : 0.f; bv[j] = i < n ? b[i] : 0.f; }
  float left_edge = __shfl_up_sync(0xffffffffu, xv[K - 1], 1); if (lane == 0) left_edge = 0.f;
  float right_edge = __shfl_down_sync(0xffffffffu, xv[0], 1); if (lane == 31) right_edge = 0.f;
  float change = 0.f;
#pragma unroll
  for (int j = 0; j < K; ++j) {
    uint32_t i = lane * K + j;
    float left = j == 0 ? left_edge : xv[j - 1];
    float right = j == K - 1 ? right_edge : xv[j + 1];
    if (i < n) {
      float next = __fmul_rn(__fadd_rn(__fadd_rn(bv[j], left), right), w);
      change = fmaxf(change, fabsf(__fsub_rn(next, xv[j])));
      x[i] = next;
    }
  }
  for (int o = 16; o > 0; o >>= 1) change = fmaxf(change, __shfl_xor_sync(0xffffffffu, change, o));
  if (lane == 0) {
    uint32_t steps = steps_before + 1; uint32_t go = (change > tol && steps < max_steps) ? 1u : 0u;
    state[0] = steps; state[1] = __float_as_uint(change); state[2] = go;
    cudaGraphSetConditional(h, go);
  }
}

struct Ctx { float* x; float* b; uint32_t n; float w; float tol; uint32_t max_steps; uint32_t* state; };

static double run_while(int variant, Ctx& c, cudaStream_t s, const std::vector<float>& x0, int reps, std::vector<float>* out) {
  WhileGraph w = make_while_graph();
  void* a_triv[] = {&w.handle, &c.state, &c.max_steps};
  void* a_relax[] = {&w.handle, &c.x, &c.b, &c.n, &c.w, &c.tol, &c.max_steps, &c.state};
  if (variant == 0) add_body_kernel(w.body, (void*)trivial_while, 32, a_triv);
  else if (variant == 1) add_body_kernel(w.body, (void*)cgc_relax_while, (c.n + 31) / 32 * 32, a_relax);
  else add_body_kernel(w.body, (void*)relax_warp<8>, 32, a_relax);
  cudaGraph_t g = w.graph;
  cudaGraphExec_t e; CK(cudaGraphInstantiate(&e, g, 0)); CK(cudaGraphUpload(e, s));
  cudaEvent_t t0, t1; CK(cudaEventCreate(&t0)); CK(cudaEventCreate(&t1));
  std::vector<double> v;
  for (int r = 0; r < reps; ++r) {
    CK(cudaMemcpyAsync(c.x, x0.data(), x0.size() * 4, cudaMemcpyHostToDevice, s));
    CK(cudaMemsetAsync(c.state, 0, 12, s));
    CK(cudaEventRecord(t0, s)); CK(cudaGraphLaunch(e, s)); CK(cudaEventRecord(t1, s)); CK(cudaStreamSynchronize(s));
    float ms; CK(cudaEventElapsedTime(&ms, t0, t1)); uint32_t st[3]; CK(cudaMemcpy(st, c.state, 12, cudaMemcpyDeviceToHost));
    if (st[0] != c.max_steps) { fprintf(stderr, "variant %d ran %u steps\n", variant, st[0]); exit(1); }
    if (r) v.push_back(ms * 1e3 / st[0]);
  }
  if (out) { out->resize(c.n); CK(cudaMemcpy(out->data(), c.x, c.n * 4, cudaMemcpyDeviceToHost)); }
  std::sort(v.begin(), v.end());
  CK(cudaEventDestroy(t1)); CK(cudaEventDestroy(t0));
  CK(cudaGraphExecDestroy(e)); CK(cudaGraphDestroy(g));
  return v[v.size() / 2];
}

static double run_host(Ctx& c, cudaStream_t s, const std::vector<float>& x0, int reps, int threads) {
  uint32_t* pinned; CK(cudaMallocHost(&pinned, 12));
  cudaEvent_t t0, t1; CK(cudaEventCreate(&t0)); CK(cudaEventCreate(&t1));
  std::vector<double> v;
  for (int r = 0; r < reps; ++r) {
    CK(cudaMemcpyAsync(c.x, x0.data(), x0.size() * 4, cudaMemcpyHostToDevice, s));
    CK(cudaMemsetAsync(c.state, 0, 12, s)); CK(cudaStreamSynchronize(s));
    CK(cudaEventRecord(t0, s));
    uint32_t steps = 0;
    for (uint32_t guard = 0; guard < c.max_steps; ++guard) {
      // The flag argument is state[2], as in the example's copy loop.
      cgc_relax_host<<<1, threads, 0, s>>>(c.x, c.b, c.n, c.w, c.tol, c.max_steps, c.state, c.state + 2);
      CK(cudaGetLastError());
      CK(cudaMemcpyAsync(pinned, c.state, 12, cudaMemcpyDeviceToHost, s)); CK(cudaStreamSynchronize(s));
      steps = pinned[0];
      if (pinned[2] == 0) break;
    }
    CK(cudaEventRecord(t1, s)); CK(cudaStreamSynchronize(s));
    float ms; CK(cudaEventElapsedTime(&ms, t0, t1));
    if (steps != c.max_steps) { fprintf(stderr, "host loop ran %u steps\n", steps); exit(1); }
    if (r) v.push_back(ms * 1e3 / steps);
  }
  std::sort(v.begin(), v.end());
  CK(cudaEventDestroy(t1)); CK(cudaEventDestroy(t0)); CK(cudaFreeHost(pinned));
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 3;
  if (rounds < 1) { fprintf(stderr, "usage: while_body [ROUNDS >= 1]\n"); return 2; }
  Ctx c; c.n = 256; c.w = 1.0f / 2.05f; c.tol = -1.0f; c.max_steps = 2000;
  std::vector<float> x0(c.n), b(c.n); srand(7);
  for (uint32_t i = 0; i < c.n; ++i) { x0[i] = rand() / (float)RAND_MAX * 2 - 1; b[i] = rand() / (float)RAND_MAX * 2 - 1; }
  CK(cudaMalloc(&c.x, c.n * 4)); CK(cudaMalloc(&c.b, c.n * 4)); CK(cudaMalloc(&c.state, 12));
  CK(cudaMemcpy(c.b, b.data(), c.n * 4, cudaMemcpyHostToDevice));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  bool ok = true;
  for (int round = 0; round < rounds; ++round) {
    std::vector<float> r1, r2;
    double t0 = run_while(0, c, s, x0, 6, nullptr);
    double t1 = run_while(1, c, s, x0, 6, &r1);
    double t2 = run_while(2, c, s, x0, 6, &r2);
    double th = run_host(c, s, x0, 6, 256);
    bool same = r1 == r2;
    ok &= same;
    printf("round %d: WHILE us/step: trivial %.3f, sweep 256 threads %.3f, sweep one warp %.3f (same bits: %s); host loop %.3f\n",
           round, t0, t1, t2, same ? "yes" : "NO", th);
  }
  CK(cudaStreamDestroy(s)); CK(cudaFree(c.state)); CK(cudaFree(c.b)); CK(cudaFree(c.x));
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
