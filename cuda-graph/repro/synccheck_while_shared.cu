// Does compute-sanitizer's synccheck report barrier errors in examples/cuda_graphs_conditional's
// relaxation sweeps when several sanitizer processes share the GPU, and none when one runs alone?
// (SOUNDNESS.md, "Things of other code", item 11: tests' `cuda_graphs_conditional` showed 412
// synccheck errors beside 15 other sanitizer runs on one H200, and 0 alone.) Plain CUDA C++, no
// Rust and no crate code: the example's own kernels (kernels/conditional.cu, included below, so
// what runs is what the example runs), the example's WHILE loop and its mapped-flag host loop,
// every result checked bit for bit against the CPU model. The sweeps are the only kernels of that
// test with barriers (`__syncthreads_or`, `__syncthreads`, `__reduce_max_sync`); the routing part's
// kernels are one thread each. Run it on a GPU machine with `bash scripts/run-standalone
// repro-synccheck-while-shared`: alone under synccheck, 8 processes at once without a sanitizer,
// and 8 at once under synccheck.
//
// Usage: synccheck_while_shared [WAY] [LOOPS]   (WAY: while, host or both (default); LOOPS: 6)
//   while  a WHILE node whose body is 4 cgc_relax_while sweeps joined by programmatic edges (plain
//          edges below sm_90), as the example builds it; the handle's default 1 starts each launch
//   host   the mapped-flag host loop: rounds of 4 cgc_relax_host sweeps launched on a stream with
//          programmatic stream serialization (sm_90 and later), the flag read after each round
// Each loop solves the example's 256-unknown system (diagonal 2.05, tolerance 1e-3, its quick
// settings) from the start values. Prints one line, PASS or FAIL; exit status 0, 1 when a loop
// differs from the CPU model, 2 on a CUDA error.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define CK(x)                                                                                              \
  do {                                                                                                     \
    cudaError_t e_ = (x);                                                                                  \
    if (e_ != cudaSuccess) {                                                                               \
      fprintf(stderr, "%s:%d %s -> %s (%d)\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_), (int)e_);    \
      printf("FAIL: CUDA error %s at line %d\n", cudaGetErrorName(e_), __LINE__);                          \
      exit(2);                                                                                             \
    }                                                                                                      \
  } while (0)

#include "../../examples/cuda_graphs_conditional/kernels/conditional.cu"
#include "../../bench/profile/relax_model.h"
#include "../../bench/profile/while_graph.h"

constexpr int kSweepsPerRound = 4;
constexpr uint32_t kUnknowns = 256;  // the example's size (Options::quick)

struct Loops {
  Problem p;
  uint32_t n = kUnknowns;
  float *x = nullptr, *b = nullptr;
  uint32_t *state = nullptr, *flag = nullptr;  // flag: mapped host memory
  cudaStream_t stream = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool programmatic = false;

  explicit Loops(const Problem& problem) : p(problem) {
    int device = 0, major = 0;
    CK(cudaGetDevice(&device));
    CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    programmatic = major >= 9;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CK(cudaMalloc(&x, n * sizeof(float)));
    CK(cudaMalloc(&b, n * sizeof(float)));
    CK(cudaMalloc(&state, 3 * sizeof(uint32_t)));
    CK(cudaHostAlloc(&flag, sizeof(uint32_t), cudaHostAllocMapped));
    CK(cudaMemcpyAsync(b, p.b.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
    CK(cudaStreamSynchronize(stream));
    // The example's WHILE graph (src/relax.rs, RelaxBench::new).
    WhileGraph loop = make_while_graph();
    void* args[] = {&loop.handle, &x, &b, &n, &p.w, &p.tol, &p.max_steps, &state};
    cudaGraphNode_t previous = nullptr;
    for (int i = 0; i < kSweepsPerRound; ++i)
      previous = add_body_kernel(loop.body, (const void*)cgc_relax_while, n, args, previous, programmatic);
    CK(cudaGraphInstantiate(&exec, loop.graph, 0));
    CK(cudaGraphDestroy(loop.graph));
  }

  // The start values back and the state zeroed, queued on the stream.
  void reset() {
    CK(cudaMemcpyAsync(x, p.x0.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
    CK(cudaMemsetAsync(state, 0, 3 * sizeof(uint32_t), stream));
  }

  void run_while() { CK(cudaGraphLaunch(exec, stream)); }

  // The example's mapped-flag loop (RelaxBench::run_mapped_loop).
  void run_host() {
    cudaLaunchAttribute serialize = {};
    serialize.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    serialize.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(1);
    config.blockDim = dim3(n);
    config.stream = stream;
    config.attrs = &serialize;
    config.numAttrs = programmatic ? 1 : 0;
    volatile uint32_t* go_on = flag;
    for (uint32_t round = 0; round < p.max_steps; ++round) {
      for (int i = 0; i < kSweepsPerRound; ++i)
        CK(cudaLaunchKernelEx(&config, cgc_relax_host, x, (const float*)b, n, p.w, p.tol, p.max_steps, state,
                              flag));
      CK(cudaStreamSynchronize(stream));
      if (*go_on == 0) break;
    }
  }

  Solution solve(bool graph) {
    reset();
    if (graph) {
      run_while();
    } else {
      run_host();
    }
    Solution s;
    s.x.resize(n);
    uint32_t words[3];
    CK(cudaMemcpyAsync(s.x.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
    CK(cudaMemcpyAsync(words, state, sizeof words, cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    s.steps = words[0];
    s.residual_bits = words[1];
    return s;
  }
};

int main(int argc, char** argv) {
  const char* way = argc > 1 ? argv[1] : "both";
  const int loops = argc > 2 ? atoi(argv[2]) : 6;
  const bool with_while = !strcmp(way, "while") || !strcmp(way, "both");
  const bool with_host = !strcmp(way, "host") || !strcmp(way, "both");
  if (argc > 3 || loops < 1 || !(with_while || with_host)) {
    fprintf(stderr, "usage: %s [while|host|both] [LOOPS >= 1]\n", argv[0]);
    return 2;
  }
  Problem problem = timed_problem(kUnknowns, 100000);
  problem.tol = 1e-3f;
  const Solution cpu = solve_cpu(problem);
  Loops device(problem);
  int while_right = 0, host_right = 0;
  for (int i = 0; i < loops; ++i) {
    if (with_while) while_right += device.solve(true) == cpu;
    if (with_host) host_right += device.solve(false) == cpu;
  }
  const bool ok = (!with_while || while_right == loops) && (!with_host || host_right == loops);
  printf("%s: %d loops a way of %u sweeps (%d a round%s), bit for bit against the CPU model:", ok ? "PASS" : "FAIL",
         loops, cpu.steps, kSweepsPerRound, device.programmatic ? ", programmatic" : "");
  if (with_while) printf(" WHILE %d of %d", while_right, loops);
  if (with_host) printf("%s host loop %d of %d", with_while ? "," : "", host_right, loops);
  printf("\n");
  return ok ? 0 : 1;
}
