// The C++ twin: the same measured work as the Rust path, written as a careful C++ programmer
// would write it against the CUDA runtime API, with every call checked. Compiled by
// cuda-build with the kernels, linked into the benchmark binary, and called from Rust in the
// same process on the same GPU, interleaved with the Rust path (see src/harness.rs).
//
// Each measuring function does one sample and returns its time through an out-parameter,
// plus the counter the kernels left, which the Rust side checks. Every function returns a
// cudaError_t (0 is success); twin_failed_call() names the call that failed.
//
// Kernels are launched with cudaLaunchKernel, the call the Rust path makes, so that the
// ratio Rust/C++ isolates what the safe API adds. Host-side costs (instantiate, update) are
// timed with std::chrono::steady_clock, device-side ones with events around the work.
#include <chrono>
#include <new>
#include <stdint.h>

#include "bench_kernels.cuh"

namespace {

thread_local const char* g_failed_call = "";

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

double elapsed_us(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

struct TwinSession {
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr;
    cudaEvent_t end = nullptr;
    uint32_t* counter = nullptr;     // device, 1 element
    uint32_t* keep_going = nullptr;  // device, 1 element (host-driven loop)
    uint32_t* keep_going_host = nullptr;  // pinned, 1 element
};

struct TwinChain {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    int nodes = 0;
};

struct TwinWhile {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    int steps = 0;
};

namespace {

// Queues counter = 0 and records the start event: the untimed reset, then the timed region.
int begin_sample(TwinSession* s) {
    TWIN_CHECK(cudaMemsetAsync(s->counter, 0, sizeof(uint32_t), s->stream));
    TWIN_CHECK(cudaEventRecord(s->start, s->stream));
    return 0;
}

// Records the end event, waits, and returns the milliseconds between the events and the counter.
int end_sample(TwinSession* s, float* ms, uint32_t* counter_out) {
    TWIN_CHECK(cudaEventRecord(s->end, s->stream));
    TWIN_CHECK(cudaEventSynchronize(s->end));
    TWIN_CHECK(cudaEventElapsedTime(ms, s->start, s->end));
    if (counter_out != nullptr) {
        TWIN_CHECK(cudaMemcpyAsync(counter_out, s->counter, sizeof(uint32_t), cudaMemcpyDeviceToHost, s->stream));
        TWIN_CHECK(cudaStreamSynchronize(s->stream));
    }
    return 0;
}

// Nodes are added with cudaGraphAddKernelNode (node_api 0), as hand-written C++ usually does,
// or with the generic cudaGraphAddNode (node_api 1), as the Rust crate does: the bench compares
// both, to see whether the node API changes what an exec update costs.
int build_chain(TwinSession* s, TwinChain* c, int nodes, uint32_t value, int node_api) {
    TWIN_CHECK(cudaGraphCreate(&c->graph, 0));
    cudaGraphNode_t previous = nullptr;
    for (int i = 0; i < nodes; ++i) {
        void* args[] = {&s->counter, &value};
        cudaKernelNodeParams params = {};
        params.func = reinterpret_cast<void*>(bench_chain_step);
        params.gridDim = dim3(1);
        params.blockDim = dim3(1);
        params.sharedMemBytes = 0;
        params.kernelParams = args;
        params.extra = nullptr;
        cudaGraphNode_t node = nullptr;
        if (node_api == 0) {
            TWIN_CHECK(cudaGraphAddKernelNode(&node, c->graph, previous ? &previous : nullptr, previous ? 1 : 0, &params));
        } else {
            cudaGraphNodeParams generic = {};
            generic.type = cudaGraphNodeTypeKernel;
            generic.kernel.func = params.func;
            generic.kernel.gridDim = params.gridDim;
            generic.kernel.blockDim = params.blockDim;
            generic.kernel.sharedMemBytes = params.sharedMemBytes;
            generic.kernel.kernelParams = params.kernelParams;
            generic.kernel.extra = params.extra;
            TWIN_CHECK(cudaGraphAddNode(&node, c->graph, previous ? &previous : nullptr, nullptr, previous ? 1 : 0, &generic));
        }
        previous = node;
    }
    TWIN_CHECK(cudaGraphInstantiate(&c->exec, c->graph, 0));
    TWIN_CHECK(cudaGraphUpload(c->exec, s->stream));
    TWIN_CHECK(cudaStreamSynchronize(s->stream));
    c->nodes = nodes;
    return 0;
}

int build_while(TwinSession* s, TwinWhile* w, int steps) {
    TWIN_CHECK(cudaGraphCreate(&w->graph, 0));
    cudaGraphConditionalHandle handle = 0;
    // Every launch starts with the condition 1: the body runs at least once.
    TWIN_CHECK(cudaGraphConditionalHandleCreate(&handle, w->graph, 1, cudaGraphCondAssignDefault));
    cudaGraphNodeParams cond = {};
    cond.type = cudaGraphNodeTypeConditional;
    cond.conditional.handle = handle;
    cond.conditional.type = cudaGraphCondTypeWhile;
    cond.conditional.size = 1;
    cudaGraphNode_t while_node = nullptr;
    TWIN_CHECK(cudaGraphAddNode(&while_node, w->graph, nullptr, nullptr, 0, &cond));
    cudaGraph_t body = cond.conditional.phGraph_out[0];

    uint32_t limit = static_cast<uint32_t>(steps);
    void* args[] = {&handle, &s->counter, &limit};
    cudaGraphNodeParams step = {};
    step.type = cudaGraphNodeTypeKernel;
    step.kernel.func = reinterpret_cast<void*>(bench_while_step);
    step.kernel.gridDim = dim3(1);
    step.kernel.blockDim = dim3(1);
    step.kernel.kernelParams = args;
    cudaGraphNode_t step_node = nullptr;
    TWIN_CHECK(cudaGraphAddNode(&step_node, body, nullptr, nullptr, 0, &step));

    TWIN_CHECK(cudaGraphInstantiate(&w->exec, w->graph, 0));
    TWIN_CHECK(cudaGraphUpload(w->exec, s->stream));
    TWIN_CHECK(cudaStreamSynchronize(s->stream));
    w->steps = steps;
    return 0;
}

}  // namespace

extern "C" {

const char* twin_failed_call(void) { return g_failed_call; }

int twin_session_destroy(TwinSession* s) {
    if (s == nullptr) return 0;
    int status = 0;
    if (s->stream) TWIN_RELEASE(status, cudaStreamSynchronize(s->stream));
    if (s->keep_going_host) TWIN_RELEASE(status, cudaFreeHost(s->keep_going_host));
    if (s->keep_going) TWIN_RELEASE(status, cudaFree(s->keep_going));
    if (s->counter) TWIN_RELEASE(status, cudaFree(s->counter));
    if (s->end) TWIN_RELEASE(status, cudaEventDestroy(s->end));
    if (s->start) TWIN_RELEASE(status, cudaEventDestroy(s->start));
    if (s->stream) TWIN_RELEASE(status, cudaStreamDestroy(s->stream));
    delete s;
    return status;
}

int twin_session_create(TwinSession** out) {
    *out = nullptr;
    TwinSession* s = new (std::nothrow) TwinSession();
    if (s == nullptr) {
        g_failed_call = "new TwinSession";
        return static_cast<int>(cudaErrorMemoryAllocation);
    }
    auto build = [&]() -> int {
        TWIN_CHECK(cudaStreamCreate(&s->stream));
        TWIN_CHECK(cudaEventCreate(&s->start));
        TWIN_CHECK(cudaEventCreate(&s->end));
        TWIN_CHECK(cudaMalloc(&s->counter, sizeof(uint32_t)));
        TWIN_CHECK(cudaMalloc(&s->keep_going, sizeof(uint32_t)));
        TWIN_CHECK(cudaMallocHost(&s->keep_going_host, sizeof(uint32_t)));
        TWIN_CHECK(cudaMemset(s->counter, 0, sizeof(uint32_t)));
        TWIN_CHECK(cudaMemset(s->keep_going, 0, sizeof(uint32_t)));
        return 0;
    };
    int status = build();
    if (status != 0) {
        const char* failed = g_failed_call;
        twin_session_destroy(s);
        g_failed_call = failed;
        return status;
    }
    *out = s;
    return 0;
}

// (a) `launches` launches of the empty kernel between two events: µs per launch.
int twin_stream_empty(TwinSession* s, int launches, double* us_per_launch) {
    TWIN_CHECK(cudaEventRecord(s->start, s->stream));
    for (int i = 0; i < launches; ++i) {
        TWIN_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(bench_empty), dim3(1), dim3(1), nullptr, 0,
                                    s->stream));
    }
    float ms = 0;
    int status = end_sample(s, &ms, nullptr);
    if (status != 0) return status;
    *us_per_launch = ms * 1000.0 / launches;
    return 0;
}

int twin_chain_destroy(TwinChain* c) {
    if (c == nullptr) return 0;
    int status = 0;
    if (c->exec) TWIN_RELEASE(status, cudaGraphExecDestroy(c->exec));
    if (c->graph) TWIN_RELEASE(status, cudaGraphDestroy(c->graph));
    delete c;
    return status;
}

// (b, c) A graph of `nodes` bench_chain_step(counter, value) nodes in a chain (added through
// `node_api`, see build_chain), instantiated and uploaded.
int twin_chain_create(TwinSession* s, int nodes, uint32_t value, int node_api, TwinChain** out) {
    *out = nullptr;
    TwinChain* c = new (std::nothrow) TwinChain();
    if (c == nullptr) {
        g_failed_call = "new TwinChain";
        return static_cast<int>(cudaErrorMemoryAllocation);
    }
    int status = build_chain(s, c, nodes, value, node_api);
    if (status != 0) {
        const char* failed = g_failed_call;
        twin_chain_destroy(c);
        g_failed_call = failed;
        return status;
    }
    *out = c;
    return 0;
}

// (b) `replays` launches of the chain between two events: µs per node.
int twin_chain_replay(TwinSession* s, TwinChain* c, int replays, double* us_per_node, uint32_t* counter_out) {
    int status = begin_sample(s);
    if (status != 0) return status;
    for (int i = 0; i < replays; ++i) {
        TWIN_CHECK(cudaGraphLaunch(c->exec, s->stream));
    }
    float ms = 0;
    status = end_sample(s, &ms, counter_out);
    if (status != 0) return status;
    *us_per_node = ms * 1000.0 / (static_cast<double>(replays) * c->nodes);
    return 0;
}

// (c) One cudaGraphInstantiate of the chain's graph, host time in µs (the exec is destroyed
// after the clock stops).
int twin_chain_instantiate(TwinChain* c, double* us) {
    cudaGraphExec_t exec = nullptr;
    auto start = std::chrono::steady_clock::now();
    TWIN_CHECK(cudaGraphInstantiate(&exec, c->graph, 0));
    *us = elapsed_us(start);
    TWIN_CHECK(cudaGraphExecDestroy(exec));
    return 0;
}

// (c) One cudaGraphExecUpdate of the chain's exec from `from`'s graph (same topology), host
// time in µs.
int twin_chain_update(TwinChain* c, const TwinChain* from, double* us) {
    cudaGraphExecUpdateResultInfo info = {};
    auto start = std::chrono::steady_clock::now();
    TWIN_CHECK(cudaGraphExecUpdate(c->exec, from->graph, &info));
    *us = elapsed_us(start);
    if (info.result != cudaGraphExecUpdateSuccess) {
        g_failed_call = "cudaGraphExecUpdate (result info)";
        return static_cast<int>(cudaErrorGraphExecUpdateFailure);
    }
    return 0;
}

// (d) The host-driven loop: launch one step, copy the continue flag back, wait, decide.
// µs per step over `steps` steps.
int twin_loop_host(TwinSession* s, int steps, double* us_per_step, uint32_t* counter_out) {
    int status = begin_sample(s);
    if (status != 0) return status;
    uint32_t limit = static_cast<uint32_t>(steps);
    int done = 0;
    for (;;) {
        void* args[] = {&s->counter, &limit, &s->keep_going};
        TWIN_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(bench_host_step), dim3(1), dim3(1), args, 0,
                                    s->stream));
        TWIN_CHECK(cudaMemcpyAsync(s->keep_going_host, s->keep_going, sizeof(uint32_t), cudaMemcpyDeviceToHost,
                                   s->stream));
        TWIN_CHECK(cudaStreamSynchronize(s->stream));
        ++done;
        if (*s->keep_going_host == 0) break;
        if (done > steps) {
            g_failed_call = "twin_loop_host (the loop did not stop)";
            return static_cast<int>(cudaErrorUnknown);
        }
    }
    float ms = 0;
    status = end_sample(s, &ms, counter_out);
    if (status != 0) return status;
    *us_per_step = ms * 1000.0 / done;
    return 0;
}

int twin_while_destroy(TwinWhile* w) {
    if (w == nullptr) return 0;
    int status = 0;
    if (w->exec) TWIN_RELEASE(status, cudaGraphExecDestroy(w->exec));
    if (w->graph) TWIN_RELEASE(status, cudaGraphDestroy(w->graph));
    delete w;
    return status;
}

// (d) A graph holding one WHILE node whose body is one bench_while_step node; one launch runs
// `steps` steps.
int twin_while_create(TwinSession* s, int steps, TwinWhile** out) {
    *out = nullptr;
    TwinWhile* w = new (std::nothrow) TwinWhile();
    if (w == nullptr) {
        g_failed_call = "new TwinWhile";
        return static_cast<int>(cudaErrorMemoryAllocation);
    }
    int status = build_while(s, w, steps);
    if (status != 0) {
        const char* failed = g_failed_call;
        twin_while_destroy(w);
        g_failed_call = failed;
        return status;
    }
    *out = w;
    return 0;
}

// (d) One launch of the WHILE graph between two events: µs per step.
int twin_while_run(TwinSession* s, TwinWhile* w, double* us_per_step, uint32_t* counter_out) {
    int status = begin_sample(s);
    if (status != 0) return status;
    TWIN_CHECK(cudaGraphLaunch(w->exec, s->stream));
    float ms = 0;
    status = end_sample(s, &ms, counter_out);
    if (status != 0) return status;
    *us_per_step = ms * 1000.0 / w->steps;
    return 0;
}

// (e) One launch of the CDP parent, which launches `children` children from the device:
// µs per child (the parent's grid completes when its children have).
int twin_cdp_device(TwinSession* s, int children, double* us_per_child, uint32_t* counter_out) {
    int status = begin_sample(s);
    if (status != 0) return status;
    uint32_t n = static_cast<uint32_t>(children);
    void* args[] = {&s->counter, &n};
    TWIN_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(bench_cdp_parent), dim3(1), dim3(1), args, 0,
                                s->stream));
    float ms = 0;
    status = end_sample(s, &ms, counter_out);
    if (status != 0) return status;
    *us_per_child = ms * 1000.0 / children;
    return 0;
}

// (e) `children` host launches of the same child kernel into one stream: µs per child.
int twin_cdp_host(TwinSession* s, int children, double* us_per_child, uint32_t* counter_out) {
    int status = begin_sample(s);
    if (status != 0) return status;
    for (int i = 0; i < children; ++i) {
        void* args[] = {&s->counter};
        TWIN_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(bench_cdp_child), dim3(1), dim3(1), args, 0,
                                    s->stream));
    }
    float ms = 0;
    status = end_sample(s, &ms, counter_out);
    if (status != 0) return status;
    *us_per_child = ms * 1000.0 / children;
    return 0;
}

}  // extern "C"
