// What the C++ twin's files share (twin.cu, twin_pdl.cu): the session and chain objects the
// Rust side holds as opaque pointers, and the checking macros. Every function returns a
// cudaError_t as int (0 is success) and leaves the failed call's text in g_failed_call.
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>

#include "bench_kernels.cuh"

// The call that failed last on this thread (twin_failed_call() returns it).
extern thread_local const char* g_failed_call;

#define TWIN_CHECK(call)                                  \
    do {                                                  \
        cudaError_t twin_status_ = (call);                \
        if (twin_status_ != cudaSuccess) {                \
            g_failed_call = #call;                        \
            return static_cast<int>(twin_status_);        \
        }                                                 \
    } while (0)

// Calls that must run even after an earlier failure (releasing), keeping the first error.
#define TWIN_RELEASE(status, call)                        \
    do {                                                  \
        cudaError_t twin_status_ = (call);                \
        if (twin_status_ != cudaSuccess && (status) == 0) { \
            g_failed_call = #call;                        \
            (status) = static_cast<int>(twin_status_);    \
        }                                                 \
    } while (0)

struct TwinSession {
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr;
    cudaEvent_t end = nullptr;
    uint32_t* counter = nullptr;     // device, 1 element
    bool counter_shared = false;     // `counter` is the Rust side's (twin_session_share_counter)
    uint32_t* keep_going = nullptr;  // device, 1 element (host-driven loop)
    uint32_t* keep_going_host = nullptr;  // pinned, 1 element
    uint32_t* keep_going_mapped = nullptr;  // mapped pinned host memory, 1 element
    uint32_t* keep_going_mapped_device = nullptr;  // its device address
    uint32_t* steps = nullptr;       // device, 1 element (device schedulers' step count)
    int* device_error = nullptr;     // device, 1 element (first failed device-side launch)
};

struct TwinChain {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    int nodes = 0;
};

// A one-thread (1 block of 1 thread) kernel node's parameters for cudaGraphAddNode.
static inline cudaGraphNodeParams one_thread_kernel_node(const void* func, void** args) {
    cudaGraphNodeParams params = {};
    params.type = cudaGraphNodeTypeKernel;
    params.kernel.func = const_cast<void*>(func);
    params.kernel.gridDim = dim3(1);
    params.kernel.blockDim = dim3(1);
    params.kernel.sharedMemBytes = 0;
    params.kernel.kernelParams = args;
    params.kernel.extra = nullptr;
    return params;
}

// Instantiates and uploads a chain of `nodes` nodes whose graph is built.
static inline int finish_chain(TwinSession* s, TwinChain* c, int nodes) {
    TWIN_CHECK(cudaGraphInstantiate(&c->exec, c->graph, 0));
    TWIN_CHECK(cudaGraphUpload(c->exec, s->stream));
    TWIN_CHECK(cudaStreamSynchronize(s->stream));
    c->nodes = nodes;
    return 0;
}

// Releases a chain (twin.cu); keeps the first failure.
extern "C" int twin_chain_destroy(TwinChain* c);

