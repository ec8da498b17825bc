// Plain CUDA C++ reproducer, with no Rust and no crate code, of compute-sanitizer's racecheck
// dying with SIGSEGV (inside the tool's own library) on the persistent scheduler's launch
// pattern. The program is correct: it passes without a sanitizer and under memcheck, with
// every item processed exactly once and no device-side launch refused. Run the variants on a
// GPU machine with `bash scripts/run-standalone repro-racecheck-crash`.
//
// The pattern (examples/persistent_scheduler, reduced): KINDS kinds of item; each kind's
// one-node graph (a block of 128 threads, shared memory, __syncthreads) is instantiated BATCH
// times for device launch. A scheduler block of BATCH threads, itself a device-launch graph,
// claims BATCH items per run with one atomicAdd, hands each item to its kind's list, and
// fire-and-forgets one exec per item (LAUNCHERS threads make the launches, 0 = every
// thread), then tail-relaunches itself while items remain. HOST_LOOP=1 also drains the items
// from the host, one host launch per item. With KINDS=1 racecheck finishes; with 2 or more
// it dies during the first drains.
//
// Usage: racecheck_crash KINDS BATCH LAUNCHERS HOST_LOOP ITEMS RUNS   (e.g. 4 32 0 1 400 3)
// Exit status 0 when every drain processed every item once, 1 when not, 2 on a CUDA error.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s -> %s (%d)\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_), (int)e_); exit(2); } } while (0)

constexpr unsigned kWidth = 128;     // threads per item
constexpr unsigned kMaxKinds = 16;
constexpr unsigned kMaxBatch = 120;  // fire-and-forget launches per launching kernel

struct Queue { unsigned head, count; };

// Records the first failed device-side launch.
__device__ void record(int* error, cudaError_t status) {
  if (status != cudaSuccess) atomicCAS(error, 0, (int)status);
}

// One item of kind `kind`: takes the next entry of the kind's list, writes its slice, counts it.
__global__ void item(unsigned kind, const unsigned* lists, unsigned capacity, unsigned* taken, unsigned* hits,
                     unsigned* out) {
  __shared__ unsigned id;
  if (threadIdx.x == 0) id = lists[kind * capacity + atomicAdd(&taken[kind], 1u)];
  __syncthreads();
  out[id * blockDim.x + threadIdx.x] = id * 7u + threadIdx.x;
  if (threadIdx.x == 0) atomicAdd(&hits[id], 1u);
}

// One scheduler run: claim up to blockDim.x items, list them by kind, launch one exec each,
// relaunch while items remain. graphs[kind * replicas + r] is replica r of a kind's graph.
__global__ void scheduler(Queue* queue, const unsigned* kinds, unsigned* lists, unsigned capacity, unsigned* written,
                          const cudaGraphExec_t* graphs, unsigned replicas, unsigned launchers, int* error) {
  __shared__ unsigned used[kMaxKinds];
  __shared__ unsigned graph_of[kMaxBatch];
  __shared__ bool has[kMaxBatch];
  __shared__ unsigned head;
  const unsigned t = threadIdx.x;
  if (t < kMaxKinds) used[t] = 0;
  if (t == 0) head = atomicAdd(&queue->head, blockDim.x);
  __syncthreads();
  if (head >= queue->count) return;
  const unsigned id = head + t;
  has[t] = id < queue->count;
  if (has[t]) {
    const unsigned kind = kinds[id];
    const unsigned replica = atomicAdd(&used[kind], 1u);
    lists[kind * capacity + atomicAdd(&written[kind], 1u)] = id;
    graph_of[t] = kind * replicas + replica;
  }
  __threadfence();
  __syncthreads();
  const unsigned n = launchers ? launchers : blockDim.x;
  if (t < n) {
    for (unsigned i = t; i < blockDim.x; i += n) {
      if (has[i]) record(error, cudaGraphLaunch(graphs[graph_of[i]], cudaStreamGraphFireAndForget));
    }
  }
  if (t == 0 && *(volatile unsigned*)&queue->head < queue->count) {
    record(error, cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch));
  }
}

static cudaGraph_t one_node_graph(const void* func, void** args, unsigned threads) {
  cudaGraph_t graph;
  CK(cudaGraphCreate(&graph, 0));
  cudaKernelNodeParams params = {};
  params.func = const_cast<void*>(func);
  params.gridDim = dim3(1);
  params.blockDim = dim3(threads);
  params.kernelParams = args;
  cudaGraphNode_t node;
  CK(cudaGraphAddKernelNode(&node, graph, nullptr, 0, &params));
  return graph;
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  if (argc != 7) { fprintf(stderr, "usage: %s KINDS BATCH LAUNCHERS HOST_LOOP ITEMS RUNS\n", argv[0]); return 2; }
  unsigned kinds_n = atoi(argv[1]), batch = atoi(argv[2]), launchers = atoi(argv[3]);
  const unsigned host_loop = atoi(argv[4]), items = atoi(argv[5]), runs = atoi(argv[6]);
  if (kinds_n < 1 || kinds_n > kMaxKinds || batch < 1 || batch > kMaxBatch || items < 1) {
    fprintf(stderr, "KINDS must be 1..%u, BATCH 1..%u, ITEMS at least 1\n", kMaxKinds, kMaxBatch);
    return 2;
  }
  unsigned capacity = items;
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  std::vector<unsigned> host_kinds(items), host_lists(items * kinds_n), host_written(kMaxKinds, 0);
  for (unsigned i = 0; i < items; ++i) host_kinds[i] = ((i * 2654435761u) >> 7) % kinds_n;
  for (unsigned i = 0; i < items; ++i) host_lists[host_kinds[i] * items + host_written[host_kinds[i]]++] = i;

  unsigned *kinds, *lists, *taken, *written, *hits, *out;
  Queue* queue;
  int* error;
  CK(cudaMalloc(&kinds, sizeof(unsigned) * items));
  CK(cudaMalloc(&lists, sizeof(unsigned) * items * kinds_n));
  CK(cudaMalloc(&taken, sizeof(unsigned) * kMaxKinds));
  CK(cudaMalloc(&written, sizeof(unsigned) * kMaxKinds));
  CK(cudaMalloc(&hits, sizeof(unsigned) * items));
  CK(cudaMalloc(&out, sizeof(unsigned) * items * kWidth));
  CK(cudaMalloc(&queue, sizeof(Queue)));
  CK(cudaMalloc(&error, sizeof(int)));
  CK(cudaMemcpy(kinds, host_kinds.data(), sizeof(unsigned) * items, cudaMemcpyHostToDevice));

  // Every kind: one graph, `batch` device-launch execs of it, and one host-launch exec.
  std::vector<cudaGraphExec_t> device_execs, host_execs(kinds_n);
  for (unsigned k = 0; k < kinds_n; ++k) {
    unsigned kind = k;
    void* args[] = {&kind, &lists, &capacity, &taken, &hits, &out};
    cudaGraph_t graph = one_node_graph(reinterpret_cast<const void*>(item), args, kWidth);
    for (unsigned r = 0; r < batch; ++r) {
      cudaGraphExec_t exec;
      CK(cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagDeviceLaunch));
      CK(cudaGraphUpload(exec, stream));
      device_execs.push_back(exec);
    }
    CK(cudaGraphInstantiate(&host_execs[k], graph, 0));
    CK(cudaGraphUpload(host_execs[k], stream));
  }
  cudaGraphExec_t* table;
  CK(cudaMalloc(&table, sizeof(cudaGraphExec_t) * device_execs.size()));
  CK(cudaMemcpy(table, device_execs.data(), sizeof(cudaGraphExec_t) * device_execs.size(), cudaMemcpyHostToDevice));
  void* scheduler_args[] = {&queue, &kinds, &lists, &capacity, &written, &table, &batch, &launchers, &error};
  cudaGraph_t scheduler_graph = one_node_graph(reinterpret_cast<const void*>(scheduler), scheduler_args, batch);
  cudaGraphExec_t scheduler_exec;
  CK(cudaGraphInstantiateWithFlags(&scheduler_exec, scheduler_graph, cudaGraphInstantiateFlagDeviceLaunch));
  CK(cudaGraphUpload(scheduler_exec, stream));
  CK(cudaStreamSynchronize(stream));

  std::vector<unsigned> host_hits(items);
  bool failed = false;
  for (unsigned run = 0; run < runs; ++run) {
    for (unsigned way = 0; way < (host_loop ? 2u : 1u); ++way) {
      const Queue fresh = {0, items};
      CK(cudaMemcpy(queue, &fresh, sizeof fresh, cudaMemcpyHostToDevice));
      CK(cudaMemset(hits, 0, sizeof(unsigned) * items));
      CK(cudaMemset(taken, 0, sizeof(unsigned) * kMaxKinds));
      CK(cudaMemset(error, 0, sizeof(int)));
      if (way == 0) {
        CK(cudaMemset(written, 0, sizeof(unsigned) * kMaxKinds));
        CK(cudaGraphLaunch(scheduler_exec, stream));
      } else {
        CK(cudaMemcpy(lists, host_lists.data(), sizeof(unsigned) * items * kinds_n, cudaMemcpyHostToDevice));
        for (unsigned i = 0; i < items; ++i) CK(cudaGraphLaunch(host_execs[host_kinds[i]], stream));
      }
      CK(cudaStreamSynchronize(stream));
      CK(cudaMemcpy(host_hits.data(), hits, sizeof(unsigned) * items, cudaMemcpyDeviceToHost));
      int device_error;
      CK(cudaMemcpy(&device_error, error, sizeof(int), cudaMemcpyDeviceToHost));
      unsigned wrong = 0;
      for (unsigned h : host_hits) wrong += h != 1;
      printf("run %u, %s: device-side launch error %d, items not processed exactly once %u\n", run,
             way ? "host loop" : "scheduler", device_error, wrong);
      failed = failed || device_error != 0 || wrong != 0;
    }
  }
  printf("%s\n", failed ? "FAIL" : "PASS");
  return failed ? 1 : 0;
}
