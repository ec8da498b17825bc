// Plain CUDA C++ reproducer, with no Rust and no crate code, of conditional graphs failing
// under compute-sanitizer memcheck while several memcheck processes share the GPU: a launch
// ends in cudaErrorIllegalAddress (700) that memcheck does not attribute to any access, or a
// body does not run. The same program passes alone under memcheck and, 8 processes at once,
// without a sanitizer. Run the variants on a GPU machine: `bash scripts/run-standalone repro-conditional-memcheck`.
//
// One graph: a one-thread kernel reads a value from device memory and sets the condition of
// a 4-way SWITCH from it; body i adds 1 to counter i. The host launches it for values
// 0..MAX_VALUE, ROUNDS times, each launch followed by a stream synchronize, and compares the
// counters with a CPU count (a value past the last body runs none: CUDA's rule).
//
// Usage: conditional_memcheck_shared MAX_VALUE ROUNDS   (e.g. 6 20)
// Exit status 0 when the counters are right, 1 when not, 2 on a CUDA error.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s -> %s (%d)\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_), (int)e_); exit(2); } } while (0)

constexpr unsigned kBodies = 4;

__global__ void set_condition(cudaGraphConditionalHandle handle, const unsigned* value) {
  if (threadIdx.x == 0) cudaGraphSetConditional(handle, *value);
}

__global__ void count(unsigned* counters, unsigned body) {
  if (threadIdx.x == 0) atomicAdd(&counters[body], 1u);
}

static cudaKernelNodeParams one_thread(const void* func, void** args) {
  cudaKernelNodeParams params = {};
  params.func = const_cast<void*>(func);
  params.gridDim = dim3(1);
  params.blockDim = dim3(1);
  params.kernelParams = args;
  return params;
}

int main(int argc, char** argv) {
  if (argc != 3) { fprintf(stderr, "usage: %s MAX_VALUE ROUNDS\n", argv[0]); return 2; }
  const unsigned max_value = atoi(argv[1]), rounds = atoi(argv[2]);
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  unsigned *value, *counters;
  CK(cudaMalloc(&value, sizeof(unsigned)));
  CK(cudaMalloc(&counters, sizeof(unsigned) * kBodies));
  CK(cudaMemset(counters, 0, sizeof(unsigned) * kBodies));

  cudaGraph_t graph;
  CK(cudaGraphCreate(&graph, 0));
  cudaGraphConditionalHandle handle;
  CK(cudaGraphConditionalHandleCreate(&handle, graph, 0, 0));
  void* set_args[] = {&handle, &value};
  cudaKernelNodeParams set_params = one_thread(reinterpret_cast<const void*>(set_condition), set_args);
  cudaGraphNode_t set_node;
  CK(cudaGraphAddKernelNode(&set_node, graph, nullptr, 0, &set_params));
  cudaGraphNodeParams switch_params = {};
  switch_params.type = cudaGraphNodeTypeConditional;
  switch_params.conditional.handle = handle;
  switch_params.conditional.type = cudaGraphCondTypeSwitch;
  switch_params.conditional.size = kBodies;
  cudaGraphNode_t switch_node;
  CK(cudaGraphAddNode(&switch_node, graph, &set_node, nullptr, 1, &switch_params));
  unsigned body_index[kBodies];
  for (unsigned b = 0; b < kBodies; ++b) {
    body_index[b] = b;
    void* args[] = {&counters, &body_index[b]};
    cudaKernelNodeParams params = one_thread(reinterpret_cast<const void*>(count), args);
    cudaGraphNode_t node;
    CK(cudaGraphAddKernelNode(&node, switch_params.conditional.phGraph_out[b], nullptr, 0, &params));
  }
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, graph, 0));

  unsigned want[kBodies] = {};
  for (unsigned round = 0; round < rounds; ++round) {
    for (unsigned v = 0; v <= max_value; ++v) {
      CK(cudaMemcpyAsync(value, &v, sizeof v, cudaMemcpyHostToDevice, stream));  // v lives until the sync
      CK(cudaGraphLaunch(exec, stream));
      CK(cudaStreamSynchronize(stream));
      if (v < kBodies) ++want[v];
    }
  }
  unsigned got[kBodies];
  CK(cudaMemcpy(got, counters, sizeof got, cudaMemcpyDeviceToHost));
  bool wrong = false;
  for (unsigned b = 0; b < kBodies; ++b) wrong = wrong || got[b] != want[b];
  printf("%s: bodies ran %u %u %u %u times, want %u %u %u %u\n", wrong ? "FAIL" : "PASS", got[0], got[1], got[2],
         got[3], want[0], want[1], want[2], want[3]);
  return wrong ? 1 : 0;
}
