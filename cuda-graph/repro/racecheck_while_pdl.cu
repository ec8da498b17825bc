// Does compute-sanitizer's racecheck survive a WHILE loop whose body has a programmatic edge or
// shared-memory atomics, or the same kernels on a stream? (Output: racecheck_while_pdl.h100.txt)
// Plain CUDA C++, no Rust: examples/beyond/generation_loop's way (d) reduced to two kernels. Run it on
// a GPU machine with `bash scripts/run-standalone repro-racecheck-while-pdl`, which runs each
// variant without a sanitizer and under racecheck and prints one line each.
//
// Variants (argv[1]); each runs STEPS steps of a body `bump -> count` over one block of 256
// threads, 3 launches, and checks every value and the step count:
//   while-plain   a WHILE node, the body's edge a plain one
//   while-pdl     a WHILE node, the body's edge programmatic (bump triggers, count waits)
//   chain-pdl     no WHILE node: STEPS copies of the body, each a programmatic pair, in one graph
//   stream        no graph: STEPS pairs launched on a stream (the kernels' dependency calls no-ops)
//   stream-pdl    no graph: the same, each count launched with programmatic stream serialization
//   while-smem, while-smem-atomic, stream-smem-atomic
//                 as while-plain and stream, with count_smem for count: it exchanges the values
//                 through shared memory behind a barrier and, in the -atomic variants, counts
//                 stale reads with a shared-memory atomicAdd (as generation_loop's gl_pick does)
// Exit status 0 and PASS when every value is right, 1 and FAIL when not, 2 on a CUDA error.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_)); exit(2);} } while (0)
#include "../../bench/profile/while_graph.h"

constexpr unsigned STEPS = 64;
constexpr unsigned THREADS = 256;

// x[i] += 1, then lets the next kernel start.
__global__ void bump(unsigned* x) {
  cudaGridDependencySynchronize();
  x[threadIdx.x] += 1u;
  cudaTriggerProgrammaticLaunchCompletion();
}

// Waits for bump's writes, counts the step, ends the loop after STEPS (when there is one).
__global__ void count(cudaGraphConditionalHandle loop, const unsigned* x, unsigned* steps, unsigned* wrong) {
  cudaGridDependencySynchronize();
  const unsigned step = *steps + 1;
  if (x[threadIdx.x] != step) atomicAdd(wrong, 1u);
  __syncthreads();
  if (threadIdx.x == 0) {
    *steps = step;
    if (loop != 0 && step >= STEPS) cudaGraphSetConditional(loop, 0);
  }
}

// count with shared memory: each thread checks its neighbour's value through a shared array;
// with `atomics`, stale reads are counted by a shared-memory atomicAdd, else by a barrier's OR.
__global__ void count_smem(cudaGraphConditionalHandle loop, const unsigned* x, unsigned* steps, unsigned* wrong,
                           int atomics) {
  __shared__ unsigned s_x[THREADS];
  __shared__ unsigned s_stale;
  if (threadIdx.x == 0) s_stale = 0;
  s_x[threadIdx.x] = x[threadIdx.x];
  const unsigned step = *steps + 1;
  __syncthreads();
  const bool stale = s_x[(threadIdx.x + 1) % THREADS] != step;
  unsigned any_stale;
  if (atomics) {
    if (stale) atomicAdd(&s_stale, 1u);
    __syncthreads();
    any_stale = s_stale;
  } else {
    any_stale = __syncthreads_or(stale);
  }
  if (threadIdx.x == 0) {
    if (any_stale) atomicAdd(wrong, 1u);
    *steps = step;
    if (loop != 0 && step >= STEPS) cudaGraphSetConditional(loop, 0);
  }
}

static int smem_mode = 0;  // 0: count; 1: count_smem; 2: count_smem with atomics

// Adds bump -> count to `graph` after `after` (if any), the edge programmatic when asked.
static cudaGraphNode_t add_pair(cudaGraph_t graph, cudaGraphNode_t after, bool programmatic, void** bump_args,
                                void** count_args) {
  cudaGraphNode_t b = add_body_kernel(graph, (void*)bump, THREADS, bump_args);
  cudaGraphNode_t c = add_body_kernel(graph, smem_mode ? (void*)count_smem : (void*)count, THREADS, count_args);
  cudaGraphEdgeData edge = {};
  if (programmatic) {
    edge.from_port = cudaGraphKernelNodePortProgrammatic;
    edge.type = cudaGraphDependencyTypeProgrammatic;
  }
  CK(cudaGraphAddDependencies(graph, &b, &c, &edge, 1));
  if (after != nullptr) CK(cudaGraphAddDependencies(graph, &after, &b, nullptr, 1));
  return c;
}

int main(int argc, char** argv) {
  const char* variant = argc > 1 ? argv[1] : "";
  smem_mode = !strcmp(variant, "while-smem") ? 1 : !strcmp(variant, "while-smem-atomic") || !strcmp(variant, "stream-smem-atomic") ? 2 : 0;
  const bool in_while = !strcmp(variant, "while-plain") || !strcmp(variant, "while-pdl") || !strncmp(variant, "while-smem", 10);
  const bool on_stream = !strcmp(variant, "stream") || !strcmp(variant, "stream-pdl") || !strcmp(variant, "stream-smem-atomic");
  const bool programmatic = !strcmp(variant, "while-pdl") || !strcmp(variant, "chain-pdl") || !strcmp(variant, "stream-pdl");
  if (!in_while && !on_stream && strcmp(variant, "chain-pdl")) {
    fprintf(stderr, "usage: racecheck_while_pdl while-plain|while-pdl|chain-pdl|stream|stream-pdl|while-smem|"
                    "while-smem-atomic|stream-smem-atomic\n");
    return 2;
  }
  unsigned *x, *steps, *wrong;
  CK(cudaMalloc(&x, THREADS * sizeof(unsigned))); CK(cudaMalloc(&steps, 4)); CK(cudaMalloc(&wrong, 4));
  cudaGraph_t graph = nullptr;
  cudaGraphConditionalHandle handle = 0;
  void* bump_args[] = {&x};
  int atomics = smem_mode == 2;
  void* count_args[] = {&handle, &x, &steps, &wrong, &atomics};
  if (in_while) {
    WhileGraph loop = make_while_graph();
    graph = loop.graph;
    handle = loop.handle;
    add_pair(loop.body, nullptr, programmatic, bump_args, count_args);
  } else if (!on_stream) {
    CK(cudaGraphCreate(&graph, 0));
    cudaGraphNode_t last = nullptr;
    for (unsigned s = 0; s < STEPS; ++s) last = add_pair(graph, last, programmatic, bump_args, count_args);
  }
  cudaGraphExec_t exec = nullptr;
  if (graph != nullptr) CK(cudaGraphInstantiate(&exec, graph, 0));
  cudaStream_t stream; CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaLaunchAttribute serialize = {};
  serialize.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  serialize.val.programmaticStreamSerializationAllowed = programmatic ? 1 : 0;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(1); config.blockDim = dim3(THREADS); config.stream = stream;
  config.attrs = &serialize; config.numAttrs = 1;
  bool ok = true;
  for (int launch = 0; launch < 3; ++launch) {
    CK(cudaMemsetAsync(x, 0, THREADS * sizeof(unsigned), stream));
    CK(cudaMemsetAsync(steps, 0, 4, stream)); CK(cudaMemsetAsync(wrong, 0, 4, stream));
    if (on_stream) {
      for (unsigned step = 0; step < STEPS; ++step) {
        bump<<<1, THREADS, 0, stream>>>(x);
        CK(cudaGetLastError());
        if (smem_mode) {
          count_smem<<<1, THREADS, 0, stream>>>(handle, x, steps, wrong, atomics);
          CK(cudaGetLastError());
        } else {
          CK(cudaLaunchKernelEx(&config, count, handle, (const unsigned*)x, steps, wrong));
        }
      }
    } else {
      CK(cudaGraphLaunch(exec, stream));
    }
    CK(cudaStreamSynchronize(stream));
    unsigned got_steps, got_wrong; std::vector<unsigned> got(THREADS);
    CK(cudaMemcpy(&got_steps, steps, 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(&got_wrong, wrong, 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(got.data(), x, THREADS * sizeof(unsigned), cudaMemcpyDeviceToHost));
    unsigned bad = 0; for (unsigned v : got) bad += v != STEPS;
    if (got_steps != STEPS || got_wrong != 0 || bad != 0) {
      printf("launch %d: %u steps, %u stale reads, %u wrong values\n", launch, got_steps, got_wrong, bad);
      ok = false;
    }
  }
  if (exec != nullptr) { CK(cudaGraphExecDestroy(exec)); CK(cudaGraphDestroy(graph)); }
  CK(cudaStreamDestroy(stream));
  CK(cudaFree(x)); CK(cudaFree(steps)); CK(cudaFree(wrong));
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
