// Plain CUDA C++ probe, with no Rust and no crate code: does CUDA 13.0 instantiate, upload and
// run from the device a graph holding a child-graph node? The CUDA 13.0 header lists child
// graph nodes among those a device-launchable graph may hold; an early probe (not kept) saw one
// refused (without recording what the child held), and a later test saw
// a child of memset nodes accepted. `device-launch`'s `validate` refuses child graphs today.
// This probe settles it per child content.
//
// For each variant, a work graph = [mark(flags, 0)] -> [child graph node]:
//   kernel   child = [mark(flags, 1)]
//   memset   child = [memset flags[1] = 1]
//   mixed    child = [mark(flags, 1)] -> [memset flags[2] = 1] -> [memcpy flags[3] <- flags[2]]
//   nested   child = [child' = [mark(flags, 1)]]
//   empty    child = [] (a child graph with no node)
// Steps, every CUDA call checked and printed: cudaGraphInstantiateWithParams with
// cudaGraphInstantiateFlagDeviceLaunch (result_info printed), cudaGraphUpload, then a
// launcher graph (one kernel node, instantiated for device launch, launched from the host)
// whose kernel fire-and-forgets the work exec (cudaGraphLaunch's device-side return code is
// recorded), stream synchronize, and the flags are read back. A variant prints
//   VARIANT: instantiate=<code> info=<result_info> upload=<code> device_launch=<code> ran=<flags> -> OK | REFUSED | WRONG
// OK: accepted and every node (the parent's kernel and everything in the child) ran.
// REFUSED: instantiation refused (no further steps). WRONG: accepted but something did not run
// or a later step failed.
//
// Build and run on the GPU machine (about 1 s):
//   bash scripts/run-standalone repro-child-graph-device-launch   (nvcc -arch=sm_90 -rdc=true -O2 ... -lcudadevrt)
//   /tmp/child_graph_device_launch            # all variants, or name some: kernel nested
// Exit status: 0 when every variant is OK or REFUSED (the answer is then in the lines), 1 when
// one is WRONG, 2 on an unexpected CUDA error outside the probed calls.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s -> %s (%d)\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_), (int)e_); exit(2); } } while (0)

constexpr int kFlags = 4;

extern "C" __global__ void mark(unsigned* flags, unsigned i) {
  if (threadIdx.x == 0 && blockIdx.x == 0) flags[i] = 1;
}

// Fire-and-forgets `exec` and records cudaGraphLaunch's device-side return code.
extern "C" __global__ void launch_one(cudaGraphExec_t exec, int* code) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *code = (int)cudaGraphLaunch(exec, cudaStreamGraphFireAndForget);
}

static cudaGraphNode_t add_mark(cudaGraph_t g, unsigned* flags, unsigned i, const cudaGraphNode_t* dep, size_t ndep) {
  void* args[] = {&flags, &i};
  cudaKernelNodeParams p = {};
  p.func = (void*)mark;
  p.gridDim = dim3(1);
  p.blockDim = dim3(32);
  p.kernelParams = args;
  cudaGraphNode_t n;
  CK(cudaGraphAddKernelNode(&n, g, dep, ndep, &p));  // CUDA copies the argument values
  return n;
}

static cudaGraphNode_t add_memset_one(cudaGraph_t g, unsigned* target, const cudaGraphNode_t* dep, size_t ndep) {
  cudaMemsetParams p = {};
  p.dst = target;
  p.value = 1;
  p.elementSize = 4;
  p.width = 1;
  p.height = 1;
  cudaGraphNode_t n;
  CK(cudaGraphAddMemsetNode(&n, g, dep, ndep, &p));
  return n;
}

// Builds the child of `variant`; `expect` gets which flags must be 1 after a launch.
static cudaGraph_t build_child(const char* variant, unsigned* flags, bool expect[kFlags]) {
  cudaGraph_t child;
  CK(cudaGraphCreate(&child, 0));
  if (!strcmp(variant, "kernel")) {
    add_mark(child, flags, 1, nullptr, 0);
    expect[1] = true;
  } else if (!strcmp(variant, "memset")) {
    add_memset_one(child, flags + 1, nullptr, 0);
    expect[1] = true;
  } else if (!strcmp(variant, "mixed")) {
    cudaGraphNode_t k = add_mark(child, flags, 1, nullptr, 0);
    cudaGraphNode_t m = add_memset_one(child, flags + 2, &k, 1);
    cudaGraphNode_t c;
    CK(cudaGraphAddMemcpyNode1D(&c, child, &m, 1, flags + 3, flags + 2, sizeof(unsigned), cudaMemcpyDeviceToDevice));
    expect[1] = expect[2] = expect[3] = true;
  } else if (!strcmp(variant, "nested")) {
    cudaGraph_t inner;
    CK(cudaGraphCreate(&inner, 0));
    add_mark(inner, flags, 1, nullptr, 0);
    cudaGraphNode_t n;
    CK(cudaGraphAddChildGraphNode(&n, child, nullptr, 0, inner));  // clones `inner`
    CK(cudaGraphDestroy(inner));
    expect[1] = true;
  } else if (strcmp(variant, "empty")) {
    fprintf(stderr, "unknown variant %s (kernel, memset, mixed, nested, empty)\n", variant);
    exit(2);
  }
  return child;
}

// Returns 0 (OK or REFUSED) or 1 (WRONG).
static int probe(const char* variant, cudaStream_t stream, unsigned* flags, int* code) {
  bool expect[kFlags] = {true, false, false, false};
  CK(cudaMemset(flags, 0, kFlags * sizeof(unsigned)));
  CK(cudaMemset(code, 0xff, sizeof(int)));  // -1: the launcher kernel did not run
  CK(cudaDeviceSynchronize());

  cudaGraph_t child = build_child(variant, flags, expect);
  cudaGraph_t work;
  CK(cudaGraphCreate(&work, 0));
  cudaGraphNode_t first = add_mark(work, flags, 0, nullptr, 0);
  cudaGraphNode_t child_node;
  CK(cudaGraphAddChildGraphNode(&child_node, work, &first, 1, child));  // clones `child`
  CK(cudaGraphDestroy(child));

  printf("%s: ", variant);
  cudaGraphInstantiateParams ip = {};
  ip.flags = cudaGraphInstantiateFlagDeviceLaunch;
  cudaGraphExec_t exec = nullptr;
  cudaError_t inst = cudaGraphInstantiateWithParams(&exec, work, &ip);
  (void)cudaGetLastError();  // a refusal also sets the last error: clear it
  printf("instantiate=%s info=%d", cudaGetErrorName(inst), (int)ip.result_out);
  if (inst != cudaSuccess) {
    printf(" -> REFUSED\n");
    CK(cudaGraphDestroy(work));
    return 0;
  }
  cudaError_t up = cudaGraphUpload(exec, stream);
  printf(" upload=%s", cudaGetErrorName(up));
  if (up != cudaSuccess) {
    printf(" -> WRONG (accepted, not uploadable)\n");
    (void)cudaGetLastError();
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(work));
    return 1;
  }

  // The launcher: a one-kernel graph instantiated for device launch, launched from the host
  // (a kernel on a plain stream may not launch graphs: cudaErrorNotSupported).
  cudaGraph_t lg;
  CK(cudaGraphCreate(&lg, 0));
  void* args[] = {&exec, &code};
  cudaKernelNodeParams p = {};
  p.func = (void*)launch_one;
  p.gridDim = dim3(1);
  p.blockDim = dim3(1);
  p.kernelParams = args;
  cudaGraphNode_t ln;
  CK(cudaGraphAddKernelNode(&ln, lg, nullptr, 0, &p));
  cudaGraphExec_t launcher;
  CK(cudaGraphInstantiateWithFlags(&launcher, lg, cudaGraphInstantiateFlagDeviceLaunch));
  CK(cudaGraphUpload(launcher, stream));
  CK(cudaGraphLaunch(launcher, stream));
  cudaError_t sync = cudaStreamSynchronize(stream);
  int device_code = 0;
  unsigned got[kFlags] = {};
  if (sync == cudaSuccess) {
    CK(cudaMemcpy(&device_code, code, sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(got, flags, sizeof(got), cudaMemcpyDeviceToHost));
  }
  printf(" sync=%s device_launch=%d (%s) ran=", cudaGetErrorName(sync), device_code,
         device_code >= 0 ? cudaGetErrorName((cudaError_t)device_code) : "launcher did not run");
  bool ok = sync == cudaSuccess && device_code == 0;
  for (int i = 0; i < kFlags; ++i) {
    printf("%u", got[i]);
    if ((got[i] == 1) != expect[i]) ok = false;
  }
  printf(" expected=");
  for (int i = 0; i < kFlags; ++i) printf("%d", expect[i] ? 1 : 0);
  printf(" -> %s\n", ok ? "OK" : "WRONG");
  if (sync != cudaSuccess) {
    fprintf(stderr, "%s: the stream failed (%s); a sticky error ends the probe\n", variant, cudaGetErrorName(sync));
    exit(1);
  }
  CK(cudaGraphExecDestroy(launcher));
  CK(cudaGraphDestroy(lg));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(work));
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  int driver = 0, runtime = 0;
  CK(cudaDriverGetVersion(&driver));
  CK(cudaRuntimeGetVersion(&runtime));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s, driver %d, runtime %d\n", prop.name, driver, runtime);

  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  unsigned* flags;
  int* code;
  CK(cudaMalloc(&flags, kFlags * sizeof(unsigned)));
  CK(cudaMalloc(&code, sizeof(int)));

  const char* all[] = {"kernel", "memset", "mixed", "nested", "empty"};
  int wrong = 0;
  if (argc > 1) {
    for (int i = 1; i < argc; ++i) wrong |= probe(argv[i], stream, flags, code);
  } else {
    for (const char* v : all) wrong |= probe(v, stream, flags, code);
  }
  CK(cudaFree(flags));
  CK(cudaFree(code));
  CK(cudaStreamDestroy(stream));
  return wrong;
}
