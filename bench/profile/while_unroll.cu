// What unrolling the WHILE body saves a step of examples/cuda_graphs_conditional's loop.
// Plain CUDA C++, no Rust. Run it on a GPU machine with `bash scripts/run-standalone
// profile-while-unroll`.
//
// A WHILE iteration costs 3.9 to 4.5 us on the H100 with an empty body (bench/results/
// while_sweep.txt), depending on the exec and the board; the sweep adds 0.1 to 0.15. A body
// of K sweep nodes pays the iteration once for K sweeps. Each sweep is the example's
// (cgc_relax_while and cgc_relax_host, kernels/conditional.cu): a sweep after the one that
// stopped the loop in the same round does nothing, so the loop runs exactly the sweeps of one
// sweep a round (checked bit for bit against a CPU model below).
//
// Ways, with K = 1, 2, 4 and 8 sweeps a round:
//  while:      one WHILE node, its body K sweep nodes joined by plain edges;
//  pdl:        the same, joined by programmatic edges (each sweep waits for the one before it
//              before it reads anything and triggers after its last write); K >= 2;
//  pdl-first:  the same, each sweep triggering first thing; K >= 2;
//  mapped:     the example's cheapest host loop with K sweeps a round trip: launch K sweeps on a
//              stream, wait for it, read the decision the last sweep that ran wrote into mapped
//              host memory, repeat;
//  mapped-pdl: the same, the sweeps launched with programmatic stream serialization; K >= 2;
//  mapped-pdl-blocking: the same on a blocking stream (cudaStreamCreate), as the example's.
// Every way gets EXECS execs (graph ways) or rounds (host loop), made in turn and destroyed
// after they are timed: median of 5 launches after a warm-up, us per sweep over 2000 sweeps,
// CUDA events. Then every way solves two problems from the same start (stopped by the
// tolerance; stopped by a step limit of half as many sweeps, which K does not divide).
// Exit status 0 when every loop ran its sweeps and every solution matched, 2 otherwise.
//
// Usage: while_unroll [EXECS] (default 6)
#include "../../examples/cuda_graphs_conditional/kernels/conditional.cu"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_)); exit(2);} } while (0)
#include "while_graph.h"
#include "relax_model.h"

constexpr uint32_t TIMED_STEPS = 2000;
constexpr uint32_t N = 256;

// The example's WHILE sweep with its programmatic trigger first instead of last.
__global__ void sweep_trigger_first(cudaGraphConditionalHandle handle, float* x, const float* b, uint32_t n,
                                    float w, float tol, uint32_t max_steps, uint32_t* state) {
  cuda_graph::pdl::launch_dependents();
  if (cgc_relax_sweep(x, b, n, w, tol, max_steps, state) == CGC_STOPPED && threadIdx.x == 0)
    cudaGraphSetConditional(handle, 0);
}

enum class Way { While, Pdl, PdlFirst, Mapped, MappedPdl, MappedPdlBlocking };
static const char* way_name(Way w) {
  switch (w) {
    case Way::While: return "while";
    case Way::Pdl: return "pdl";
    case Way::PdlFirst: return "pdl-first";
    case Way::Mapped: return "mapped";
    case Way::MappedPdl: return "mapped-pdl";
    default: return "mapped-pdl-blocking";
  }
}
static bool programmatic(Way w) { return w != Way::While && w != Way::Mapped; }
static bool host_loop(Way w) { return w == Way::Mapped || w == Way::MappedPdl || w == Way::MappedPdlBlocking; }

struct Device {
  float* x; float* b; uint32_t* state; uint32_t* flag;
  cudaStream_t stream;    // non-blocking
  cudaStream_t blocking;  // synchronizes with the legacy default stream
};

// One way with K sweeps a body (graph ways) or a round trip (host loop), set up for a problem.
struct Loop {
  Way way;
  int k;
  Device* d;
  Problem p;
  uint32_t n = N;
  cudaGraphExec_t exec = nullptr;

  cudaStream_t stream() const { return way == Way::MappedPdlBlocking ? d->blocking : d->stream; }

  Loop(Way way_, int k_, Device* d_, const Problem& p_) : way(way_), k(k_), d(d_), p(p_) {
    if (host_loop(way)) return;
    WhileGraph loop = make_while_graph();
    void* args[] = {&loop.handle, &d->x, &d->b, &n, &p.w, &p.tol, &p.max_steps, &d->state};
    const void* sweep = way == Way::PdlFirst ? (const void*)sweep_trigger_first : (const void*)cgc_relax_while;
    cudaGraphNode_t prev = nullptr;
    for (int i = 0; i < k; ++i) prev = add_body_kernel(loop.body, sweep, N, args, prev, programmatic(way));
    CK(cudaGraphInstantiate(&exec, loop.graph, 0));
    CK(cudaGraphUpload(exec, d->stream));
    CK(cudaStreamSynchronize(d->stream));
    CK(cudaGraphDestroy(loop.graph));
  }
  ~Loop() { if (exec) CK(cudaGraphExecDestroy(exec)); }

  void run() {
    if (exec) { CK(cudaGraphLaunch(exec, stream())); return; }
    volatile uint32_t* flag = d->flag;
    cudaLaunchAttribute serialize = {};
    serialize.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    serialize.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(1);
    config.blockDim = dim3(N);
    config.stream = stream();
    config.attrs = &serialize;
    config.numAttrs = programmatic(way) ? 1 : 0;
    for (uint32_t launched = 0; launched < p.max_steps;) {
      for (int i = 0; i < k; ++i, ++launched)
        CK(cudaLaunchKernelEx(&config, cgc_relax_host, d->x, (const float*)d->b, n, p.w, p.tol, p.max_steps,
                              d->state, d->flag));
      CK(cudaStreamSynchronize(config.stream));
      if (*flag == 0) break;
    }
  }

  // Starts from p.x0 with a zeroed state, runs once, returns the solution and the time in ms.
  Solution solve(float* ms) {
    cudaEvent_t t0, t1; CK(cudaEventCreate(&t0)); CK(cudaEventCreate(&t1));
    CK(cudaMemcpyAsync(d->x, p.x0.data(), N * sizeof(float), cudaMemcpyHostToDevice, stream()));
    CK(cudaMemsetAsync(d->state, 0, 3 * sizeof(uint32_t), stream()));
    CK(cudaEventRecord(t0, stream())); run(); CK(cudaEventRecord(t1, stream()));
    CK(cudaStreamSynchronize(stream()));
    if (ms) CK(cudaEventElapsedTime(ms, t0, t1));
    CK(cudaEventDestroy(t1)); CK(cudaEventDestroy(t0));
    Solution s; s.x.resize(N); uint32_t state[3];
    CK(cudaMemcpy(s.x.data(), d->x, N * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(state, d->state, sizeof state, cudaMemcpyDeviceToHost));
    s.steps = state[0]; s.residual_bits = state[1];
    return s;
  }
};

static double us_per_step(Way way, int k, Device& d, const Problem& p) {
  Loop loop(way, k, &d, p);
  std::vector<double> times;
  for (int run = 0; run < 6; ++run) {
    float ms;
    const Solution s = loop.solve(&ms);
    if (s.steps != p.max_steps) {
      fprintf(stderr, "%s K=%d ran %u steps, not %u\n", way_name(way), k, s.steps, p.max_steps);
      exit(2);
    }
    if (run > 0) times.push_back(ms * 1e3 / p.max_steps);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int main(int argc, char** argv) {
  const int execs = argc > 1 ? atoi(argv[1]) : 6;
  if (execs < 1) { fprintf(stderr, "usage: while_unroll [EXECS >= 1]\n"); return 2; }
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  int driver; CK(cudaDriverGetVersion(&driver));
  printf("%s, CUDA driver %d; %u sweeps of %u unknowns per launch, %d execs per way\n", prop.name, driver,
         TIMED_STEPS, N, execs);
  const Problem timed = timed_problem(N, TIMED_STEPS);
  Device d;
  CK(cudaMalloc(&d.x, N * sizeof(float))); CK(cudaMalloc(&d.b, N * sizeof(float)));
  CK(cudaMalloc(&d.state, 3 * sizeof(uint32_t)));
  CK(cudaHostAlloc(&d.flag, sizeof(uint32_t), cudaHostAllocMapped));
  CK(cudaMemcpy(d.b, timed.b.data(), N * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
  CK(cudaStreamCreate(&d.blocking));

  const int ks[] = {1, 2, 4, 8};
  const Way ways[] = {Way::While, Way::Pdl, Way::PdlFirst, Way::Mapped, Way::MappedPdl, Way::MappedPdlBlocking};
  struct Row { Way way; int k; std::vector<double> t; };
  std::vector<Row> rows;
  for (Way way : ways)
    for (int k : ks)
      if (!(programmatic(way) && k == 1)) rows.push_back({way, k, {}});
  for (int e = 0; e < execs; ++e)
    for (Row& r : rows) r.t.push_back(us_per_step(r.way, r.k, d, timed));
  printf("us per sweep, one exec (or host loop) at a time:\n");
  for (Row& r : rows) {
    printf("   %-6s K=%d:", way_name(r.way), r.k);
    for (double t : r.t) printf(" %.3f", t);
    std::sort(r.t.begin(), r.t.end());
    printf("   min %.3f, median %.3f, max %.3f\n", r.t.front(), r.t[r.t.size() / 2], r.t.back());
  }

  Problem converging = timed;
  converging.tol = 1e-4f; converging.max_steps = 100000;
  const Solution converged = solve_cpu(converging);
  Problem limited = converging;
  limited.max_steps = converged.steps / 2;
  const Solution stopped_half = solve_cpu(limited);
  printf("bit-for-bit against the CPU model (%u and %u sweeps):\n", converged.steps, stopped_half.steps);
  bool ok = true;
  for (const Row& r : rows) {
    const Solution a = Loop(r.way, r.k, &d, converging).solve(nullptr);
    const Solution b = Loop(r.way, r.k, &d, limited).solve(nullptr);
    const bool same = a == converged && b == stopped_half;
    printf("   %-6s K=%d: %u and %u sweeps: %s\n", way_name(r.way), r.k, a.steps, b.steps,
           same ? "same bits" : "DIFFERENT");
    ok &= same;
  }

  CK(cudaStreamDestroy(d.blocking));
  CK(cudaStreamDestroy(d.stream));
  CK(cudaFreeHost(d.flag));
  CK(cudaFree(d.state)); CK(cudaFree(d.b)); CK(cudaFree(d.x));
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 2;
}
