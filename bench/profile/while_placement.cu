// What sets the cost of a WHILE step, beside the body: the exec, not the stream. Plain CUDA
// C++, no Rust. Run it on a GPU machine with `bash scripts/run-standalone profile-while-placement`.
//
// One graph: a WHILE node whose only body node is a one-warp kernel that counts the step and
// keeps the loop going until STEPS steps ran. Each figure is the median over 5 timed launches
// (after one warm-up) of the launch's CUDA-event time over its steps, in µs per step.
//  1. streams: one exec launched on several streams (new non-blocking streams, one of the
//     highest priority, the legacy stream);
//  2. made and destroyed: EXECS execs of the same graph, each destroyed after it was timed;
//  3. made and kept: EXECS execs, all alive at once, each timed twice (in two passes);
//  4. setting the condition: on some of those kept execs, the body sets the condition every
//     step or only on the last one (the handle's default, 1, holds in between: CUDA applies it
//     at each launch). The mode is read from device memory, so one exec runs both.
// Exit status 0 when every loop ran its STEPS steps, 2 on a CUDA error or a wrong step count.
//
// Usage: while_placement [EXECS] (default 24)
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_)); exit(2);} } while (0)
#include "while_graph.h"

constexpr uint32_t STEPS = 2000;

// state[0]: steps so far; state[1]: 0 = set the condition every step, 1 = only on the last.
__global__ void count_step(cudaGraphConditionalHandle loop, uint32_t* state) {
  if (threadIdx.x != 0) return;
  const uint32_t steps = state[0] + 1;
  state[0] = steps;
  const bool go = steps < STEPS;
  if (state[1] == 0 || !go) cudaGraphSetConditional(loop, go);
}

struct Loop {
  cudaGraphExec_t exec;
};

static Loop make_loop(uint32_t* state, cudaStream_t upload_to) {
  WhileGraph w = make_while_graph();
  void* args[] = {&w.handle, &state};
  add_body_kernel(w.body, (void*)count_step, 32, args);
  cudaGraph_t graph = w.graph;
  Loop loop; CK(cudaGraphInstantiate(&loop.exec, graph, 0)); CK(cudaGraphUpload(loop.exec, upload_to));
  CK(cudaGraphDestroy(graph));
  return loop;
}

static double us_per_step(const Loop& loop, uint32_t* state, uint32_t mode, cudaStream_t stream) {
  cudaEvent_t t0, t1; CK(cudaEventCreate(&t0)); CK(cudaEventCreate(&t1));
  const uint32_t init[2] = {0, mode};
  std::vector<double> times;
  for (int run = 0; run < 6; ++run) {
    CK(cudaMemcpyAsync(state, init, sizeof init, cudaMemcpyHostToDevice, stream));
    CK(cudaEventRecord(t0, stream)); CK(cudaGraphLaunch(loop.exec, stream)); CK(cudaEventRecord(t1, stream));
    CK(cudaStreamSynchronize(stream));
    float ms; CK(cudaEventElapsedTime(&ms, t0, t1));
    uint32_t steps; CK(cudaMemcpy(&steps, state, 4, cudaMemcpyDeviceToHost));
    if (steps != STEPS) { fprintf(stderr, "a loop ran %u steps, not %u\n", steps, STEPS); exit(2); }
    if (run > 0) times.push_back(ms * 1e3 / STEPS);
  }
  CK(cudaEventDestroy(t1)); CK(cudaEventDestroy(t0));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

static void print_spread(const char* label, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  printf("%s: min %.3f, median %.3f, max %.3f\n", label, v.front(), v[v.size() / 2], v.back());
}

int main(int argc, char** argv) {
  const int execs = argc > 1 ? atoi(argv[1]) : 24;
  if (execs < 4) { fprintf(stderr, "usage: while_placement [EXECS >= 4]\n"); return 2; }
  uint32_t* state; CK(cudaMalloc(&state, 8));
  int lowest, highest; CK(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
  std::vector<cudaStream_t> streams(4);
  for (int i = 0; i < 3; ++i) CK(cudaStreamCreateWithPriority(&streams[i], cudaStreamNonBlocking, i == 2 ? highest : lowest));
  streams[3] = 0;

  printf("1. one exec on four streams (new, new, highest priority, legacy):");
  Loop one = make_loop(state, streams[0]);
  std::vector<double> by_stream;
  for (cudaStream_t s : streams) { by_stream.push_back(us_per_step(one, state, 0, s)); printf(" %.3f", by_stream.back()); }
  printf("\n");
  CK(cudaGraphExecDestroy(one.exec));

  printf("2. %d execs, each destroyed after it was timed:", execs);
  std::vector<double> destroyed;
  for (int i = 0; i < execs; ++i) {
    Loop loop = make_loop(state, streams[0]);
    destroyed.push_back(us_per_step(loop, state, 0, streams[0]));
    printf(" %.3f", destroyed.back());
    CK(cudaGraphExecDestroy(loop.exec));
  }
  printf("\n");
  print_spread("   spread", destroyed);

  printf("3. %d execs kept alive together, first pass:", execs);
  std::vector<Loop> kept;
  std::vector<double> first, second;
  for (int i = 0; i < execs; ++i) {
    kept.push_back(make_loop(state, streams[0]));
    first.push_back(us_per_step(kept.back(), state, 0, streams[0]));
    printf(" %.3f", first.back());
  }
  printf("\n   second pass:");
  double moved = 0;
  for (int i = 0; i < execs; ++i) {
    second.push_back(us_per_step(kept[i], state, 0, streams[0]));
    moved = std::max(moved, std::abs(second[i] - first[i]));
    printf(" %.3f", second.back());
  }
  printf("\n");
  print_spread("   spread (first pass)", first);
  printf("   largest change of one exec between passes: %.3f\n", moved);

  const int fastest = int(std::min_element(first.begin(), first.end()) - first.begin());
  const int slowest = int(std::max_element(first.begin(), first.end()) - first.begin());
  printf("4. setting the condition every step vs only on the last one, same exec, alternated 3 times:\n");
  for (int which : {0, fastest, slowest}) {
    std::vector<double> every, last;
    for (int round = 0; round < 3; ++round) {
      every.push_back(us_per_step(kept[which], state, 0, streams[0]));
      last.push_back(us_per_step(kept[which], state, 1, streams[0]));
    }
    std::sort(every.begin(), every.end()); std::sort(last.begin(), last.end());
    printf("   exec %2d: every step %.3f, last step only %.3f (medians of 3)\n", which, every[1], last[1]);
  }

  for (Loop& loop : kept) CK(cudaGraphExecDestroy(loop.exec));
  for (int i = 0; i < 3; ++i) CK(cudaStreamDestroy(streams[i]));
  CK(cudaFree(state));
  printf("PASS: every loop ran %u steps\n", STEPS);
  return 0;
}
