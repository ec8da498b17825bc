// Where do compute-sanitizer synccheck's reports on examples/beyond/multi_gpu_solve's quick test come
// from: the example's kernels, NCCL's kernels, or the two together in a WHILE graph?
// (SOUNDNESS.md, "Things of other code", item 11: on one H200, synccheck reported 58,716 errors
// in that test, then the run failed with cudaErrorLaunchFailure.) Plain CUDA C++, no Rust and no
// crate code: the example's own kernels (its kernels/solve.cu, included below, so a fix there is
// what runs here), its problem, and NCCL loaded at run time as the crate loads it (dlopen of
// libnccl.so.2; no NCCL header needed to build, so the standalone-programs test compiles it on
// machines without NCCL). Run it on a GPU machine with `bash scripts/run-standalone
// repro-synccheck-solve`, which runs every variant without a sanitizer and under synccheck and
// prints one line each.
//
// Usage: synccheck_solve VARIANT [GPUS]      (GPUS: ranks, devices 0..GPUS-1; default 1)
//   kernels-stream  the example's kernels only, no NCCL, one GPU: every pass queued from the
//                   host (partial gradient, step, flag copied back), twice
//   kernels-while   the same kernels, no NCCL, one GPU: the pass captured into the body of a WHILE
//                   node (gradient, step, condition), the graph launched 3 times
//   pieces          no NCCL, one GPU: the kernels' synchronizing parts one kernel each (the block
//                   barrier, the full-mask double shuffles, the one-warp reduction), 33 launches
//                   each on a stream, so that a report names the part
//   nccl-stream     NCCL only, no kernel of ours, GPUS ranks (ncclCommInitAll, one thread driving
//                   every rank in ncclGroupStart/End): 100 in-place sum all-reduces of 8 doubles
//   nccl-graph      NCCL only: one eager all-reduce (NCCL connects the ranks then), then 33
//                   all-reduces captured into one graph per rank (no WHILE), launched 3 times
//   solve           what the test runs, on GPUS ranks: the passes from the host twice (kernels
//                   and NCCL on streams), then one graph per rank whose WHILE body was captured
//                   from gradient, all-reduce, step and condition, launched 3 times; checked
//                   against the CPU (the test's checks). With one rank, NCCL queues no work for
//                   an in-place sum (no kernel, no copy), so `solve 1` runs only our kernels,
//                   with NCCL loaded and a communicator alive.
// Every variant prints one line, PASS or FAIL and what it checked. Exit status 0 on PASS, 1 on
// FAIL, 2 on a CUDA or NCCL error. NCCL: REPRO_NCCL_LIB names the library (default: the dynamic
// loader finds libnccl.so.2 on LD_LIBRARY_PATH); NCCL_NVLS_ENABLE defaults to 0 and
// NCCL_GRAPH_MIXING_SUPPORT to 0, as the example sets them.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../examples/beyond/multi_gpu_solve/kernels/solve.cu"

#define CK(x)                                                                                                \
  do {                                                                                                       \
    cudaError_t e_ = (x);                                                                                    \
    if (e_ != cudaSuccess) {                                                                                 \
      fprintf(stderr, "%s:%d %s -> %s (%d)\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_), (int)e_);      \
      printf("FAIL %s: CUDA error %s at line %d\n", g_variant, cudaGetErrorName(e_), __LINE__);              \
      exit(2);                                                                                               \
    }                                                                                                        \
  } while (0)
#define NK(x)                                                                                                \
  do {                                                                                                       \
    int r_ = (x);                                                                                            \
    if (r_ != 0) {                                                                                           \
      fprintf(stderr, "%s:%d %s -> NCCL %d (%s)\n", __FILE__, __LINE__, #x, r_, nccl.error_string(r_));    \
      printf("FAIL %s: NCCL error %d (%s) at line %d\n", g_variant, r_, nccl.error_string(r_), __LINE__);    \
      exit(2);                                                                                               \
    }                                                                                                        \
  } while (0)

static const char* g_variant = "?";

// ---------------------------------------------------------------------------------------------
// NCCL, loaded at run time. The few declarations used, with nccl.h's values (stable ABI).
typedef struct ncclComm* ncclComm_t;
constexpr int kNcclDouble = 8;  // ncclDouble (ncclFloat64)
constexpr int kNcclSum = 0;     // ncclSum

struct Nccl {
  int (*get_version)(int*) = nullptr;
  int (*comm_init_all)(ncclComm_t*, int, const int*) = nullptr;
  int (*comm_destroy)(ncclComm_t) = nullptr;
  int (*group_start)() = nullptr;
  int (*group_end)() = nullptr;
  int (*all_reduce)(const void*, void*, size_t, int, int, ncclComm_t, cudaStream_t) = nullptr;
  const char* (*get_error_string)(int) = nullptr;
  const char* error_string(int r) const { return get_error_string ? get_error_string(r) : "?"; }
};
static Nccl nccl;

template <typename F>
static void symbol(void* lib, const char* name, F& out) {
  void* found = dlsym(lib, name);
  if (!found) {
    printf("FAIL %s: %s not found in NCCL\n", g_variant, name);
    exit(2);
  }
  out = reinterpret_cast<F>(found);
}

// Loads NCCL and prints its version (stderr). The environment is set first, before NCCL reads it.
static void load_nccl() {
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  setenv("NCCL_GRAPH_MIXING_SUPPORT", "0", 0);
  const char* path = getenv("REPRO_NCCL_LIB");
  if (!path || !*path) path = "libnccl.so.2";
  void* lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    printf("FAIL %s: cannot load NCCL (%s): %s\n", g_variant, path, dlerror());
    exit(2);
  }
  symbol(lib, "ncclGetVersion", nccl.get_version);
  symbol(lib, "ncclCommInitAll", nccl.comm_init_all);
  symbol(lib, "ncclCommDestroy", nccl.comm_destroy);
  symbol(lib, "ncclGroupStart", nccl.group_start);
  symbol(lib, "ncclGroupEnd", nccl.group_end);
  symbol(lib, "ncclAllReduce", nccl.all_reduce);
  symbol(lib, "ncclGetErrorString", nccl.get_error_string);
  int version = 0;
  NK(nccl.get_version(&version));
  fprintf(stderr, "NCCL %d (%s), NCCL_NVLS_ENABLE=%s NCCL_GRAPH_MIXING_SUPPORT=%s\n", version, path,
          getenv("NCCL_NVLS_ENABLE"), getenv("NCCL_GRAPH_MIXING_SUPPORT"));
}

// ---------------------------------------------------------------------------------------------
// The problem (examples/beyond/multi_gpu_solve/src/problem.rs, Config::quick), and its CPU solve.
constexpr uint32_t kRows = 1u << 15;  // rows per GPU
constexpr uint32_t kFeatures = 8;
constexpr double kRate = 1.5, kTolerance = 1e-10;
constexpr uint32_t kMaxPasses = 200;
constexpr uint32_t kBlock = SOLVE_WARPS_PER_BLOCK * 32;

static double uniform(uint64_t* state) {
  *state += 0x9E3779B97F4A7C15ull;
  uint64_t z = *state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) / (double)(1ull << 52) - 1.0;
}

static std::vector<double> solution() {
  std::vector<double> w(kFeatures);
  for (uint32_t j = 0; j < kFeatures; ++j) w[j] = (j + 1) / (double)kFeatures - (j % 2 == 1 ? 0.5 : 0.0);
  return w;
}

struct Shard {
  std::vector<double> x, y;  // x column-major: x[j * rows + i]
};

static Shard make_shard(uint64_t index) {
  Shard s;
  uint64_t state = 0x9E3779B97F4A7C15ull ^ (index * 0xD1B54A32D192ED03ull);
  s.x.resize((size_t)kRows * kFeatures);
  for (double& v : s.x) v = uniform(&state);
  const std::vector<double> w = solution();
  s.y.resize(kRows);
  for (uint32_t i = 0; i < kRows; ++i) {
    double sum = 0.0;
    for (uint32_t j = 0; j < kFeatures; ++j) sum += s.x[(size_t)j * kRows + i] * w[j];
    s.y[i] = sum;
  }
  return s;
}

struct Outcome {
  std::vector<double> w;
  uint32_t passes = 0;
};

static Outcome solve_on_cpu(const std::vector<Shard>& shards) {
  const double total = (double)kRows * shards.size();
  const double step = kRate / total, tol2 = (kTolerance * total) * (kTolerance * total);
  Outcome out;
  out.w.assign(kFeatures, 0.0);
  for (;;) {
    std::vector<double> g(kFeatures, 0.0);
    for (const Shard& s : shards) {
      for (uint32_t i = 0; i < kRows; ++i) {
        double r = 0.0;
        for (uint32_t j = 0; j < kFeatures; ++j) r += s.x[(size_t)j * kRows + i] * out.w[j];
        r -= s.y[i];
        for (uint32_t j = 0; j < kFeatures; ++j) g[j] += r * s.x[(size_t)j * kRows + i];
      }
    }
    double gnorm2 = 0.0;
    for (uint32_t j = 0; j < kFeatures; ++j) {
      out.w[j] -= step * g[j];
      gnorm2 += g[j] * g[j];
    }
    out.passes += 1;
    if (gnorm2 <= tol2 || out.passes >= kMaxPasses) return out;
  }
}

static double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0.0;
  for (size_t i = 0; i < a.size(); ++i) d = std::fmax(d, std::fabs(a[i] - b[i]));
  return d;
}

// ---------------------------------------------------------------------------------------------
// One rank: its device, stream, data, communicator and graph (examples/beyond/multi_gpu_solve/src/gpu.rs).
struct Rank {
  int device = 0;
  cudaStream_t stream = nullptr;
  double *x = nullptr, *y = nullptr, *w = nullptr, *g = nullptr, *gnorm2 = nullptr;
  uint32_t *passes = nullptr, *keep_going = nullptr, *flag = nullptr;  // flag: pinned host memory
  unsigned blocks = 1;
  ncclComm_t comm = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

static std::vector<Rank> make_ranks(int count, const std::vector<Shard>& shards) {
  std::vector<Rank> ranks(count);
  for (int r = 0; r < count; ++r) {
    Rank& k = ranks[r];
    k.device = r;
    CK(cudaSetDevice(r));
    CK(cudaStreamCreateWithFlags(&k.stream, cudaStreamNonBlocking));
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, r));
    const unsigned wanted = (kRows + kBlock - 1) / kBlock;
    k.blocks = wanted < 1u ? 1u : (wanted > 4u * sms ? 4u * sms : wanted);
    CK(cudaMalloc(&k.x, sizeof(double) * kRows * kFeatures));
    CK(cudaMalloc(&k.y, sizeof(double) * kRows));
    CK(cudaMalloc(&k.w, sizeof(double) * kFeatures));
    CK(cudaMalloc(&k.g, sizeof(double) * kFeatures));
    CK(cudaMalloc(&k.gnorm2, sizeof(double)));
    CK(cudaMalloc(&k.passes, sizeof(uint32_t)));
    CK(cudaMalloc(&k.keep_going, sizeof(uint32_t)));
    CK(cudaMallocHost(&k.flag, sizeof(uint32_t)));
    // On the rank's (non-blocking) stream, waited for: plain cudaMemcpy/cudaMemset go to the
    // legacy stream, which that stream is not ordered with.
    if (!shards[r].x.empty()) {
      CK(cudaMemcpyAsync(k.x, shards[r].x.data(), sizeof(double) * kRows * kFeatures, cudaMemcpyHostToDevice,
                         k.stream));
      CK(cudaMemcpyAsync(k.y, shards[r].y.data(), sizeof(double) * kRows, cudaMemcpyHostToDevice, k.stream));
    }
    CK(cudaMemsetAsync(k.w, 0, sizeof(double) * kFeatures, k.stream));
    CK(cudaMemsetAsync(k.g, 0, sizeof(double) * kFeatures, k.stream));
    CK(cudaMemsetAsync(k.gnorm2, 0, sizeof(double), k.stream));
    CK(cudaMemsetAsync(k.passes, 0, sizeof(uint32_t), k.stream));
    CK(cudaMemsetAsync(k.keep_going, 0, sizeof(uint32_t), k.stream));
    CK(cudaStreamSynchronize(k.stream));
  }
  return ranks;
}

static void init_comms(std::vector<Rank>& ranks) {
  std::vector<ncclComm_t> comms(ranks.size());
  std::vector<int> devices(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) devices[r] = ranks[r].device;
  NK(nccl.comm_init_all(comms.data(), (int)ranks.size(), devices.data()));
  for (size_t r = 0; r < ranks.size(); ++r) ranks[r].comm = comms[r];
}

// w = g = 0, passes = 0 on every rank, finished before returning.
static void reset(std::vector<Rank>& ranks) {
  for (Rank& k : ranks) {
    CK(cudaSetDevice(k.device));
    CK(cudaMemsetAsync(k.w, 0, sizeof(double) * kFeatures, k.stream));
    CK(cudaMemsetAsync(k.g, 0, sizeof(double) * kFeatures, k.stream));
    CK(cudaMemsetAsync(k.passes, 0, sizeof(uint32_t), k.stream));
    CK(cudaStreamSynchronize(k.stream));
  }
}

static void queue_gradients(std::vector<Rank>& ranks) {
  for (Rank& k : ranks) {
    CK(cudaSetDevice(k.device));
    solve_partial_gradient<<<k.blocks, kBlock, 0, k.stream>>>(k.x, k.y, k.w, k.g, kRows, kFeatures);
    CK(cudaGetLastError());
  }
}

static void queue_all_reduce(std::vector<Rank>& ranks) {
  NK(nccl.group_start());
  for (Rank& k : ranks) NK(nccl.all_reduce(k.g, k.g, kFeatures, kNcclDouble, kNcclSum, k.comm, k.stream));
  NK(nccl.group_end());
}

static void queue_updates(std::vector<Rank>& ranks) {
  const double total = (double)kRows * ranks.size();
  const double step = kRate / total, tol2 = (kTolerance * total) * (kTolerance * total);
  for (Rank& k : ranks) {
    CK(cudaSetDevice(k.device));
    solve_update<<<1, 32, 0, k.stream>>>(k.w, k.g, k.gnorm2, k.passes, k.keep_going, kFeatures, step, tol2,
                                         kMaxPasses);
    CK(cudaGetLastError());
  }
}

// Every pass queued from the host, the flag copied back and waited for each pass (gpu.rs,
// run_from_host).
static void run_from_host(std::vector<Rank>& ranks, bool with_nccl) {
  reset(ranks);
  for (uint32_t pass = 0; pass < kMaxPasses + 2; ++pass) {
    queue_gradients(ranks);
    if (with_nccl) queue_all_reduce(ranks);
    queue_updates(ranks);
    for (Rank& k : ranks) {
      CK(cudaSetDevice(k.device));
      CK(cudaMemcpyAsync(k.flag, k.keep_going, sizeof(uint32_t), cudaMemcpyDeviceToHost, k.stream));
    }
    CK(cudaSetDevice(ranks[0].device));
    CK(cudaStreamSynchronize(ranks[0].stream));
    if (*ranks[0].flag == 0) break;
  }
  for (Rank& k : ranks) {
    CK(cudaSetDevice(k.device));
    CK(cudaStreamSynchronize(k.stream));
  }
}

// One graph per rank: a WHILE node (its handle 1 at every launch) whose body is captured from
// every rank's stream at once (ThreadLocal captures into the body graphs), as gpu.rs's
// build_graphs does: gradient, the all-reduce (one NCCL group over the capturing streams), step,
// and solve_continue<<<1, 32>>> setting the condition.
static void build_graphs(std::vector<Rank>& ranks, bool with_nccl) {
  std::vector<cudaGraphConditionalHandle> handles(ranks.size());
  std::vector<cudaGraph_t> bodies(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    Rank& k = ranks[r];
    CK(cudaSetDevice(k.device));
    CK(cudaGraphCreate(&k.graph, 0));
    CK(cudaGraphConditionalHandleCreate(&handles[r], k.graph, 1, cudaGraphCondAssignDefault));
    cudaGraphNodeParams params = {};
    params.type = cudaGraphNodeTypeConditional;
    params.conditional.handle = handles[r];
    params.conditional.type = cudaGraphCondTypeWhile;
    params.conditional.size = 1;
    cudaGraphNode_t node;
    CK(cudaGraphAddNode(&node, k.graph, nullptr, nullptr, 0, &params));
    bodies[r] = params.conditional.phGraph_out[0];
    CK(cudaStreamBeginCaptureToGraph(k.stream, bodies[r], nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
  }
  queue_gradients(ranks);
  if (with_nccl) queue_all_reduce(ranks);
  queue_updates(ranks);
  for (size_t r = 0; r < ranks.size(); ++r) {
    Rank& k = ranks[r];
    CK(cudaSetDevice(k.device));
    solve_continue<<<1, 32, 0, k.stream>>>(handles[r], k.keep_going);
    CK(cudaGetLastError());
  }
  for (size_t r = 0; r < ranks.size(); ++r) {
    Rank& k = ranks[r];
    CK(cudaSetDevice(k.device));
    cudaGraph_t captured = nullptr;
    CK(cudaStreamEndCapture(k.stream, &captured));
  }
  for (Rank& k : ranks) {
    CK(cudaSetDevice(k.device));
    CK(cudaGraphInstantiate(&k.exec, k.graph, 0));
  }
}

static void run_graphs(std::vector<Rank>& ranks) {
  reset(ranks);
  for (Rank& k : ranks) {
    CK(cudaSetDevice(k.device));
    CK(cudaGraphLaunch(k.exec, k.stream));
  }
  for (Rank& k : ranks) {
    CK(cudaSetDevice(k.device));
    CK(cudaStreamSynchronize(k.stream));
  }
}

static std::vector<Outcome> outcomes(std::vector<Rank>& ranks) {
  std::vector<Outcome> out(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    CK(cudaSetDevice(ranks[r].device));
    out[r].w.resize(kFeatures);
    CK(cudaMemcpyAsync(out[r].w.data(), ranks[r].w, sizeof(double) * kFeatures, cudaMemcpyDeviceToHost,
                       ranks[r].stream));
    CK(cudaMemcpyAsync(&out[r].passes, ranks[r].passes, sizeof(uint32_t), cudaMemcpyDeviceToHost, ranks[r].stream));
    CK(cudaStreamSynchronize(ranks[r].stream));
  }
  return out;
}

// The test's checks (run.rs, `way`): ranks alike, w within 1e-6 of the CPU's and of w*, passes
// within 2 of the CPU's and below the cap. Appends what it found to `what`.
static bool check(const char* way, const std::vector<Outcome>& got, const Outcome& cpu, std::string& what) {
  bool alike = true;
  for (const Outcome& o : got) alike = alike && o.passes == got[0].passes && o.w == got[0].w;
  const double from_cpu = max_difference(got[0].w, cpu.w), from_exact = max_difference(got[0].w, solution());
  const uint32_t p = got[0].passes;
  const bool passes_close = (p > cpu.passes ? p - cpu.passes : cpu.passes - p) <= 2 && p < kMaxPasses;
  const bool ok = alike && from_cpu <= 1e-6 && from_exact <= 1e-6 && passes_close;
  char line[256];
  snprintf(line, sizeof line, "%s%s: %u passes, |w - w_cpu| = %.1e, ranks alike: %s", what.empty() ? "" : "; ", way,
           p, from_cpu, alike ? "yes" : "no");
  what += line;
  return ok;
}

static int finish(bool ok, const std::string& what) {
  printf("%s %s: %s\n", ok ? "PASS" : "FAIL", g_variant, what.c_str());
  return ok ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------
// The synchronizing parts of solve_partial_gradient and solve_update one kernel each, so that a
// report names the part: the block barrier with its shared-memory exchange, the warp reductions
// of doubles by full-mask __shfl_down_sync, and solve_update's one-warp reduction. Each writes a
// value the host checks.
__global__ void piece_barrier(double* out) {  // SOLVE_WARPS_PER_BLOCK * 32 threads a block
  __shared__ double warp_values[SOLVE_WARPS_PER_BLOCK];
  const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_values[warp] = warp + 1.0;
  __syncthreads();
  if (threadIdx.x == 0) {
    double sum = 0.0;
    for (uint32_t k = 0; k < SOLVE_WARPS_PER_BLOCK; ++k) sum += warp_values[k];
    atomicAdd(out, sum);
  }
}

__global__ void piece_shuffle(double* out) {  // any whole number of warps a block
  double v = threadIdx.x % 32 + 1.0;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(out, v);
}

__global__ void piece_one_warp(double* out) {  // launched <<<1, 32>>> as solve_update
  const uint32_t lane = threadIdx.x;
  if (blockIdx.x != 0 || lane >= 32) return;
  double s = lane < kFeatures ? lane + 1.0 : 0.0;
  for (int offset = 16; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffffu, s, offset);
  if (lane == 0) *out += s;
}

static int pieces() {
  int sms = 0;
  CK(cudaSetDevice(0));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const unsigned wanted = (kRows + kBlock - 1) / kBlock, blocks = wanted > 4u * sms ? 4u * sms : wanted;
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  double* out;
  CK(cudaMalloc(&out, 3 * sizeof(double)));
  CK(cudaMemsetAsync(out, 0, 3 * sizeof(double), stream));
  const uint32_t launches = 33;
  for (uint32_t i = 0; i < launches; ++i) {
    piece_barrier<<<blocks, kBlock, 0, stream>>>(out);
    piece_shuffle<<<blocks, kBlock, 0, stream>>>(out + 1);
    piece_one_warp<<<1, 32, 0, stream>>>(out + 2);
  }
  CK(cudaGetLastError());
  double got[3];
  CK(cudaMemcpyAsync(got, out, sizeof got, cudaMemcpyDeviceToHost, stream));
  CK(cudaStreamSynchronize(stream));
  const double warps = SOLVE_WARPS_PER_BLOCK;
  const double want[3] = {launches * blocks * warps * (warps + 1) / 2, launches * blocks * warps * 528.0,
                          launches * kFeatures * (kFeatures + 1) / 2.0};
  const bool ok = got[0] == want[0] && got[1] == want[1] && got[2] == want[2];
  char what[200];
  snprintf(what, sizeof what, "%u launches each of piece_barrier and piece_shuffle (%u blocks of %u) and piece_one_warp "
           "(1 of 32): sums %s", launches, blocks, kBlock, ok ? "right" : "WRONG");
  return finish(ok, what);
}

// ---------------------------------------------------------------------------------------------
// NCCL only: in-place sums of 8 doubles, rank r contributing (r + 1) * (j + 1) + round.
static void fill_for_round(std::vector<Rank>& ranks, uint32_t round) {
  for (size_t r = 0; r < ranks.size(); ++r) {
    double values[kFeatures];
    for (uint32_t j = 0; j < kFeatures; ++j) values[j] = (double)(r + 1) * (j + 1) + round;
    CK(cudaSetDevice(ranks[r].device));
    CK(cudaMemcpyAsync(ranks[r].g, values, sizeof values, cudaMemcpyHostToDevice, ranks[r].stream));
    CK(cudaStreamSynchronize(ranks[r].stream));
  }
}

// Whether every rank holds the sum of fill_for_round(round) after `reductions` all-reduces.
static bool sums_right(std::vector<Rank>& ranks, uint32_t round, uint32_t reductions) {
  const double n = (double)ranks.size();
  bool ok = true;
  for (Rank& k : ranks) {
    double got[kFeatures];
    CK(cudaSetDevice(k.device));
    CK(cudaMemcpyAsync(got, k.g, sizeof got, cudaMemcpyDeviceToHost, k.stream));
    CK(cudaStreamSynchronize(k.stream));
    for (uint32_t j = 0; j < kFeatures; ++j) {
      double want = (n * (n + 1) / 2) * (j + 1) + n * round;  // after one reduction
      for (uint32_t t = 1; t < reductions; ++t) want *= n;    // each further one multiplies by n
      ok = ok && got[j] == want;
    }
  }
  return ok;
}

static int nccl_stream(int gpus) {
  std::vector<Rank> ranks = make_ranks(gpus, std::vector<Shard>(gpus));
  init_comms(ranks);
  bool ok = true;
  const uint32_t rounds = 100;
  for (uint32_t round = 0; round < rounds; ++round) {
    fill_for_round(ranks, round);
    queue_all_reduce(ranks);
    for (Rank& k : ranks) {
      CK(cudaSetDevice(k.device));
      CK(cudaStreamSynchronize(k.stream));
    }
    ok = ok && sums_right(ranks, round, 1);
  }
  char what[128];
  snprintf(what, sizeof what, "%d rank(s), %u eager all-reduces of %u doubles, sums %s", gpus, rounds, kFeatures,
           ok ? "right" : "WRONG");
  return finish(ok, what);
}

static int nccl_graph(int gpus) {
  std::vector<Rank> ranks = make_ranks(gpus, std::vector<Shard>(gpus));
  init_comms(ranks);
  fill_for_round(ranks, 0);
  queue_all_reduce(ranks);  // NCCL connects the ranks at a communicator's first collective: not captured
  for (Rank& k : ranks) {
    CK(cudaSetDevice(k.device));
    CK(cudaStreamSynchronize(k.stream));
  }
  bool ok = sums_right(ranks, 0, 1);
  const uint32_t per_graph = 2;  // sums of n^2 per element stay exact; 33 launches of 2 reductions
  const uint32_t captured = 33;
  std::vector<cudaGraph_t> graphs(ranks.size());
  std::vector<cudaGraphExec_t> execs(ranks.size());
  for (Rank& k : ranks) {
    CK(cudaSetDevice(k.device));
    CK(cudaStreamBeginCapture(k.stream, cudaStreamCaptureModeThreadLocal));
  }
  for (uint32_t t = 0; t < per_graph; ++t) queue_all_reduce(ranks);
  for (size_t r = 0; r < ranks.size(); ++r) {
    CK(cudaSetDevice(ranks[r].device));
    CK(cudaStreamEndCapture(ranks[r].stream, &graphs[r]));
    CK(cudaGraphInstantiate(&execs[r], graphs[r], 0));
  }
  for (uint32_t round = 1; round <= captured; ++round) {
    fill_for_round(ranks, round);
    for (size_t r = 0; r < ranks.size(); ++r) {
      CK(cudaSetDevice(ranks[r].device));
      CK(cudaGraphLaunch(execs[r], ranks[r].stream));
    }
    for (Rank& k : ranks) {
      CK(cudaSetDevice(k.device));
      CK(cudaStreamSynchronize(k.stream));
    }
    ok = ok && sums_right(ranks, round, per_graph);
  }
  char what[160];
  snprintf(what, sizeof what, "%d rank(s), 1 eager all-reduce, then %u launches of a captured graph of %u, sums %s",
           gpus, captured, per_graph, ok ? "right" : "WRONG");
  return finish(ok, what);
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s kernels-stream|kernels-while|pieces|nccl-stream|nccl-graph|solve [GPUS]\n", argv[0]);
    return 2;
  }
  g_variant = argv[1];
  const std::string variant = argv[1];
  const int gpus = argc == 3 ? atoi(argv[2]) : 1;
  int count = 0;
  CK(cudaGetDeviceCount(&count));
  if (gpus < 1 || gpus > count) {
    printf("FAIL %s: %d GPU(s) asked, %d present\n", g_variant, gpus, count);
    return 2;
  }
  const bool kernels_only = variant == "kernels-stream" || variant == "kernels-while";
  const bool nccl_only = variant == "nccl-stream" || variant == "nccl-graph";
  if (!kernels_only && !nccl_only && variant != "pieces" && variant != "solve") {
    fprintf(stderr, "unknown variant %s\n", argv[1]);
    return 2;
  }
  if (variant == "pieces") return pieces();
  if (!kernels_only) load_nccl();
  if (variant == "nccl-stream") return nccl_stream(gpus);
  if (variant == "nccl-graph") return nccl_graph(gpus);
  const int ranks_wanted = kernels_only ? 1 : gpus;
  std::vector<Shard> shards;
  for (int r = 0; r < ranks_wanted; ++r) shards.push_back(make_shard(r));
  const Outcome cpu = solve_on_cpu(shards);
  std::vector<Rank> ranks = make_ranks(ranks_wanted, shards);
  const bool with_nccl = !kernels_only;
  if (with_nccl) init_comms(ranks);
  std::string what;
  bool ok = true;
  if (variant != "kernels-while") {
    for (int repeat = 0; repeat < 2; ++repeat) run_from_host(ranks, with_nccl);
    ok = check("from the host", outcomes(ranks), cpu, what) && ok;
  }
  if (variant != "kernels-stream") {
    build_graphs(ranks, with_nccl);
    for (int launch = 0; launch < 3; ++launch) run_graphs(ranks);
    ok = check("WHILE graph", outcomes(ranks), cpu, what) && ok;
  }
  char ranks_note[64];
  snprintf(ranks_note, sizeof ranks_note, " (%d rank(s), CPU %u passes)", ranks_wanted, cpu.passes);
  return finish(ok, what + ranks_note);
}
