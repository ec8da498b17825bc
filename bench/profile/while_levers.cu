// Which instantiation makes the WHILE step of examples/cuda_graphs_conditional cheapest. Plain
// CUDA C++, no Rust. Run it on a GPU machine with `bash scripts/run-standalone profile-while-levers`.
//
// The graph is the example's: one WHILE node (handle default 1, applied at every launch) whose
// only body node is cgc_relax_while over 256 unknowns in one block of 256 threads, run for
// STEPS steps (tolerance -1, so the step limit ends it). It is instantiated three ways:
//  plain:  cudaGraphInstantiate with no flags, uploaded by its first launch (what the example did);
//  upload: the same, then cudaGraphUpload before the first launch;
//  priority: cudaGraphInstantiateFlagUseNodePriority, the body kernel at the highest priority;
//  domain: no flags, the body kernel in the remote memory-synchronization domain
//          (cudaLaunchAttributeMemSyncDomain), whose fences need not wait for other work's.
// (A device-launchable exec is not a way: CUDA refuses conditional nodes in one, see
// ARCHITECTURE.md, "What a device-launched graph may hold".)
// An exec's step cost is fixed for its life but differs between execs (bench/results/
// while_placement.txt), so each way gets EXECS execs, made in turn (plain, upload, device,
// plain, ...), and the figures are spreads over execs. Each exec's figure is the median over 5
// timed launches after one warm-up of the launch's CUDA-event time over its steps, in µs per step.
//  1. made and destroyed: each exec destroyed after it was timed;
//  2. made and kept: every exec alive at once (as in the example's process, where the routing
//     graphs stay alive), each timed once.
// Exit status 0 when every loop ran its STEPS steps, 2 on a CUDA error or a wrong step count.
//
// Usage: while_levers [EXECS] (default 12)
#include "../../examples/cuda_graphs_conditional/kernels/conditional.cu"
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_)); exit(2);} } while (0)
#include "while_graph.h"

constexpr uint32_t STEPS = 2000;
constexpr uint32_t N = 256;
constexpr int WAYS = 4;
static const char* const WAY_NAMES[WAYS] = {"plain", "upload", "prio", "domain"};

struct Problem {
  float* x; float* x0; float* b; uint32_t* state;
};

static cudaGraphExec_t make_exec(int way, Problem& p, cudaStream_t stream) {
  WhileGraph loop = make_while_graph();
  uint32_t n = N, max_steps = STEPS;
  float weight = 1.0f / 2.05f, tol = -1.0f;
  void* args[] = {&loop.handle, &p.x, &p.b, &n, &weight, &tol, &max_steps, &p.state};
  cudaGraphNode_t body_node = add_body_kernel(loop.body, (void*)cgc_relax_while, N, args);
  cudaGraph_t graph = loop.graph;
  cudaGraphExec_t exec;
  if (way == 2) {
    int lowest, highest; CK(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
    cudaKernelNodeAttrValue value = {};
    value.priority = highest;
    CK(cudaGraphKernelNodeSetAttribute(body_node, cudaLaunchAttributePriority, &value));
    CK(cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagUseNodePriority));
  } else {
    if (way == 3) {
      cudaKernelNodeAttrValue value = {};
      value.memSyncDomain = cudaLaunchMemSyncDomainRemote;
      CK(cudaGraphKernelNodeSetAttribute(body_node, cudaLaunchAttributeMemSyncDomain, &value));
    }
    CK(cudaGraphInstantiate(&exec, graph, 0));
    if (way == 1) CK(cudaGraphUpload(exec, stream));
  }
  CK(cudaStreamSynchronize(stream));
  CK(cudaGraphDestroy(graph));
  return exec;
}

static double us_per_step(cudaGraphExec_t exec, Problem& p, cudaStream_t stream) {
  cudaEvent_t t0, t1; CK(cudaEventCreate(&t0)); CK(cudaEventCreate(&t1));
  std::vector<double> times;
  for (int run = 0; run < 6; ++run) {
    CK(cudaMemcpyAsync(p.x, p.x0, N * sizeof(float), cudaMemcpyDeviceToDevice, stream));
    CK(cudaMemsetAsync(p.state, 0, 3 * sizeof(uint32_t), stream));
    CK(cudaEventRecord(t0, stream)); CK(cudaGraphLaunch(exec, stream)); CK(cudaEventRecord(t1, stream));
    CK(cudaStreamSynchronize(stream));
    float ms; CK(cudaEventElapsedTime(&ms, t0, t1));
    uint32_t steps; CK(cudaMemcpy(&steps, p.state, 4, cudaMemcpyDeviceToHost));
    if (steps != STEPS) { fprintf(stderr, "a loop ran %u steps, not %u\n", steps, STEPS); exit(2); }
    if (run > 0) times.push_back(ms * 1e3 / STEPS);
  }
  CK(cudaEventDestroy(t1)); CK(cudaEventDestroy(t0));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

static void print_ways(const char* title, const std::vector<double> (&by_way)[WAYS]) {
  printf("%s\n", title);
  for (int way = 0; way < WAYS; ++way) {
    std::vector<double> v = by_way[way];
    printf("   %-6s:", WAY_NAMES[way]);
    for (double t : v) printf(" %.3f", t);
    std::sort(v.begin(), v.end());
    printf("   min %.3f, median %.3f, max %.3f\n", v.front(), v[v.size() / 2], v.back());
  }
}

int main(int argc, char** argv) {
  const int execs = argc > 1 ? atoi(argv[1]) : 12;
  if (execs < 1) { fprintf(stderr, "usage: while_levers [EXECS >= 1]\n"); return 2; }
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  int driver; CK(cudaDriverGetVersion(&driver));
  printf("%s, CUDA driver %d; %u steps of %u unknowns per launch, %d execs per way\n", prop.name, driver, STEPS, N, execs);
  Problem p;
  CK(cudaMalloc(&p.x, N * sizeof(float))); CK(cudaMalloc(&p.x0, N * sizeof(float)));
  CK(cudaMalloc(&p.b, N * sizeof(float))); CK(cudaMalloc(&p.state, 3 * sizeof(uint32_t)));
  std::vector<float> host(N);
  for (uint32_t i = 0; i < N; ++i) host[i] = float((i * 37u) % 17u) / 17.0f - 0.5f;
  CK(cudaMemcpy(p.x0, host.data(), N * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(p.b, host.data(), N * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t stream; CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  std::vector<double> destroyed[WAYS];
  for (int i = 0; i < execs; ++i) {
    for (int way = 0; way < WAYS; ++way) {
      cudaGraphExec_t exec = make_exec(way, p, stream);
      destroyed[way].push_back(us_per_step(exec, p, stream));
      CK(cudaGraphExecDestroy(exec));
    }
  }
  print_ways("1. made, timed and destroyed one at a time (µs per step):", destroyed);

  std::vector<double> kept_times[WAYS];
  std::vector<cudaGraphExec_t> kept;
  for (int i = 0; i < execs; ++i) {
    for (int way = 0; way < WAYS; ++way) {
      kept.push_back(make_exec(way, p, stream));
      kept_times[way].push_back(us_per_step(kept.back(), p, stream));
    }
  }
  print_ways("2. made and kept alive together (µs per step):", kept_times);

  for (cudaGraphExec_t exec : kept) CK(cudaGraphExecDestroy(exec));
  CK(cudaStreamDestroy(stream));
  CK(cudaFree(p.state)); CK(cudaFree(p.b)); CK(cudaFree(p.x0)); CK(cudaFree(p.x));
  printf("PASS: every loop ran %u steps\n", STEPS);
  return 0;
}
