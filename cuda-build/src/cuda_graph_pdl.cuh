// cuda_graph_pdl.cuh: shipped by the `cuda-build` crate (on the include path of every kernel
// build it runs). The device half of programmatic dependent launch (PDL): what a kernel calls
// when it is joined to the kernel before it by a programmatic edge
// (`cuda_graph::graph::Dependency::programmatic`, or a stream launch with
// `LaunchAttributes::programmatic_serialization`, captured or not).
//
//     #include "cuda_graph_pdl.cuh"
//     extern "C" __global__ void step(cuda_graph::slice<float> data, cuda_graph::slice<const float> weights) {
//         cuda_graph::pdl::launch_dependents();  // the next kernel may start launching now
//         float w = weights[threadIdx.x];         // no kernel before this one writes `weights`
//         cuda_graph::pdl::wait_upstream();       // the kernel before has completed, writes visible
//         data[threadIdx.x] *= w;                 // it wrote `data`: only after the wait
//     }
//
// How it runs: with a programmatic edge, the dependent kernel is launched as soon as every
// block of the kernel before it has called `launch_dependents()` or exited, instead of after
// that kernel completed. Its blocks then run up to `wait_upstream()`, which returns once the
// kernels before it (the "upstream" of its programmatic edges) have completed and their
// memory writes are visible to it. That hides the gap between two kernels of a chain.
//
// What a kernel reached by a programmatic edge may do BEFORE `wait_upstream()`:
//   - compute from its arguments; read memory that no upstream kernel writes (weights,
//     constants, its own inputs made before the graph or stream work started);
//   - set up shared memory, registers, prefetch such read-only data;
//   - call `launch_dependents()`.
// What it must NOT do before `wait_upstream()`:
//   - read memory an upstream kernel writes (it may see old values, or a mix);
//   - write memory an upstream kernel reads or writes (a race with that kernel);
//   - assume anything about the upstream kernel's progress.
// A kernel that never calls `wait_upstream()` is not ordered after its upstream kernel at all,
// and neither are the nodes that depend on it through plain edges: call it in every kernel
// that is the target of a programmatic edge, before its first access to shared data, in
// every thread that makes such an access. In a kernel without programmatic dependencies it
// returns at once, so calling it unconditionally is always correct.
//
// What the UPSTREAM kernel may do after `launch_dependents()`: anything. The trigger only lets
// the dependent kernel be launched early; the dependent's `wait_upstream()` still waits for
// the upstream kernel's completion and all its writes, those made after the trigger included.
// Where to trigger is a measurement: early (first thing) lets the dependent start its own work
// before its wait sooner; late (after the main loop) keeps the dependent's blocks, resident and
// waiting, from taking resources the upstream kernel's remaining blocks need. For a chain of
// one-thread `*c += 1` kernels, triggering last was faster on an H100 and triggering first on
// an H200 (CUDA 13.0, driver 580). A kernel that never calls it triggers when it exits. A
// block triggers at the first call by any of its threads; later calls have no effect (PTX
// `griddepcontrol.launch_dependents`).
//
// Both compile to nothing below sm_90 (CUDA runs PDL on sm_90 and later; on older devices the
// crates refuse programmatic edges and attributes before launching).
#pragma once

#include <cuda_runtime.h>

namespace cuda_graph {
namespace pdl {

// Waits until every kernel this kernel depends on through a programmatic edge (or the kernel
// before it on the stream, for a launch with programmatic serialization) has completed and
// its memory writes are visible (`cudaGridDependencySynchronize`; it waits for the calling
// thread). Returns at once when there is none.
__device__ __forceinline__ void wait_upstream() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();
#endif
}

// Lets the kernels that depend on this one through a programmatic edge be launched once every
// block of this kernel has called it (one thread per block is enough) or exited
// (`cudaTriggerProgrammaticLaunchCompletion`).
// Their `wait_upstream()` still waits for this kernel's completion.
__device__ __forceinline__ void launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaTriggerProgrammaticLaunchCompletion();
#endif
}

}  // namespace pdl
}  // namespace cuda_graph
