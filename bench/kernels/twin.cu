// The C++ twin: the same measured work as the Rust path, written as a careful C++ programmer
// would write it against the CUDA runtime API, with every call checked. Compiled by
// cuda-build with the kernels, linked into the benchmark binary, and called from Rust in the
// same process on the same GPU, interleaved with the Rust path (see src/harness.rs).
//
// Each measuring function does one sample and returns its time through an out-parameter,
// plus the counter the kernels left, which the Rust side checks. Every function returns a
// cudaError_t (0 is success); twin_failed_call() names the call that failed.
//
// Kernels are launched with cudaLaunchKernel(Ex), the calls a C++ programmer makes (the Rust
// path launches through the driver's cuLaunchKernelEx where that is the same launch, the
// cheaper call: cuda-graph's kernel/driver_launch.rs), so that the ratio Rust/C++ shows what
// the safe API costs or saves. The kernels count into the Rust side's counter
// (twin_session_share_counter), so that both sides update the same memory. Host-side costs (instantiate, update) are
// timed with std::chrono::steady_clock, device-side ones with events around the work.
//
// Device-side launches (the CDP parent, and the twin's own graph-launching kernels below)
// record their first failed cudaError_t in the session's device error word; the host reads
// it after each sample and fails the sample with that code, so a refused launch can never
// pass for a fast one.
#include <chrono>
#include <new>
#include <stdint.h>

#include "twin.cuh"

// The call that failed last on this thread (twin_failed_call()).
thread_local const char* g_failed_call = "";

namespace {

double elapsed_us(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

// What the device error word holds when it is set, by who set it (twin_failed_call()).
constexpr const char* kCdpLaunchFailed = "bench_cdp_parent: device-side <<<>>> launch (cudaGetLastError)";
constexpr const char* kSchedulerLaunchFailed = "twin_width_scheduler: device-side cudaGraphLaunch";
constexpr const char* kRelaunchFailed = "twin_relaunch_step: device-side cudaGraphLaunch (self-relaunch)";

}  // namespace

// Keeps the first failed device-side launch's status in *error (0 = none).
static __device__ void record_launch(int* error, cudaError_t status) {
    if (status != cudaSuccess) atomicCAS(error, 0, static_cast<int>(status));
}

// (f) The twin's scheduler, plain CUDA: one step per run of its own graph (one thread, inside
// a device-launch graph, *steps = 0 before the host's one launch). Launches `work`
// fire-and-forget or as a tail launch (`mode`, BENCH_MODE_*), counts the step, and
// tail-relaunches its own graph until `iters` steps ran; stops at the first refused launch.
// The same steps as the Rust path's bench_dl_scheduler (device_launch.cu). The twin's kernels
// are extern "C" with external linkage, like the bench kernels.
extern "C" __global__ void twin_width_scheduler(cudaGraphExec_t work, uint32_t mode, uint32_t iters,
                                                uint32_t* steps, int* error) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const uint32_t step = *steps;
    if (step >= iters) return;
    const cudaError_t status = mode == BENCH_MODE_TAIL ? cudaGraphLaunch(work, cudaStreamGraphTailLaunch)
                                                       : cudaGraphLaunch(work, cudaStreamGraphFireAndForget);
    record_launch(error, status);
    *steps = step + 1u;
    if (status == cudaSuccess && step + 1u < iters) {
        record_launch(error, cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch));
    }
}

// (g) One step of the twin's self-relaunching loop: *counter += 1, and while *counter < limit
// it tail-relaunches its own graph.
extern "C" __global__ void twin_relaunch_step(uint32_t* counter, uint32_t limit, int* error) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const uint32_t next = *counter + 1u;
    *counter = next;
    if (next < limit) record_launch(error, cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch));
}

// A loop that one graph launch runs to the end: a WHILE node (d) or a self-relaunching
// kernel (g).
enum TwinLoopKind : int { TWIN_LOOP_WHILE = 0, TWIN_LOOP_SELF_RELAUNCH = 1 };

struct TwinLoop {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    int steps = 0;
    int kind = TWIN_LOOP_WHILE;
};

// (f) A work graph of `width` independent bench_count nodes, instantiated for host launch and
// for device launch, and one scheduler graph per device mode (device-launch execs).
struct TwinWidth {
    cudaGraph_t work = nullptr;
    cudaGraphExec_t host_exec = nullptr;
    cudaGraphExec_t device_exec = nullptr;
    cudaGraph_t schedulers[2] = {nullptr, nullptr};  // fire-and-forget, tail
    cudaGraphExec_t scheduler_execs[2] = {nullptr, nullptr};
    int iters = 0;
};

namespace {

// Allocates a T and builds it with `build(T*)`; if that fails, releases it with `destroy`
// (keeping the build's failed call) and returns the build's status. *out is set on success only.
template <typename T, typename Build>
int create(T** out, const char* new_call, Build build, int (*destroy)(T*)) {
    *out = nullptr;
    T* object = new (std::nothrow) T();
    if (object == nullptr) {
        g_failed_call = new_call;
        return static_cast<int>(cudaErrorMemoryAllocation);
    }
    int status = build(object);
    if (status != 0) {
        const char* failed = g_failed_call;
        destroy(object);
        g_failed_call = failed;
        return status;
    }
    *out = object;
    return 0;
}

// Queues counter = 0 and records the start event: the untimed reset, then the timed region.
int begin_sample(TwinSession* s) {
    TWIN_CHECK(cudaMemsetAsync(s->counter, 0, sizeof(uint32_t), s->stream));
    TWIN_CHECK(cudaEventRecord(s->start, s->stream));
    return 0;
}

// Copies one device word to the host and waits for it.
template <typename T>
int read_back(TwinSession* s, T* host, const T* device) {
    TWIN_CHECK(cudaMemcpyAsync(host, device, sizeof(T), cudaMemcpyDeviceToHost, s->stream));
    TWIN_CHECK(cudaStreamSynchronize(s->stream));
    return 0;
}

// Records the end event, waits, and returns the milliseconds between the events and the counter.
int end_sample(TwinSession* s, float* ms, uint32_t* counter_out) {
    TWIN_CHECK(cudaEventRecord(s->end, s->stream));
    TWIN_CHECK(cudaEventSynchronize(s->end));
    TWIN_CHECK(cudaEventElapsedTime(ms, s->start, s->end));
    return counter_out != nullptr ? read_back(s, counter_out, s->counter) : 0;
}

// The device error word as this call's status: 0 while no device-side launch failed, else the
// first failure's cudaError_t, with twin_failed_call() naming `what`. A failure ends the run,
// so the word is never reset.
int check_device_error(TwinSession* s, const char* what) {
    int code = 0;
    int status = read_back(s, &code, s->device_error);
    if (status != 0) return status;
    if (code != 0) g_failed_call = what;
    return code;
}

// The parameters of a one-thread kernel node running `func` with `args`.
cudaKernelNodeParams one_thread_node(const void* func, void** args) {
    cudaKernelNodeParams params = {};
    params.func = const_cast<void*>(func);
    params.gridDim = dim3(1);
    params.blockDim = dim3(1);
    params.sharedMemBytes = 0;
    params.kernelParams = args;
    params.extra = nullptr;
    return params;
}

// A graph of one one-thread node running `func` with `args`, instantiated for device launch
// (its kernel launches graphs from the device, so it must run inside one) and uploaded.
int one_node_device_graph(TwinSession* s, const void* func, void** args, cudaGraph_t* graph,
                          cudaGraphExec_t* exec) {
    TWIN_CHECK(cudaGraphCreate(graph, 0));
    cudaKernelNodeParams params = one_thread_node(func, args);
    cudaGraphNode_t node = nullptr;
    TWIN_CHECK(cudaGraphAddKernelNode(&node, *graph, nullptr, 0, &params));
    TWIN_CHECK(cudaGraphInstantiateWithFlags(exec, *graph, cudaGraphInstantiateFlagDeviceLaunch));
    TWIN_CHECK(cudaGraphUpload(*exec, s->stream));
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
        cudaKernelNodeParams params = one_thread_node(reinterpret_cast<const void*>(bench_chain_step), args);
        cudaGraphNode_t node = nullptr;
        if (node_api == 0) {
            TWIN_CHECK(cudaGraphAddKernelNode(&node, c->graph, previous ? &previous : nullptr, previous ? 1 : 0, &params));
        } else {
            cudaGraphNodeParams generic = one_thread_kernel_node(params.func, args);
            TWIN_CHECK(cudaGraphAddNode(&node, c->graph, previous ? &previous : nullptr, nullptr, previous ? 1 : 0, &generic));
        }
        previous = node;
    }
    return finish_chain(s, c, nodes);
}

int build_while(TwinSession* s, TwinLoop* w, int steps) {
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
    return 0;
}

// (g) One twin_relaunch_step(counter, steps, device_error) node in a device-launch graph.
int build_self_relaunch(TwinSession* s, TwinLoop* l, int steps) {
    uint32_t limit = static_cast<uint32_t>(steps);
    void* args[] = {&s->counter, &limit, &s->device_error};
    int status = one_node_device_graph(s, reinterpret_cast<const void*>(twin_relaunch_step), args, &l->graph,
                                       &l->exec);
    if (status != 0) return status;
    TWIN_CHECK(cudaStreamSynchronize(s->stream));
    return 0;
}

// (f) The work graph (`width` independent one-thread bench_count(counter) nodes), its host
// exec and device exec (both uploaded), and a scheduler graph per device mode that runs
// `iters` steps per launch.
int build_width(TwinSession* s, TwinWidth* w, int width, int iters) {
    TWIN_CHECK(cudaGraphCreate(&w->work, 0));
    for (int i = 0; i < width; ++i) {
        void* args[] = {&s->counter};
        cudaKernelNodeParams params = one_thread_node(reinterpret_cast<const void*>(bench_count), args);
        cudaGraphNode_t node = nullptr;
        TWIN_CHECK(cudaGraphAddKernelNode(&node, w->work, nullptr, 0, &params));
    }
    TWIN_CHECK(cudaGraphInstantiate(&w->host_exec, w->work, 0));
    TWIN_CHECK(cudaGraphUpload(w->host_exec, s->stream));
    TWIN_CHECK(cudaGraphInstantiateWithFlags(&w->device_exec, w->work, cudaGraphInstantiateFlagDeviceLaunch));
    TWIN_CHECK(cudaGraphUpload(w->device_exec, s->stream));
    const uint32_t modes[2] = {BENCH_MODE_FIRE_AND_FORGET, BENCH_MODE_TAIL};
    for (int m = 0; m < 2; ++m) {
        uint32_t mode = modes[m];
        uint32_t n = static_cast<uint32_t>(iters);
        void* args[] = {&w->device_exec, &mode, &n, &s->steps, &s->device_error};
        int status = one_node_device_graph(s, reinterpret_cast<const void*>(twin_width_scheduler), args,
                                           &w->schedulers[m], &w->scheduler_execs[m]);
        if (status != 0) return status;
    }
    TWIN_CHECK(cudaStreamSynchronize(s->stream));
    w->iters = iters;
    return 0;
}

}  // namespace

extern "C" {

const char* twin_failed_call(void) { return g_failed_call; }

int twin_session_destroy(TwinSession* s) {
    if (s == nullptr) return 0;
    int status = 0;
    if (s->stream) TWIN_RELEASE(status, cudaStreamSynchronize(s->stream));
    if (s->device_error) TWIN_RELEASE(status, cudaFree(s->device_error));
    if (s->steps) TWIN_RELEASE(status, cudaFree(s->steps));
    if (s->keep_going_mapped) TWIN_RELEASE(status, cudaFreeHost(s->keep_going_mapped));
    if (s->keep_going_host) TWIN_RELEASE(status, cudaFreeHost(s->keep_going_host));
    if (s->keep_going) TWIN_RELEASE(status, cudaFree(s->keep_going));
    if (s->counter && !s->counter_shared) TWIN_RELEASE(status, cudaFree(s->counter));
    if (s->end) TWIN_RELEASE(status, cudaEventDestroy(s->end));
    if (s->start) TWIN_RELEASE(status, cudaEventDestroy(s->start));
    if (s->stream) TWIN_RELEASE(status, cudaStreamDestroy(s->stream));
    delete s;
    return status;
}

// Makes the twin's kernels count into `counter` (the Rust side's, one element, alive until the
// session is destroyed) instead of its own, which is freed: both sides' kernels then update the
// same memory, whose place moves a chain's replay time by about 5% (bench/results/
// replay_probe.txt). Called before any chain, loop or width graph is made; nothing else of
// the twin changes.
int twin_session_share_counter(TwinSession* s, uint32_t* counter) {
    int status = 0;
    if (s->counter && !s->counter_shared) TWIN_RELEASE(status, cudaFree(s->counter));
    s->counter = counter;
    s->counter_shared = true;
    return status;
}

int twin_session_create(TwinSession** out) {
    auto build = [](TwinSession* s) -> int {
        TWIN_CHECK(cudaStreamCreate(&s->stream));
        TWIN_CHECK(cudaEventCreate(&s->start));
        TWIN_CHECK(cudaEventCreate(&s->end));
        TWIN_CHECK(cudaMalloc(&s->counter, sizeof(uint32_t)));
        TWIN_CHECK(cudaMalloc(&s->keep_going, sizeof(uint32_t)));
        TWIN_CHECK(cudaMallocHost(&s->keep_going_host, sizeof(uint32_t)));
        TWIN_CHECK(cudaHostAlloc(&s->keep_going_mapped, sizeof(uint32_t), cudaHostAllocMapped));
        *s->keep_going_mapped = 0;
        TWIN_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&s->keep_going_mapped_device),
                                            s->keep_going_mapped, 0));
        TWIN_CHECK(cudaMalloc(&s->steps, sizeof(uint32_t)));
        TWIN_CHECK(cudaMalloc(&s->device_error, sizeof(int)));
        TWIN_CHECK(cudaMemset(s->counter, 0, sizeof(uint32_t)));
        TWIN_CHECK(cudaMemset(s->keep_going, 0, sizeof(uint32_t)));
        TWIN_CHECK(cudaMemset(s->steps, 0, sizeof(uint32_t)));
        TWIN_CHECK(cudaMemset(s->device_error, 0, sizeof(int)));
        return 0;
    };
    return create(out, "new TwinSession", build, twin_session_destroy);
}

// (a) `launches` launches of the empty kernel between two events: µs per launch. With
// `programmatic`, bench_pdl_empty launched with programmatic stream serialization.
int twin_stream_empty(TwinSession* s, int launches, int programmatic, double* us_per_launch) {
    cudaLaunchAttribute serialize = {};
    serialize.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    serialize.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(1);
    config.blockDim = dim3(1);
    config.stream = s->stream;
    config.attrs = &serialize;
    config.numAttrs = 1;
    TWIN_CHECK(cudaEventRecord(s->start, s->stream));
    for (int i = 0; i < launches; ++i) {
        if (programmatic) {
            TWIN_CHECK(cudaLaunchKernelEx(&config, bench_pdl_empty));
        } else {
            TWIN_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(bench_empty), dim3(1), dim3(1), nullptr, 0,
                                        s->stream));
        }
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
    auto build = [&](TwinChain* c) { return build_chain(s, c, nodes, value, node_api); };
    return create(out, "new TwinChain", build, twin_chain_destroy);
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

// (d) The host-driven loop: launch one step, then either copy the continue flag back and wait
// (`mapped` 0), or wait for the step, which wrote the flag straight into mapped host memory
// (`mapped` 1: no copy); decide. µs per step over `steps` steps.
int twin_loop_host(TwinSession* s, int steps, int mapped, double* us_per_step, uint32_t* counter_out) {
    int status = begin_sample(s);
    if (status != 0) return status;
    uint32_t limit = static_cast<uint32_t>(steps);
    uint32_t* flag = mapped ? s->keep_going_mapped_device : s->keep_going;
    int done = 0;
    for (;;) {
        void* args[] = {&s->counter, &limit, &flag};
        TWIN_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(bench_host_step), dim3(1), dim3(1), args, 0,
                                    s->stream));
        if (!mapped) {
            TWIN_CHECK(cudaMemcpyAsync(s->keep_going_host, s->keep_going, sizeof(uint32_t),
                                       cudaMemcpyDeviceToHost, s->stream));
        }
        TWIN_CHECK(cudaStreamSynchronize(s->stream));
        ++done;
        const uint32_t go_on =
            mapped ? *static_cast<volatile uint32_t*>(s->keep_going_mapped) : *s->keep_going_host;
        if (go_on == 0) break;
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

int twin_loop_destroy(TwinLoop* l) {
    if (l == nullptr) return 0;
    int status = 0;
    if (l->exec) TWIN_RELEASE(status, cudaGraphExecDestroy(l->exec));
    if (l->graph) TWIN_RELEASE(status, cudaGraphDestroy(l->graph));
    delete l;
    return status;
}

// (d, g) A graph whose one launch runs `steps` steps of a loop of `kind`:
// - TWIN_LOOP_WHILE (d): one WHILE node whose body is one bench_while_step node;
// - TWIN_LOOP_SELF_RELAUNCH (g): one twin_relaunch_step node, instantiated for device launch,
//   which tail-relaunches its own graph until the counter reaches `steps`.
int twin_loop_create(TwinSession* s, int kind, int steps, TwinLoop** out) {
    auto build = [&](TwinLoop* l) {
        l->kind = kind;
        l->steps = steps;
        if (kind == TWIN_LOOP_WHILE) return build_while(s, l, steps);
        if (kind == TWIN_LOOP_SELF_RELAUNCH) return build_self_relaunch(s, l, steps);
        g_failed_call = "twin_loop_create (unknown loop kind)";
        return static_cast<int>(cudaErrorInvalidValue);
    };
    return create(out, "new TwinLoop", build, twin_loop_destroy);
}

// (d, g) One launch of the loop's graph between two events: µs per step. A self-relaunch the
// device refused fails the sample with its status.
int twin_loop_run(TwinSession* s, TwinLoop* l, double* us_per_step, uint32_t* counter_out) {
    int status = begin_sample(s);
    if (status != 0) return status;
    TWIN_CHECK(cudaGraphLaunch(l->exec, s->stream));
    float ms = 0;
    status = end_sample(s, &ms, counter_out);
    if (status == 0 && l->kind == TWIN_LOOP_SELF_RELAUNCH) status = check_device_error(s, kRelaunchFailed);
    if (status != 0) return status;
    *us_per_step = ms * 1000.0 / l->steps;
    return 0;
}

int twin_width_destroy(TwinWidth* w) {
    if (w == nullptr) return 0;
    int status = 0;
    for (int m = 0; m < 2; ++m) {
        if (w->scheduler_execs[m]) TWIN_RELEASE(status, cudaGraphExecDestroy(w->scheduler_execs[m]));
        if (w->schedulers[m]) TWIN_RELEASE(status, cudaGraphDestroy(w->schedulers[m]));
    }
    if (w->device_exec) TWIN_RELEASE(status, cudaGraphExecDestroy(w->device_exec));
    if (w->host_exec) TWIN_RELEASE(status, cudaGraphExecDestroy(w->host_exec));
    if (w->work) TWIN_RELEASE(status, cudaGraphDestroy(w->work));
    delete w;
    return status;
}

// (f) The graphs of one width (see build_width), for `iters` iterations per sample.
int twin_width_create(TwinSession* s, int width, int iters, TwinWidth** out) {
    auto build = [&](TwinWidth* w) { return build_width(s, w, width, iters); };
    return create(out, "new TwinWidth", build, twin_width_destroy);
}

// (f) One sample of `iters` iterations of the work graph, each waiting for the previous one,
// launched in `mode` (BENCH_MODE_*):
// - host + sync: cudaGraphLaunch of the host exec, then cudaStreamSynchronize, every iteration;
// - fire-and-forget, tail: one host launch of the scheduler graph, which launches the device
//   exec once per step from the device and relaunches itself until `iters` steps ran.
// Returns µs per iteration, the counter (width x iters when every node ran) and the steps
// (iterations the host ran, or the scheduler's step count). A device-side launch that was
// refused fails the sample with its status.
int twin_width_run(TwinSession* s, TwinWidth* w, uint32_t mode, double* us_per_launch, uint32_t* counter_out,
                   uint32_t* steps_out) {
    if (mode != BENCH_MODE_HOST_SYNC && mode != BENCH_MODE_FIRE_AND_FORGET && mode != BENCH_MODE_TAIL) {
        g_failed_call = "twin_width_run (unknown mode)";
        return static_cast<int>(cudaErrorInvalidValue);
    }
    TWIN_CHECK(cudaMemsetAsync(s->steps, 0, sizeof(uint32_t), s->stream));
    int status = begin_sample(s);
    if (status != 0) return status;
    uint32_t host_iterations = 0;
    if (mode == BENCH_MODE_HOST_SYNC) {
        for (int i = 0; i < w->iters; ++i) {
            TWIN_CHECK(cudaGraphLaunch(w->host_exec, s->stream));
            TWIN_CHECK(cudaStreamSynchronize(s->stream));
            ++host_iterations;
        }
    } else {
        TWIN_CHECK(cudaGraphLaunch(w->scheduler_execs[mode == BENCH_MODE_TAIL ? 1 : 0], s->stream));
    }
    float ms = 0;
    status = end_sample(s, &ms, counter_out);
    if (status == 0) status = check_device_error(s, kSchedulerLaunchFailed);
    if (status != 0) return status;
    if (mode == BENCH_MODE_HOST_SYNC) {
        *steps_out = host_iterations;
    } else {
        status = read_back(s, steps_out, s->steps);
        if (status != 0) return status;
    }
    *us_per_launch = ms * 1000.0 / w->iters;
    return 0;
}

// (e) One launch of the CDP parent, which launches `children` children from the device:
// µs per child (the parent's grid completes when its children have). A child launch the
// device runtime refused fails the sample with its status.
int twin_cdp_device(TwinSession* s, int children, double* us_per_child, uint32_t* counter_out) {
    int status = begin_sample(s);
    if (status != 0) return status;
    uint32_t n = static_cast<uint32_t>(children);
    void* args[] = {&s->counter, &n, &s->device_error};
    TWIN_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(bench_cdp_parent), dim3(1), dim3(1), args, 0,
                                s->stream));
    float ms = 0;
    status = end_sample(s, &ms, counter_out);
    if (status == 0) status = check_device_error(s, kCdpLaunchFailed);
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
        TWIN_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(bench_count), dim3(1), dim3(1), args, 0,
                                    s->stream));
    }
    float ms = 0;
    status = end_sample(s, &ms, counter_out);
    if (status != 0) return status;
    *us_per_child = ms * 1000.0 / children;
    return 0;
}

}  // extern "C"
