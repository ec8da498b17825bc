// Why does the bench's kernel chain cost more per node than a plain C++ chain, and what do
// programmatic edges (programmatic dependent launch, PDL) save? Plain CUDA C++, no Rust and no
// crate code. Run it with `bash scripts/run-standalone profile-chain-shape`, which builds it
// three ways and runs each build (bench/README.md, "Programmatic dependent launch (h)"):
//   plain    nvcc -O3                 (whole-program compilation)
//   rdc      nvcc -O3 -rdc=true -DCHAIN_SHAPE_NO_DEVRT   (relocatable device code, no device runtime use)
//   devrt    nvcc -O3 -rdc=true       (as cuda-build compiles kernels: relocatable, and kernels of
//                                      the program launch graphs and kernels from the device)
//
// Each build replays chains of 10, 100 and 1000 one-thread kernel nodes, built with
// cudaGraphAddNode (and edge data for programmatic edges), and prints µs per node, the median
// of the samples; every sample's counter is checked. Kernels:
//   empty       does nothing
//   rmw         *c += 1
//   bench       if (blockIdx.x == 0 && threadIdx.x == 0) *c += v   (the bench's chain kernel)
//   empty_pdl   cudaGridDependencySynchronize(); cudaTriggerProgrammaticLaunchCompletion();
//   rmw_pdl     sync; *c += 1; trigger                              (trigger last)
//   rmw_early   trigger; sync; *c += 1                              (trigger first)
// Then stream launches of the empty kernel: cudaLaunchKernel, cudaLaunchKernelExC with no
// attribute, and with the programmatic-serialization attribute, µs per launch.
// The devrt build also times two execs taking turns on two blocking streams, as the bench
// samples its two sides, and asks whether a graph with a programmatic edge can be
// instantiated for device launch, and if so whether a kernel can launch it and both nodes run.
// Last, every build times the empty chains again after kernel launches on a second stream
// (the stream launches above used one): what the bench's (a) does before its chains.
//
// Exit status 0 when every check held, 1 when not, 2 on a CUDA error.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s -> %s (%d)\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_), (int)e_); exit(2); } } while (0)

#if defined(__CUDACC_RDC__) && !defined(CHAIN_SHAPE_NO_DEVRT)
#define CHAIN_SHAPE_DEVRT 1
#endif

__global__ void k_empty() {}
__global__ void k_rmw(unsigned* c) { *c += 1; }
__global__ void k_bench(unsigned* c, unsigned v) { if (blockIdx.x == 0 && threadIdx.x == 0) *c += v; }
__global__ void k_empty_pdl() {
  cudaGridDependencySynchronize();
  cudaTriggerProgrammaticLaunchCompletion();
}
__global__ void k_rmw_pdl(unsigned* c) {
  cudaGridDependencySynchronize();
  *c += 1;
  cudaTriggerProgrammaticLaunchCompletion();
}
__global__ void k_rmw_early(unsigned* c) {
  cudaTriggerProgrammaticLaunchCompletion();
  cudaGridDependencySynchronize();
  *c += 1;
}

#ifdef CHAIN_SHAPE_DEVRT
// Launches `work` from the device (fire and forget); keeps the status in *status.
__global__ void k_launcher(cudaGraphExec_t work, int* status) {
  *status = (int)cudaGraphLaunch(work, cudaStreamGraphFireAndForget);
}

// A dynamic-parallelism parent, as the bench's module has one (never launched here).
__global__ void k_cdp_parent(unsigned* c) {
  k_rmw<<<1, 1>>>(c);
}
#endif

struct Shape { const char* name; const void* func; int args; bool counts; bool pdl; };

static unsigned* g_counter;
static cudaStream_t g_stream;
static cudaStream_t g_nonblocking;
static cudaStream_t g_blocking;

// A chain of `nodes` one-thread nodes of `shape`, each after the previous by a plain edge or
// a programmatic one.
static cudaGraph_t build(const Shape& s, int nodes, bool programmatic) {
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  unsigned one = 1;
  void* args[] = {&g_counter, &one};
  cudaGraphNode_t prev = nullptr;
  for (int i = 0; i < nodes; ++i) {
    cudaGraphNodeParams p = {};
    p.type = cudaGraphNodeTypeKernel;
    p.kernel.func = const_cast<void*>(s.func);
    p.kernel.gridDim = dim3(1);
    p.kernel.blockDim = dim3(1);
    p.kernel.kernelParams = s.args ? args : nullptr;
    cudaGraphEdgeData edge = {};
    if (programmatic) {
      edge.from_port = cudaGraphKernelNodePortProgrammatic;
      edge.type = cudaGraphDependencyTypeProgrammatic;
    }
    cudaGraphNode_t node;
    CK(cudaGraphAddNode(&node, g, prev ? &prev : nullptr, prev ? &edge : nullptr, prev ? 1 : 0, &p));
    prev = node;
  }
  return g;
}

static int g_failures = 0;

// One sample: `replays` launches of `e` on `stream` between two events, µs per node; the
// counter checked (nodes x replays for kernels that count, else 0).
static double one_sample(const Shape& s, cudaGraphExec_t e, cudaStream_t stream, int nodes, int replays,
                         cudaEvent_t a, cudaEvent_t b) {
  CK(cudaMemsetAsync(g_counter, 0, sizeof(unsigned), stream));
  CK(cudaEventRecord(a, stream));
  for (int r = 0; r < replays; ++r) CK(cudaGraphLaunch(e, stream));
  CK(cudaEventRecord(b, stream));
  CK(cudaEventSynchronize(b));
  float ms;
  CK(cudaEventElapsedTime(&ms, a, b));
  unsigned counter;
  CK(cudaMemcpy(&counter, g_counter, sizeof counter, cudaMemcpyDeviceToHost));
  if (counter != (s.counts ? (unsigned)(nodes * replays) : 0u)) {
    fprintf(stderr, "%s: counter %u\n", s.name, counter);
    ++g_failures;
  }
  return ms * 1e3 / (nodes * replays);
}

// µs per node of `nodes`-node chains replayed back to back, about 20000 nodes per sample.
static double replay(const Shape& s, int nodes, bool programmatic) {
  cudaGraph_t g = build(s, nodes, programmatic);
  cudaGraphExec_t e;
  CK(cudaGraphInstantiate(&e, g, 0));
  CK(cudaGraphUpload(e, g_stream));
  const int replays = std::max(1, 20000 / nodes);
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<double> us;
  for (int sample = 0; sample < 13; ++sample) {
    const double per_node = one_sample(s, e, g_stream, nodes, replays, a, b);
    if (sample >= 3) us.push_back(per_node);
  }
  std::sort(us.begin(), us.end());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  CK(cudaGraphExecDestroy(e));
  CK(cudaGraphDestroy(g));
  return us[us.size() / 2];
}

// µs per stream launch of k_empty: 0 = cudaLaunchKernel, 1 = cudaLaunchKernelExC without
// attributes, 2 = with programmatic stream serialization.
static double stream_launches(int how) {
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(1);
  config.blockDim = dim3(1);
  config.stream = g_stream;
  config.attrs = how == 2 ? &attr : nullptr;
  config.numAttrs = how == 2 ? 1 : 0;
  const void* func = how == 2 ? (const void*)k_empty_pdl : (const void*)k_empty;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<double> us;
  for (int sample = 0; sample < 13; ++sample) {
    CK(cudaEventRecord(a, g_stream));
    for (int i = 0; i < 1000; ++i) {
      if (how == 0) CK(cudaLaunchKernel(func, dim3(1), dim3(1), nullptr, 0, g_stream));
      else CK(cudaLaunchKernelExC(&config, func, nullptr));
    }
    CK(cudaEventRecord(b, g_stream));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (sample >= 3) us.push_back(ms * 1e3 / 1000);
  }
  std::sort(us.begin(), us.end());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return us[us.size() / 2];
}

#ifdef CHAIN_SHAPE_DEVRT
// The bench's way (src/harness.rs): two execs of the same 100-node chain, each on its own
// blocking stream, sampled alternately (A, B, A, B, ...): µs per node of each, medians, against
// one exec alone. Does a second exec and stream, taking turns, slow a chain down?
static void taking_turns(const Shape& s, bool programmatic) {
  const int nodes = 100, replays = 200;
  cudaStream_t streams[2];
  cudaGraph_t graphs[2];
  cudaGraphExec_t execs[2];
  for (int i = 0; i < 2; ++i) {
    CK(cudaStreamCreate(&streams[i]));
    graphs[i] = build(s, nodes, programmatic);
    CK(cudaGraphInstantiate(&execs[i], graphs[i], 0));
    CK(cudaGraphUpload(execs[i], streams[i]));
  }
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<double> alone, turns[2];
  for (int k = 0; k < 16; ++k) alone.push_back(one_sample(s, execs[0], streams[0], nodes, replays, a, b));
  for (int k = 0; k < 16; ++k) {
    for (int i = 0; i < 2; ++i) turns[i].push_back(one_sample(s, execs[i], streams[i], nodes, replays, a, b));
  }
  auto median = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  printf("taking turns, %-9s %-12s 100 nodes: alone %.3f, A %.3f, B %.3f µs/node\n", s.name,
         programmatic ? "programmatic" : "plain", median(alone), median(turns[0]), median(turns[1]));
  for (int i = 0; i < 2; ++i) {
    CK(cudaGraphExecDestroy(execs[i]));
    CK(cudaGraphDestroy(graphs[i]));
    CK(cudaStreamDestroy(streams[i]));
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
}
#endif

// A chain of rmw kernels, which never call cudaGridDependencySynchronize(), joined by
// programmatic edges: nothing orders the read-modify-writes, so increments may be lost. Prints
// the counter against what plain edges give; not a check (what it shows is the point).
static void programmatic_without_wait() {
  const Shape s{"rmw", (const void*)k_rmw, 1, true, false};
  cudaGraph_t g = build(s, 1000, true);
  cudaGraphExec_t e;
  CK(cudaGraphInstantiate(&e, g, 0));
  CK(cudaMemset(g_counter, 0, sizeof(unsigned)));
  for (int r = 0; r < 20; ++r) CK(cudaGraphLaunch(e, g_stream));
  CK(cudaStreamSynchronize(g_stream));
  unsigned counter;
  CK(cudaMemcpy(&counter, g_counter, sizeof counter, cudaMemcpyDeviceToHost));
  printf("rmw without the wait, programmatic edges, 20 x 1000 nodes: counter %u of 20000\n", counter);
  CK(cudaGraphExecDestroy(e));
  CK(cudaGraphDestroy(g));
}

#ifdef CHAIN_SHAPE_DEVRT
// A 2-node rmw_pdl graph with a programmatic edge, instantiated for device launch: the status;
// when accepted, launched by k_launcher (inside a graph) and both nodes' counts checked.
static void device_launch_programmatic() {
  cudaGraph_t g = build(Shape{"rmw_pdl", (const void*)k_rmw_pdl, 1, true, true}, 2, true);
  cudaGraphExec_t e = nullptr;
  cudaGraphInstantiateParams ip = {};
  ip.flags = cudaGraphInstantiateFlagDeviceLaunch;
  const cudaError_t status = cudaGraphInstantiateWithParams(&e, g, &ip);
  printf("device launch, 2 nodes with a programmatic edge: instantiate -> %s (%d), result_info %d\n",
         cudaGetErrorName(status), (int)status, (int)ip.result_out);
  (void)cudaGetLastError();
  if (status == cudaSuccess) {
    CK(cudaGraphUpload(e, g_stream));
    CK(cudaMemset(g_counter, 0, sizeof(unsigned)));
    int* dstatus;
    CK(cudaMalloc(&dstatus, sizeof(int)));
    CK(cudaMemset(dstatus, 0xff, sizeof(int)));
    cudaGraph_t lg;
    CK(cudaGraphCreate(&lg, 0));
    cudaGraphNodeParams p = {};
    void* args[] = {&e, &dstatus};
    p.type = cudaGraphNodeTypeKernel;
    p.kernel.func = (void*)k_launcher;
    p.kernel.gridDim = dim3(1);
    p.kernel.blockDim = dim3(1);
    p.kernel.kernelParams = args;
    cudaGraphNode_t n;
    CK(cudaGraphAddNode(&n, lg, nullptr, nullptr, 0, &p));
    cudaGraphExec_t le;
    CK(cudaGraphInstantiate(&le, lg, 0));
    CK(cudaGraphLaunch(le, g_stream));
    const cudaError_t sync = cudaStreamSynchronize(g_stream);
    int launched = -1;
    unsigned counter = 0;
    if (sync == cudaSuccess) {
      CK(cudaMemcpy(&launched, dstatus, sizeof launched, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(&counter, g_counter, sizeof counter, cudaMemcpyDeviceToHost));
    }
    printf("device launch, 2 nodes with a programmatic edge: sync -> %s, device cudaGraphLaunch -> %d, counter %u (want 2)\n",
           cudaGetErrorName(sync), launched, counter);
    if (sync != cudaSuccess || launched != 0 || counter != 2) ++g_failures;
  }
}
#endif

int main() {
  int dev;
  CK(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  CK(cudaMalloc(&g_counter, sizeof(unsigned)));
  CK(cudaStreamCreateWithFlags(&g_nonblocking, cudaStreamNonBlocking));
  CK(cudaStreamCreate(&g_blocking));
  g_stream = g_nonblocking;
#if defined(CHAIN_SHAPE_DEVRT)
  const char* build_name = "devrt (-rdc=true, a kernel launches graphs)";
#elif defined(__CUDACC_RDC__)
  const char* build_name = "rdc (-rdc=true, no device runtime use)";
#else
  const char* build_name = "plain (whole program)";
#endif
  printf("%s, sm_%d%d; build: %s\n", prop.name, prop.major, prop.minor, build_name);
  const Shape shapes[] = {
      {"empty", (const void*)k_empty, 0, false, false},       {"rmw", (const void*)k_rmw, 1, true, false},
      {"bench", (const void*)k_bench, 2, true, false},        {"empty_pdl", (const void*)k_empty_pdl, 0, false, true},
      {"rmw_pdl", (const void*)k_rmw_pdl, 1, true, true},     {"rmw_early", (const void*)k_rmw_early, 1, true, true},
  };
  printf("%-10s %-12s %8s %8s %8s   (µs/node)\n", "kernel", "edges", "10", "100", "1000");
  for (const Shape& s : shapes) {
    for (int programmatic = 0; programmatic <= (s.pdl ? 1 : 0); ++programmatic) {
      printf("%-10s %-12s", s.name, programmatic ? "programmatic" : "plain");
      for (int nodes : {10, 100, 1000}) printf(" %8.3f", replay(s, nodes, programmatic));
      printf("\n");
    }
  }
  g_stream = g_blocking;
  printf("%-10s %-12s", "bench", "plain, blocking stream");
  for (int nodes : {10, 100, 1000}) printf(" %8.3f", replay(shapes[2], nodes, false));
  printf("\n");
  g_stream = g_nonblocking;
  printf("stream launch, empty: cudaLaunchKernel %.3f, cudaLaunchKernelExC %.3f, ExC + programmatic serialization %.3f µs/launch\n",
         stream_launches(0), stream_launches(1), stream_launches(2));
  programmatic_without_wait();
#ifdef CHAIN_SHAPE_DEVRT
  taking_turns(shapes[0], false);
  taking_turns(shapes[3], true);
  taking_turns(shapes[1], false);
  taking_turns(shapes[4], true);
  device_launch_programmatic();
#endif
  // Kernel launches on a second stream (those above ran on g_nonblocking only). From then on
  // the process's kernel chains cost more per node (bench/README.md); this must stay last.
  for (int i = 0; i < 30; ++i) CK(cudaLaunchKernel((const void*)k_empty, dim3(1), dim3(1), nullptr, 0, g_blocking));
  CK(cudaStreamSynchronize(g_blocking));
  printf("after 30 kernel launches on a second stream, 100 nodes: empty plain %.3f, empty_pdl programmatic %.3f µs/node\n",
         replay(shapes[0], 100, false), replay(shapes[3], 100, true));
  CK(cudaStreamDestroy(g_nonblocking));
  CK(cudaStreamDestroy(g_blocking));
  CK(cudaFree(g_counter));
  printf(g_failures ? "FAIL (%d checks)\n" : "PASS\n", g_failures);
  return g_failures ? 1 : 0;
}
