// The WHILE graph the WHILE profiles time (while_body, while_placement, while_levers and
// launch_timeline): a conditional handle whose default, 1, CUDA applies at every launch (so the
// body runs at least once and the loop goes on until the body sets the handle to 0), one WHILE
// node, and a body of one kernel node of one block. Include after defining CK(call).
#pragma once
#include <cuda_runtime.h>

struct WhileGraph {
  cudaGraph_t graph;                  // holds the WHILE node; the caller destroys it
  cudaGraphConditionalHandle handle;  // the loop's condition
  cudaGraph_t body;                   // the WHILE node's body, owned by `graph`
};

static WhileGraph make_while_graph() {
  WhileGraph w;
  CK(cudaGraphCreate(&w.graph, 0));
  CK(cudaGraphConditionalHandleCreate(&w.handle, w.graph, 1, cudaGraphCondAssignDefault));
  cudaGraphNodeParams node = {};
  node.type = cudaGraphNodeTypeConditional;
  node.conditional.handle = w.handle;
  node.conditional.type = cudaGraphCondTypeWhile;
  node.conditional.size = 1;
  cudaGraphNode_t loop;
  CK(cudaGraphAddNode(&loop, w.graph, nullptr, nullptr, 0, &node));
  w.body = node.conditional.phGraph_out[0];
  return w;
}

// Adds `kernel`, one block of `threads`, with parameters `args`, as a node of `body`: after
// `after` when given, joined by a programmatic edge when `programmatic`.
static cudaGraphNode_t add_body_kernel(cudaGraph_t body, const void* kernel, unsigned threads, void** args,
                                       cudaGraphNode_t after = nullptr, bool programmatic = false) {
  cudaGraphNodeParams params = {};
  params.type = cudaGraphNodeTypeKernel;
  params.kernel.func = const_cast<void*>(kernel);
  params.kernel.gridDim = dim3(1);
  params.kernel.blockDim = dim3(threads);
  params.kernel.kernelParams = args;
  cudaGraphEdgeData edge = {};
  if (programmatic) {
    edge.from_port = cudaGraphKernelNodePortProgrammatic;
    edge.type = cudaGraphDependencyTypeProgrammatic;
  }
  cudaGraphNode_t node;
  CK(cudaGraphAddNode(&node, body, after ? &after : nullptr, after ? &edge : nullptr, after ? 1 : 0, &params));
  return node;
}
