// Where the time of a launch goes, measured on the GPU's own clock. Plain CUDA C++, no Rust
// and no crate code: it shows what the hardware and driver cost, apart from anything the
// crates do. Run it on a GPU machine with `bash scripts/run-standalone profile-launch-timeline`.
//
// Nsight Systems cannot make a report on the project's GPU machine (see bench/README.md), so
// every kernel here stamps %globaltimer when it starts and before it exits, and the host
// stamps its own calls with a steady clock. From the stamps:
//   1. graph replay of a 100-node kernel chain: each node's run time and the gap between one
//      node's end and the next node's start;
//   2. a loop of dependent steps driven by a WHILE node and by the host (launch, copy the
//      flag, synchronize): the step kernel's run time and the gap between steps;
//   3. a graph of W independent nodes (W = 1 and 64), once per iteration, launched by the host
//      with a sync, by a scheduler kernel that fire-and-forgets it and tail-relaunches itself,
//      and by a scheduler that fire-and-forgets 16 copies in turn and spins on each one's
//      nodes: when the first and last node start, and what separates iterations.
// Every figure is a median over the iterations after the first 10. Exit status 0 when every
// check held (every node and step ran, no device-side launch refused), 1 when not, 2 on a
// CUDA error.
//
// Usage: launch_timeline [ITERS]   (default 1000)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s -> %s (%d)\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_), (int)e_); exit(2); } } while (0)
#include "while_graph.h"

typedef unsigned long long u64;
struct Stamp { u64 start, end; };

constexpr unsigned kCopies = 16;               // graphs a batched scheduler launches in turn
constexpr u64 kSpinTimeoutNs = 2000000000ull;  // a spin that waits longer records a timeout
constexpr unsigned kSkip = 10;                 // iterations left out of every median

__device__ __forceinline__ u64 now() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Keeps the first failed device-side call's status.
__device__ void record(int* error, cudaError_t status) {
  if (status != cudaSuccess) atomicCAS(error, 0, (int)status);
}

// How finely %globaltimer ticks: the smallest step between two different readings, the
// number of steps and the time they span.
__global__ void timer_resolution(u64* out) {
  u64 first = now(), prev = first, min_step = ~0ull, steps = 0;
  for (int i = 0; i < 200000; ++i) {
    const u64 t = now();
    if (t != prev) { min_step = min(min_step, t - prev); ++steps; prev = t; }
  }
  out[0] = min_step; out[1] = steps; out[2] = prev - first;
}

// One node: stamps its start and end into the next free slot, then counts itself in *done.
__global__ void stamp_node(Stamp* stamps, unsigned* cursor, unsigned capacity, unsigned* done) {
  if (threadIdx.x != 0) return;
  const u64 start = now();
  const unsigned slot = atomicAdd(cursor, 1u);
  if (slot < capacity) { stamps[slot].start = start; stamps[slot].end = now(); }
  __threadfence();
  atomicAdd(done, 1u);
}

// A WHILE body: one stamped step; goes on while fewer than `steps` ran.
__global__ void while_step(cudaGraphConditionalHandle handle, Stamp* stamps, unsigned* cursor, unsigned steps) {
  if (threadIdx.x != 0) return;
  const u64 start = now();
  const unsigned slot = atomicAdd(cursor, 1u);
  cudaGraphSetConditional(handle, slot + 1 < steps ? 1u : 0u);
  if (slot < steps) { stamps[slot].start = start; stamps[slot].end = now(); }
}

// The host loop's step: the same, with the decision stored for the host to read.
__global__ void host_step(Stamp* stamps, unsigned* cursor, unsigned steps, unsigned* go_on) {
  if (threadIdx.x != 0) return;
  const u64 start = now();
  const unsigned slot = atomicAdd(cursor, 1u);
  *go_on = slot + 1 < steps ? 1u : 0u;
  if (slot < steps) { stamps[slot].start = start; stamps[slot].end = now(); }
}

// One iteration per run of its own graph: fire-and-forgets `work`, stamps when it started and
// when the launch call returned, then tail-relaunches itself until `iters` ran.
__global__ void ff_scheduler(cudaGraphExec_t work, unsigned iters, unsigned* step, Stamp* sched, int* error) {
  const u64 start = now();
  const unsigned s = *step;
  const cudaError_t status = cudaGraphLaunch(work, cudaStreamGraphFireAndForget);
  sched[s].start = start; sched[s].end = now();
  record(error, status);
  *step = s + 1;
  if (status == cudaSuccess && s + 1 < iters) record(error, cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch));
}

// `kCopies` iterations per run: fire-and-forgets works[j] and spins until its `width` nodes
// counted themselves in *done, for each j in turn; then tail-relaunches itself.
__global__ void ff_batch_scheduler(const cudaGraphExec_t* works, unsigned iters, unsigned width, unsigned* step,
                                   const unsigned* done, Stamp* sched, int* error) {
  unsigned s = *step;
  for (unsigned j = 0; j < kCopies && s < iters; ++j, ++s) {
    const u64 start = now();
    const cudaError_t status = cudaGraphLaunch(works[j], cudaStreamGraphFireAndForget);
    sched[s].start = start; sched[s].end = now();
    if (status != cudaSuccess) { record(error, status); *step = s; return; }
    while (*(volatile const unsigned*)done < width * (s + 1)) {
      if (now() - start > kSpinTimeoutNs) { record(error, cudaErrorTimeout); *step = s; return; }
    }
  }
  *step = s;
  if (s < iters) record(error, cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch));
}

// ---------------------------------------------------------------------------------------------
// Host side

static double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double us(u64 later, u64 earlier) { return (double)(long long)(later - earlier) * 1e-3; }

static double host_us(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

struct Buffers {
  Stamp* stamps = nullptr;
  Stamp* sched = nullptr;
  unsigned* cursor = nullptr;  // [0] cursor, [1] done, [2] step, [3] go_on
  int* error = nullptr;
  unsigned capacity = 0;
  unsigned* pinned = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t begin = nullptr, end = nullptr;
};

static void reset(Buffers& b) {
  CK(cudaMemsetAsync(b.cursor, 0, 4 * sizeof(unsigned), b.stream));
  CK(cudaMemsetAsync(b.error, 0, sizeof(int), b.stream));
  CK(cudaMemsetAsync(b.stamps, 0xff, b.capacity * sizeof(Stamp), b.stream));
  CK(cudaStreamSynchronize(b.stream));
}

static std::vector<Stamp> download(const Stamp* device, size_t n) {
  std::vector<Stamp> host(n);
  CK(cudaMemcpy(host.data(), device, n * sizeof(Stamp), cudaMemcpyDeviceToHost));
  return host;
}

static bool counters_hold(Buffers& b, unsigned want_nodes, const char* what) {
  unsigned counters[4];
  int error = 0;
  CK(cudaMemcpy(counters, b.cursor, sizeof counters, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&error, b.error, sizeof error, cudaMemcpyDeviceToHost));
  const bool ok = counters[0] == want_nodes && error == 0;
  if (!ok) fprintf(stderr, "FAIL %s: %u nodes ran (want %u), device error %d\n", what, counters[0], want_nodes, error);
  return ok;
}

static float elapsed_us(Buffers& b, unsigned per) {
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, b.begin, b.end));
  return ms * 1e3f / (float)per;
}

// Instantiates `graph` for device launch and uploads it.
static cudaGraphExec_t device_exec(cudaGraph_t graph, cudaStream_t stream) {
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagDeviceLaunch));
  CK(cudaGraphUpload(exec, stream));
  return exec;
}

static cudaGraph_t one_kernel_graph(const void* kernel, void** args, dim3 block) {
  cudaGraph_t graph;
  CK(cudaGraphCreate(&graph, 0));
  cudaKernelNodeParams p = {};
  p.func = const_cast<void*>(kernel);
  p.gridDim = dim3(1);
  p.blockDim = block;
  p.kernelParams = args;
  cudaGraphNode_t node;
  CK(cudaGraphAddKernelNode(&node, graph, nullptr, 0, &p));
  return graph;
}

static bool profile_timer() {
  u64* out;
  CK(cudaMalloc(&out, 3 * sizeof(u64)));
  timer_resolution<<<1, 1>>>(out);
  CK(cudaGetLastError());
  u64 h[3];
  CK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  CK(cudaFree(out));
  printf("globaltimer: smallest step %llu ns, mean step %.1f ns (%llu steps over %.1f us)\n", h[0],
         h[1] ? (double)h[2] / (double)h[1] : 0.0, h[1], h[2] * 1e-3);
  return h[1] > 0;
}

// A graph of `nodes` one-block stamp_node kernels, each depending on the one before (`chain`)
// or all independent.
static cudaGraph_t stamp_graph(Buffers& b, unsigned nodes, bool chain) {
  cudaGraph_t graph;
  CK(cudaGraphCreate(&graph, 0));
  unsigned* done = b.cursor + 1;
  void* args[] = {&b.stamps, &b.cursor, &b.capacity, &done};
  cudaKernelNodeParams p = {};
  p.func = (void*)stamp_node;
  p.gridDim = dim3(1);
  p.blockDim = dim3(32);
  p.kernelParams = args;
  cudaGraphNode_t prev = nullptr;
  for (unsigned i = 0; i < nodes; ++i) {
    cudaGraphNode_t node;
    const bool after_prev = chain && prev != nullptr;
    CK(cudaGraphAddKernelNode(&node, graph, after_prev ? &prev : nullptr, after_prev ? 1 : 0, &p));
    prev = node;
  }
  return graph;
}

// 1. A chain of `nodes` stamp_node kernels, replayed `reps` times back to back.
static bool profile_replay(Buffers& b, unsigned nodes, unsigned reps) {
  cudaGraph_t graph = stamp_graph(b, nodes, true);
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphUpload(exec, b.stream));
  reset(b);
  CK(cudaEventRecord(b.begin, b.stream));
  for (unsigned r = 0; r < reps; ++r) CK(cudaGraphLaunch(exec, b.stream));
  CK(cudaEventRecord(b.end, b.stream));
  CK(cudaStreamSynchronize(b.stream));
  const bool ok = counters_hold(b, nodes * reps, "replay");
  const std::vector<Stamp> s = download(b.stamps, (size_t)nodes * reps);
  std::vector<double> run, gap, period;
  for (unsigned r = kSkip; r < reps; ++r) {
    for (unsigned i = 0; i < nodes; ++i) {
      const Stamp& n = s[(size_t)r * nodes + i];
      run.push_back(us(n.end, n.start));
      if (i > 0) {
        const Stamp& before = s[(size_t)r * nodes + i - 1];
        gap.push_back(us(n.start, before.end));
        period.push_back(us(n.start, before.start));
      }
    }
  }
  printf("1. replay, %u-node chain, %u launches back to back: %.3f us/node (events); node start to next node "
         "start %.3f us = node runs %.3f us (start to end stamp) + gap %.3f us (end stamp to next start)\n",
         nodes, reps, elapsed_us(b, nodes * reps), median(period), median(run), median(gap));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  return ok;
}

// Prints one loop's step: period between step starts, the step kernel's run time, the gap.
static void print_steps(const char* label, const std::vector<Stamp>& s, unsigned steps, float event_us,
                        const char* extra) {
  std::vector<double> run, gap, period;
  for (unsigned i = kSkip; i < steps; ++i) {
    run.push_back(us(s[i].end, s[i].start));
    gap.push_back(us(s[i].start, s[i - 1].end));
    period.push_back(us(s[i].start, s[i - 1].start));
  }
  printf("   %-34s %.3f us/step (events); step start to next step start %.3f us = step runs %.3f us + gap %.3f us%s\n",
         label, event_us, median(period), median(run), median(gap), extra);
}

// 2. `steps` dependent steps, by a WHILE node and by the host.
static bool profile_loop(Buffers& b, unsigned steps) {
  bool ok = true;
  printf("2. loop of %u dependent steps (one thread per step)\n", steps);
  {
    WhileGraph loop = make_while_graph();
    void* args[] = {&loop.handle, &b.stamps, &b.cursor, &steps};
    add_body_kernel(loop.body, (void*)while_step, 32, args);
    cudaGraph_t graph = loop.graph;
    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, graph, 0));
    CK(cudaGraphUpload(exec, b.stream));
    reset(b);
    CK(cudaEventRecord(b.begin, b.stream));
    CK(cudaGraphLaunch(exec, b.stream));
    CK(cudaEventRecord(b.end, b.stream));
    CK(cudaStreamSynchronize(b.stream));
    ok &= counters_hold(b, steps, "WHILE loop");
    print_steps("WHILE node:", download(b.stamps, steps), steps, elapsed_us(b, steps), "");
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
  }
  {
    reset(b);
    unsigned* go_on = b.cursor + 3;
    std::vector<double> launch_call, wait_call;
    CK(cudaEventRecord(b.begin, b.stream));
    for (unsigned i = 0; i < steps; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      host_step<<<1, 32, 0, b.stream>>>(b.stamps, b.cursor, steps, go_on);
      CK(cudaGetLastError());
      CK(cudaMemcpyAsync(b.pinned, go_on, sizeof(unsigned), cudaMemcpyDeviceToHost, b.stream));
      const auto t1 = std::chrono::steady_clock::now();
      CK(cudaStreamSynchronize(b.stream));
      const auto t2 = std::chrono::steady_clock::now();
      if (i >= kSkip) { launch_call.push_back(host_us(t0, t1)); wait_call.push_back(host_us(t1, t2)); }
      if (*(volatile unsigned*)b.pinned == 0) break;
    }
    CK(cudaEventRecord(b.end, b.stream));
    CK(cudaStreamSynchronize(b.stream));
    ok &= counters_hold(b, steps, "host loop");
    char extra[160];
    snprintf(extra, sizeof extra, "; host: launch + copy calls %.3f us, synchronize %.3f us", median(launch_call),
             median(wait_call));
    print_steps("host (launch, copy flag, sync):", download(b.stamps, steps), steps, elapsed_us(b, steps), extra);
  }
  return ok;
}

// Per-iteration node figures of a width-`width` run: first and last node start, last end.
struct Iteration { u64 first_start, last_start, last_end; };

static std::vector<Iteration> iterations(const std::vector<Stamp>& s, unsigned width, unsigned iters) {
  std::vector<Iteration> out(iters);
  for (unsigned k = 0; k < iters; ++k) {
    Iteration it = {~0ull, 0, 0};
    for (unsigned i = 0; i < width; ++i) {
      const Stamp& n = s[(size_t)k * width + i];
      it.first_start = std::min(it.first_start, n.start);
      it.last_start = std::max(it.last_start, n.start);
      it.last_end = std::max(it.last_end, n.end);
    }
    out[k] = it;
  }
  return out;
}

// 3. A `width`-node graph per iteration: host launch + sync, device fire-and-forget with
// self-relaunch, device fire-and-forget batched with a spin.
static bool profile_width(Buffers& b, unsigned width, unsigned iters) {
  bool ok = true;
  cudaGraph_t graph = stamp_graph(b, width, false);
  unsigned* done = b.cursor + 1;
  cudaGraphExec_t host_exec;
  CK(cudaGraphInstantiate(&host_exec, graph, 0));
  CK(cudaGraphUpload(host_exec, b.stream));
  std::vector<cudaGraphExec_t> copies(kCopies);
  for (auto& c : copies) c = device_exec(graph, b.stream);
  cudaGraphExec_t* copies_dev;
  CK(cudaMalloc(&copies_dev, kCopies * sizeof(cudaGraphExec_t)));
  CK(cudaMemcpy(copies_dev, copies.data(), kCopies * sizeof(cudaGraphExec_t), cudaMemcpyHostToDevice));

  unsigned* step = b.cursor + 2;
  void* ff_args[] = {&copies[0], &iters, &step, &b.sched, &b.error};
  cudaGraph_t ff_graph = one_kernel_graph((const void*)ff_scheduler, ff_args, dim3(1));
  cudaGraphExec_t ff_exec = device_exec(ff_graph, b.stream);
  void* batch_args[] = {&copies_dev, &iters, &width, &step, &done, &b.sched, &b.error};
  cudaGraph_t batch_graph = one_kernel_graph((const void*)ff_batch_scheduler, batch_args, dim3(1));
  cudaGraphExec_t batch_exec = device_exec(batch_graph, b.stream);
  CK(cudaStreamSynchronize(b.stream));

  printf("3. graph of %u independent one-block nodes, one launch per iteration, %u iterations\n", width, iters);
  // Host launch + sync.
  {
    reset(b);
    std::vector<double> launch_call, wait_call;
    CK(cudaEventRecord(b.begin, b.stream));
    for (unsigned k = 0; k < iters; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      CK(cudaGraphLaunch(host_exec, b.stream));
      const auto t1 = std::chrono::steady_clock::now();
      CK(cudaStreamSynchronize(b.stream));
      const auto t2 = std::chrono::steady_clock::now();
      if (k >= kSkip) { launch_call.push_back(host_us(t0, t1)); wait_call.push_back(host_us(t1, t2)); }
    }
    CK(cudaEventRecord(b.end, b.stream));
    CK(cudaStreamSynchronize(b.stream));
    ok &= counters_hold(b, width * iters, "host launch");
    const auto it = iterations(download(b.stamps, (size_t)width * iters), width, iters);
    std::vector<double> spread, runs, turnaround, period;
    for (unsigned k = kSkip; k < iters; ++k) {
      spread.push_back(us(it[k].last_start, it[k].first_start));
      runs.push_back(us(it[k].last_end, it[k].first_start));
      turnaround.push_back(us(it[k].first_start, it[k - 1].last_end));
      period.push_back(us(it[k].first_start, it[k - 1].first_start));
    }
    printf("   host launch + sync:       %.3f us/iter (events); iteration period %.3f us = nodes start over %.3f us, "
           "first start to last end %.3f us; last end to next first start %.3f us; host: cudaGraphLaunch %.3f us, "
           "synchronize %.3f us\n",
           elapsed_us(b, iters), median(period), median(spread), median(runs), median(turnaround),
           median(launch_call), median(wait_call));
  }
  // Device: fire-and-forget + self-relaunch, and batched fire-and-forget with a spin.
  const struct { const char* label; cudaGraphExec_t exec; } device_modes[] = {
      {"device fire-and-forget:   ", ff_exec}, {"device ff batched (spin): ", batch_exec}};
  for (const auto& mode : device_modes) {
    reset(b);
    CK(cudaEventRecord(b.begin, b.stream));
    CK(cudaGraphLaunch(mode.exec, b.stream));
    CK(cudaEventRecord(b.end, b.stream));
    CK(cudaStreamSynchronize(b.stream));
    ok &= counters_hold(b, width * iters, mode.label);
    const auto it = iterations(download(b.stamps, (size_t)width * iters), width, iters);
    const std::vector<Stamp> sched = download(b.sched, iters);
    std::vector<double> call, to_first, spread, runs, end_to_next, period;
    for (unsigned k = kSkip; k + 1 < iters; ++k) {
      call.push_back(us(sched[k].end, sched[k].start));
      to_first.push_back(us(it[k].first_start, sched[k].start));
      spread.push_back(us(it[k].last_start, it[k].first_start));
      runs.push_back(us(it[k].last_end, it[k].first_start));
      end_to_next.push_back(us(sched[k + 1].start, it[k].last_end));
      period.push_back(us(sched[k + 1].start, sched[k].start));
    }
    printf("   %s %.3f us/iter (events); iteration period %.3f us = launch call %.3f us, scheduler start to first "
           "node start %.3f us, nodes start over %.3f us, first start to last end %.3f us, last end to next "
           "launch %.3f us\n",
           mode.label, elapsed_us(b, iters), median(period), median(call), median(to_first), median(spread),
           median(runs), median(end_to_next));
  }
  CK(cudaGraphExecDestroy(batch_exec));
  CK(cudaGraphDestroy(batch_graph));
  CK(cudaGraphExecDestroy(ff_exec));
  CK(cudaGraphDestroy(ff_graph));
  CK(cudaFree(copies_dev));
  for (auto c : copies) CK(cudaGraphExecDestroy(c));
  CK(cudaGraphExecDestroy(host_exec));
  CK(cudaGraphDestroy(graph));
  return ok;
}

int main(int argc, char** argv) {
  const unsigned iters = argc > 1 ? (unsigned)strtoul(argv[1], nullptr, 10) : 1000;
  if (iters <= kSkip + 1 || iters > 100000) {
    fprintf(stderr, "usage: launch_timeline [ITERS]  (ITERS in %u..100000)\n", kSkip + 2);
    return 2;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0;
  CK(cudaDriverGetVersion(&driver));
  printf("device: %s (sm_%d%d, %d SMs), driver API %d\n", prop.name, prop.major, prop.minor,
         prop.multiProcessorCount, driver);

  Buffers b;
  const unsigned chain = 100, reps = 50, widest = 64;
  b.capacity = std::max({chain * reps, iters * widest, iters});
  CK(cudaMalloc(&b.stamps, b.capacity * sizeof(Stamp)));
  CK(cudaMalloc(&b.sched, iters * sizeof(Stamp)));
  CK(cudaMalloc(&b.cursor, 4 * sizeof(unsigned)));
  CK(cudaMalloc(&b.error, sizeof(int)));
  CK(cudaMallocHost(&b.pinned, sizeof(unsigned)));
  CK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
  CK(cudaEventCreate(&b.begin));
  CK(cudaEventCreate(&b.end));

  bool ok = profile_timer();
  ok &= profile_replay(b, chain, reps);
  ok &= profile_loop(b, iters);
  ok &= profile_width(b, 1, iters);
  ok &= profile_width(b, widest, iters);

  CK(cudaEventDestroy(b.end));
  CK(cudaEventDestroy(b.begin));
  CK(cudaStreamDestroy(b.stream));
  CK(cudaFreeHost(b.pinned));
  CK(cudaFree(b.error));
  CK(cudaFree(b.cursor));
  CK(cudaFree(b.sched));
  CK(cudaFree(b.stamps));
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
