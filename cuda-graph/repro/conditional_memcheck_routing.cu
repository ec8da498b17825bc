// Plain CUDA C++ reproducer, with no Rust and no crate code, of a graph of conditional nodes
// failing under compute-sanitizer memcheck with no other process on the GPU: launched back to
// back, some runs end in cudaErrorIllegalAddress (700) that memcheck attributes to no access.
// The same launches pass without a sanitizer, and pass under memcheck when the host waits after
// each launch. Run it on a GPU machine: `bash scripts/run-standalone repro-conditional-memcheck-routing`.
//
// The graph is the routing graph of examples/cuda_graphs_conditional: each launch routes the
// input at `cursor` through an IF, an IF/ELSE whose "then" body holds a nested IF, and a 4-way
// SWITCH, each condition set by a one-thread kernel from a bit field of the input; each body
// sets its bit in the input's trace; a last kernel advances the cursor. The host launches it
// once per input, ROUNDS times, and compares every trace with a CPU model.
//
// Usage: conditional_memcheck_routing INPUTS ROUNDS [synced] [flat]
//   synced: wait for each launch before the next (default: back to back, one wait per round)
//   flat:   no nested IF (the "then" body only marks)
// Exit status 0 when every trace is right, 1 when not, 2 on a CUDA error.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s -> %s (%d)\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_), (int)e_); exit(2); } } while (0)

__global__ void set_field(cudaGraphConditionalHandle handle, const uint32_t* inputs, const uint32_t* cursor,
                          uint32_t shift, uint32_t mask) {
  if (threadIdx.x == 0) cudaGraphSetConditional(handle, (inputs[*cursor] >> shift) & mask);
}

__global__ void mark(uint32_t* trace, const uint32_t* cursor, uint32_t body) {
  if (threadIdx.x == 0) atomicOr(&trace[*cursor], 1u << body);
}

__global__ void advance(uint32_t* cursor) {
  if (threadIdx.x == 0) *cursor += 1u;
}

struct Device { uint32_t* inputs; uint32_t* cursor; uint32_t* trace; };

static cudaGraphNode_t add_kernel(cudaGraph_t graph, const void* func, void** args,
                                  const std::vector<cudaGraphNode_t>& deps) {
  cudaKernelNodeParams params = {};
  params.func = const_cast<void*>(func);
  params.gridDim = dim3(1);
  params.blockDim = dim3(1);
  params.kernelParams = args;
  cudaGraphNode_t node;
  CK(cudaGraphAddKernelNode(&node, graph, deps.data(), deps.size(), &params));
  return node;
}

// A one-thread kernel that sets `handle` from bits of the current input, then the conditional
// node it feeds; returns the node and writes its body graphs to `bodies`.
static cudaGraphNode_t add_conditional(cudaGraph_t graph, const Device& d, cudaGraphConditionalHandle* handle,
                                       uint32_t* shift_mask, cudaGraphConditionalNodeType type, unsigned size,
                                       const std::vector<cudaGraphNode_t>& deps, cudaGraph_t* bodies,
                                       std::vector<std::vector<void*>>& keep) {
  keep.push_back({handle, const_cast<uint32_t**>(&d.inputs), const_cast<uint32_t**>(&d.cursor), &shift_mask[0], &shift_mask[1]});
  cudaGraphNode_t setter = add_kernel(graph, reinterpret_cast<const void*>(set_field), keep.back().data(), deps);
  cudaGraphNodeParams params = {};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = *handle;
  params.conditional.type = type;
  params.conditional.size = size;
  cudaGraphNode_t node;
  CK(cudaGraphAddNode(&node, graph, &setter, nullptr, 1, &params));
  for (unsigned i = 0; i < size; ++i) bodies[i] = params.conditional.phGraph_out[i];
  return node;
}

static uint32_t expected_trace(uint32_t input, bool flat) {
  uint32_t want = (input & 1) ? 1u : 0u;
  if (input & 2) want |= 2u | ((!flat && (input & 32)) ? 128u : 0u); else want |= 4u;
  const uint32_t which = (input >> 2) & 7;
  if (which < 4) want |= 8u << which;
  return want;
}

int main(int argc, char** argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s INPUTS ROUNDS [synced] [flat]\n", argv[0]); return 2; }
  const unsigned inputs = atoi(argv[1]), rounds = atoi(argv[2]);
  bool synced = false, flat = false;
  for (int i = 3; i < argc; ++i) {
    if (strcmp(argv[i], "synced") == 0) synced = true;
    else if (strcmp(argv[i], "flat") == 0) flat = true;
    else { fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
  }
  if (inputs == 0 || rounds == 0) { fprintf(stderr, "INPUTS and ROUNDS must be at least 1\n"); return 2; }
  std::vector<uint32_t> host_inputs(inputs);
  for (unsigned i = 0; i < inputs; ++i) host_inputs[i] = (i * 2654435761u >> 7) & 63u;  // every path
  Device d;
  CK(cudaMalloc(&d.inputs, inputs * sizeof(uint32_t)));
  CK(cudaMalloc(&d.cursor, sizeof(uint32_t)));
  CK(cudaMalloc(&d.trace, inputs * sizeof(uint32_t)));
  CK(cudaMemcpy(d.inputs, host_inputs.data(), inputs * sizeof(uint32_t), cudaMemcpyHostToDevice));

  cudaGraph_t graph;
  CK(cudaGraphCreate(&graph, 0));
  std::vector<std::vector<void*>> keep;
  keep.reserve(32);
  uint32_t fields[4][2] = {{0, 1}, {1, 1}, {5, 1}, {2, 7}};  // IF, IF/ELSE, nested IF, SWITCH
  uint32_t body_bit[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  auto add_mark = [&](cudaGraph_t g, unsigned bit, const std::vector<cudaGraphNode_t>& deps) {
    keep.push_back({&d.trace, &d.cursor, &body_bit[bit]});
    return add_kernel(g, reinterpret_cast<const void*>(mark), keep.back().data(), deps);
  };
  cudaGraphConditionalHandle if_handle, if_else_handle, nested_handle, switch_handle;
  cudaGraph_t bodies[4];

  CK(cudaGraphConditionalHandleCreate(&if_handle, graph, 0, cudaGraphCondAssignDefault));
  cudaGraphNode_t if_node = add_conditional(graph, d, &if_handle, fields[0], cudaGraphCondTypeIf, 1, {}, bodies, keep);
  add_mark(bodies[0], 0, {});

  CK(cudaGraphConditionalHandleCreate(&if_else_handle, graph, 0, cudaGraphCondAssignDefault));
  cudaGraphNode_t if_else_node =
      add_conditional(graph, d, &if_else_handle, fields[1], cudaGraphCondTypeIf, 2, {}, bodies, keep);
  cudaGraph_t then_body = bodies[0], else_body = bodies[1];
  cudaGraphNode_t mark_then = add_mark(then_body, 1, {});
  add_mark(else_body, 2, {});
  if (!flat) {
    CK(cudaGraphConditionalHandleCreate(&nested_handle, then_body, 0, cudaGraphCondAssignDefault));
    add_conditional(then_body, d, &nested_handle, fields[2], cudaGraphCondTypeIf, 1, {mark_then}, bodies, keep);
    add_mark(bodies[0], 7, {});
  }

  CK(cudaGraphConditionalHandleCreate(&switch_handle, graph, 7, cudaGraphCondAssignDefault));
  cudaGraphNode_t switch_node =
      add_conditional(graph, d, &switch_handle, fields[3], cudaGraphCondTypeSwitch, 4, {}, bodies, keep);
  for (unsigned c = 0; c < 4; ++c) add_mark(bodies[c], 3 + c, {});

  void* advance_args[] = {&d.cursor};
  add_kernel(graph, reinterpret_cast<const void*>(advance), advance_args, {if_node, if_else_node, switch_node});
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, graph, 0));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  std::vector<uint32_t> trace(inputs);
  for (unsigned round = 0; round < rounds; ++round) {
    CK(cudaMemsetAsync(d.cursor, 0, sizeof(uint32_t), stream));
    CK(cudaMemsetAsync(d.trace, 0, inputs * sizeof(uint32_t), stream));
    for (unsigned i = 0; i < inputs; ++i) {
      CK(cudaGraphLaunch(exec, stream));
      if (synced) CK(cudaStreamSynchronize(stream));
    }
    CK(cudaStreamSynchronize(stream));
    uint32_t cursor;
    CK(cudaMemcpy(&cursor, d.cursor, sizeof cursor, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(trace.data(), d.trace, inputs * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    unsigned wrong = 0;
    for (unsigned i = 0; i < inputs; ++i) wrong += trace[i] != expected_trace(host_inputs[i], flat);
    if (cursor != inputs || wrong != 0) {
      printf("FAIL: round %u: cursor %u of %u, %u traces wrong\n", round, cursor, inputs, wrong);
      return 1;
    }
  }
  CK(cudaStreamDestroy(stream));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaFree(d.trace));
  CK(cudaFree(d.cursor));
  CK(cudaFree(d.inputs));
  printf("PASS: %u rounds x %u launches\n", rounds, inputs);
  return 0;
}
