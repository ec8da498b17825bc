// Plain CUDA C++ reproducer of RELIABILITY.md's known issue, with no Rust and no crate code:
// after multi-node graphs instantiated for device launch were launched from the device and
// destroyed, later device-launch graphs silently do not run (or only in part), or a kernel
// faults with cudaErrorIllegalAddress. Build and run it on a GPU machine with
// `bash scripts/run-standalone repro-exec-destroy` (nvcc -rdc=true ... -lcudadevrt).
//
// Phase A: 48 rounds; each builds a graph of `width` one-thread kernel nodes (1 to 64, or
// WIDTH_FIXED), instantiates 16 device-launch copies, fire-and-forgets all 16 from a launcher
// graph, then tail-launches all 16 from another, checks every node ran 32 times, and destroys
// what it made. Phase B: 4 rounds of 1920 fresh one-node device-launch graphs, fired 120 per
// launcher; each must run once. Every host call and every device-side launch is checked.
//
// Argument: `destroy` (default) or `keep` (never destroy an exec) or `bonly` (phase B only).
// Environment: DESTROY_WORK=0 keeps the work graphs' execs, DESTROY_LAUNCHER=0 the launchers';
// WIDTH_FIXED=n, ROUNDS_A=n; SYNC_BEFORE_DESTROY=1 synchronizes the device before each destroy;
// RECYCLE=1 never destroys but reuses execs of the same topology via cudaGraphExecUpdate +
// cudaGraphUpload; VERBOSE=1 prints each phase-A failure. Exit status 1 when anything failed.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <map>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s -> %s (%d)\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_), (int)e_); exit(2); } } while (0)

extern "C" __global__ void mark(unsigned* counters, unsigned i) { if (threadIdx.x == 0) atomicAdd(&counters[i], 1u); }

extern "C" __global__ void launch_all(const cudaGraphExec_t* graphs, unsigned n, int tail, unsigned* accepted, int* err) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  unsigned count = 0;
  for (unsigned i = 0; i < n; ++i) {
    cudaError_t e = cudaGraphLaunch(graphs[i], tail ? cudaStreamGraphTailLaunch : cudaStreamGraphFireAndForget);
    if (e != cudaSuccess) { if (*err == 0) *err = (int)e; break; }
    ++count;
  }
  *accepted = count;
}

static cudaStream_t stream;
static int failures = 0;
static int first_fail_round = -1;
static int env(const char* n, int d) { const char* v = getenv(n); return v ? atoi(v) : d; }
static int DESTROY_WORK, DESTROY_LAUNCHER, WIDTH_FIXED, UPLOAD_LAUNCHER, SYNC_BEFORE_DESTROY, ROUNDS_A;
static int RECYCLE;
// cudaMemset and a pageable host-to-device cudaMemcpy may return before the device has the
// data, and work on the non-blocking stream does not wait for them: wait for the legacy stream
// after each (without this, late zeroing could pass for graphs that did not run).
static void fence() { CK(cudaStreamSynchronize(0)); }
static std::map<unsigned, std::vector<cudaGraphExec_t>> pool;
static long reused = 0;
static cudaGraphExec_t pooled_exec(cudaGraph_t g, unsigned key) {
  auto& v = pool[key];
  if (RECYCLE && !v.empty()) {
    cudaGraphExec_t e = v.back(); v.pop_back();
    cudaGraphExecUpdateResultInfo info;
    CK(cudaGraphExecUpdate(e, g, &info));
    CK(cudaGraphUpload(e, stream));
    reused++;
    return e;
  }
  cudaGraphExec_t e;
  CK(cudaGraphInstantiateWithFlags(&e, g, cudaGraphInstantiateFlagDeviceLaunch));
  CK(cudaGraphUpload(e, stream));
  return e;
}
static void release_exec(cudaGraphExec_t e, unsigned key) {
  if (RECYCLE) { pool[key].push_back(e); return; }
  CK(cudaGraphExecDestroy(e));
}
static void destroy_exec(cudaGraphExec_t e) { if (SYNC_BEFORE_DESTROY) CK(cudaDeviceSynchronize()); CK(cudaGraphExecDestroy(e)); }

static cudaGraphExec_t device_exec(cudaGraph_t g) {
  cudaGraphExec_t e;
  CK(cudaGraphInstantiateWithFlags(&e, g, cudaGraphInstantiateFlagDeviceLaunch));
  CK(cudaGraphUpload(e, stream));
  return e;
}
static cudaGraphExec_t launcher_exec(cudaGraph_t g) {
  cudaGraphExec_t e;
  CK(cudaGraphInstantiateWithFlags(&e, g, cudaGraphInstantiateFlagDeviceLaunch));
  if (UPLOAD_LAUNCHER) CK(cudaGraphUpload(e, stream));
  return e;
}

static void add_kernel(cudaGraph_t g, void* fn, void** args) {
  cudaKernelNodeParams p = {};
  p.func = fn; p.gridDim = dim3(1); p.blockDim = dim3(1); p.kernelParams = args;
  cudaGraphNode_t node;
  CK(cudaGraphAddKernelNode(&node, g, nullptr, 0, &p));
}

// One launcher graph launching graphs[0..n): returns accepted, checks err.
static unsigned run_launcher(cudaGraphExec_t* d_table, unsigned n, int tail, bool destroy) {
  unsigned* accepted; int* err;
  CK(cudaMalloc(&accepted, 4)); CK(cudaMalloc(&err, 4));
  CK(cudaMemset(accepted, 0, 4)); CK(cudaMemset(err, 0, 4)); fence();
  cudaGraph_t g; CK(cudaGraphCreate(&g, 0));
  void* args[] = {&d_table, &n, &tail, &accepted, &err};
  add_kernel(g, (void*)launch_all, args);
  cudaGraphExec_t e = RECYCLE ? pooled_exec(g, 100000) : launcher_exec(g);
  CK(cudaGraphLaunch(e, stream));
  CK(cudaStreamSynchronize(stream));
  unsigned a = 0; int er = 0;
  CK(cudaMemcpy(&a, accepted, 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&er, err, 4, cudaMemcpyDeviceToHost));
  if (er) { printf("  launcher: device error %d\n", er); failures++; }
  if (RECYCLE) release_exec(e, 100000); else if (destroy && DESTROY_LAUNCHER) destroy_exec(e);
  CK(cudaGraphDestroy(g));
  CK(cudaFree(accepted)); CK(cudaFree(err));
  return a;
}

static cudaGraphExec_t* upload_table(const std::vector<cudaGraphExec_t>& v) {
  cudaGraphExec_t* d; CK(cudaMalloc(&d, v.size() * sizeof(cudaGraphExec_t)));
  CK(cudaMemcpy(d, v.data(), v.size() * sizeof(cudaGraphExec_t), cudaMemcpyHostToDevice)); fence();
  return d;
}

// Phase A: graphs of many widths, 16 copies each, launched FF and tail, then destroyed.
static void many_widths(bool destroy) {
  const unsigned copies = 16;
  for (unsigned round = 0; round < (unsigned)ROUNDS_A; ++round) {
    unsigned width = WIDTH_FIXED ? WIDTH_FIXED : 1 + (round * 37) % 64;
    int before = failures;
    unsigned* counters; CK(cudaMalloc(&counters, 64 * 4)); CK(cudaMemset(counters, 0, 64 * 4)); fence();
    cudaGraph_t g; CK(cudaGraphCreate(&g, 0));
    for (unsigned i = 0; i < width; ++i) { void* args[] = {&counters, &i}; add_kernel(g, (void*)mark, args); }
    std::vector<cudaGraphExec_t> execs;
    for (unsigned c = 0; c < copies; ++c) execs.push_back(RECYCLE ? pooled_exec(g, width) : device_exec(g));
    cudaGraphExec_t* d_table = upload_table(execs);
    for (int tail = 0; tail < 2; ++tail) {
      unsigned a = run_launcher(d_table, copies, tail, destroy);
      if (a != copies) { if (getenv("VERBOSE")) printf("  A round %u tail %d: accepted %u of %u\n", round, tail, a, copies); failures++; }
    }
    std::vector<unsigned> h(64);
    CK(cudaMemcpy(h.data(), counters, 64 * 4, cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < width; ++i)
      if (h[i] != 2 * copies) { if (getenv("VERBOSE")) printf("  A round %u width %u: node %u ran %u, want %u\n", round, width, i, h[i], 2 * copies); failures++; break; }
    if (failures != before && first_fail_round < 0) first_fail_round = round;
    if (RECYCLE) for (auto e : execs) release_exec(e, width); else if (destroy && DESTROY_WORK) for (auto e : execs) destroy_exec(e);
    CK(cudaGraphDestroy(g)); CK(cudaFree(d_table)); CK(cudaFree(counters));
  }
}

// Phase B: rounds of fresh one-node execs, fire-and-forgotten 120 per launcher; each must run once.
static void fresh(unsigned rounds, unsigned per_round, bool destroy) {
  for (unsigned round = 0; round < rounds; ++round) {
    unsigned* counters; CK(cudaMalloc(&counters, per_round * 4)); CK(cudaMemset(counters, 0, per_round * 4)); fence();
    std::vector<cudaGraphExec_t> execs; std::vector<cudaGraph_t> graphs;
    for (unsigned i = 0; i < per_round; ++i) {
      cudaGraph_t g; CK(cudaGraphCreate(&g, 0));
      void* args[] = {&counters, &i}; add_kernel(g, (void*)mark, args);
      execs.push_back(RECYCLE ? pooled_exec(g, 1) : device_exec(g)); graphs.push_back(g);
    }
    unsigned bad_accept = 0;
    for (unsigned start = 0; start < per_round; start += 120) {
      unsigned n = per_round - start < 120 ? per_round - start : 120;
      std::vector<cudaGraphExec_t> chunk(execs.begin() + start, execs.begin() + start + n);
      cudaGraphExec_t* d_table = upload_table(chunk);
      unsigned a = run_launcher(d_table, n, 0, destroy);
      if (a != n) bad_accept++;
      CK(cudaFree(d_table));
    }
    std::vector<unsigned> h(per_round);
    CK(cudaMemcpy(h.data(), counters, per_round * 4, cudaMemcpyDeviceToHost));
    unsigned wrong = 0; for (unsigned c : h) wrong += c != 1;
    if (wrong || bad_accept) { printf("  B round %u: %u of %u graphs did not run once; %u launchers short\n", round, wrong, per_round, bad_accept); failures++; }
    if (RECYCLE) for (auto e : execs) release_exec(e, 1); else if (destroy && DESTROY_WORK) for (auto e : execs) destroy_exec(e);
    for (auto g : graphs) CK(cudaGraphDestroy(g));
    CK(cudaFree(counters));
  }
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "destroy";
  bool destroy = strcmp(mode, "keep") != 0;
  DESTROY_WORK = env("DESTROY_WORK", 1); DESTROY_LAUNCHER = env("DESTROY_LAUNCHER", 1);
  WIDTH_FIXED = env("WIDTH_FIXED", 0); UPLOAD_LAUNCHER = env("UPLOAD_LAUNCHER", 1);
  SYNC_BEFORE_DESTROY = env("SYNC_BEFORE_DESTROY", 0); RECYCLE = env("RECYCLE", 0); ROUNDS_A = env("ROUNDS_A", 48);
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  if (strcmp(mode, "bonly") != 0) many_widths(destroy);
  printf("%s: after phase A failures=%d first failing round %d\n", mode, failures, first_fail_round);
  fresh(4, 1920, destroy);
  CK(cudaDeviceSynchronize());
  printf("%s: failures=%d (execs reused through update: %ld)\n", mode, failures, reused);
  return failures ? 1 : 0;
}
