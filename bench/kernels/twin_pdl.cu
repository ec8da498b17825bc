// The C++ twin's chains for programmatic dependent launch: a chain of one-thread
// kernel nodes, empty or `*counter += 1`, each after the previous by a plain edge (the plain
// kernels bench_empty, bench_rmw) or by a programmatic one (bench_pdl_empty, bench_pdl_rmw,
// which trigger and wait through cuda_graph_pdl.cuh), added with cudaGraphAddNode and its
// edge data, as a careful C++ programmer writes it. Replayed by twin_chain_replay (twin.cu).
#include <new>

#include "twin.cuh"

namespace {

int build_pdl_chain(TwinSession* s, TwinChain* c, int rmw, int programmatic, int nodes) {
    TWIN_CHECK(cudaGraphCreate(&c->graph, 0));
    const void* func = rmw ? (programmatic ? reinterpret_cast<const void*>(bench_pdl_rmw)
                                           : reinterpret_cast<const void*>(bench_rmw))
                           : (programmatic ? reinterpret_cast<const void*>(bench_pdl_empty)
                                           : reinterpret_cast<const void*>(bench_empty));
    void* args[] = {&s->counter};
    cudaGraphEdgeData edge = {};
    edge.from_port = cudaGraphKernelNodePortProgrammatic;
    edge.type = cudaGraphDependencyTypeProgrammatic;
    cudaGraphNode_t previous = nullptr;
    for (int i = 0; i < nodes; ++i) {
        cudaGraphNodeParams params = one_thread_kernel_node(func, rmw ? args : nullptr);
        const cudaGraphEdgeData* data = previous != nullptr && programmatic ? &edge : nullptr;
        cudaGraphNode_t node = nullptr;
        TWIN_CHECK(cudaGraphAddNode(&node, c->graph, previous ? &previous : nullptr, data, previous ? 1 : 0, &params));
        previous = node;
    }
    return finish_chain(s, c, nodes);
}

}  // namespace

extern "C" {

// A chain of `nodes` empty (`rmw` 0) or `*counter += 1` (`rmw` 1) nodes, joined by plain
// (`programmatic` 0) or programmatic (1) edges, instantiated and uploaded. *out is set on
// success only; on failure the half-built chain is released and the build's failure kept.
int twin_pdl_chain_create(TwinSession* s, int rmw, int programmatic, int nodes, TwinChain** out) {
    *out = nullptr;
    TwinChain* chain = new (std::nothrow) TwinChain();
    if (chain == nullptr) {
        g_failed_call = "new TwinChain";
        return static_cast<int>(cudaErrorMemoryAllocation);
    }
    const int status = build_pdl_chain(s, chain, rmw, programmatic, nodes);
    if (status != 0) {
        const char* failed = g_failed_call;
        twin_chain_destroy(chain);
        g_failed_call = failed;
        return status;
    }
    *out = chain;
    return 0;
}

}  // extern "C"
