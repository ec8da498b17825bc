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
    uint32_t* keep_going = nullptr;  // device, 1 element (host-driven loop)
    uint32_t* keep_going_host = nullptr;  // pinned, 1 element
    uint32_t* steps = nullptr;       // device, 1 element (device schedulers' step count)
    int* device_error = nullptr;     // device, 1 element (first failed device-side launch)
};

struct TwinChain {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    int nodes = 0;
};

// Releases a chain (twin.cu); keeps the first failure.
extern "C" int twin_chain_destroy(TwinChain* c);

