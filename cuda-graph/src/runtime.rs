//! The CUDA runtime as this crate calls it: the bindings of `cudart-graph-sys`, except that
//! every call this crate makes that returns a status refuses to run inside a host function
//! (a closure of [`Stream::launch_host_fn`](crate::Stream::launch_host_fn), a graph host node,
//! a waker polled there), where CUDA forbids CUDA calls (they may deadlock, or fail, as CUDA
//! leaves it open). Such a call returns `cudaErrorNotPermitted` without reaching CUDA, and
//! [`check`](crate::error) turns that into an error saying why. So every function of this crate
//! that calls CUDA returns `Err` there, never hangs.
//!
//! Every module uses this one (`use crate::runtime as sys;`), never `cudart_graph_sys`
//! directly: `tests/layers.rs` fails on a direct use, and on a call of a CUDA function this
//! module does not guard. A new call is added to the list below. The cost is one read of a
//! thread-local flag per call.
//!
//! The flag is set by `release::run_in_host_fn` for the body of each host function.
//!
//! The calls that make something bound to the current context (streams, events, memory,
//! execs, symbol and function lookups) first make the primary context of the thread's current
//! device current: the crate never trusts the thread's context to be the one it last set. The
//! few listed in [`bound`] skip that step and are called only inside
//! [`Device::with_current`](crate::Device::with_current), which has just made the right primary
//! context current.

use std::cell::Cell;

mod primary;

pub(crate) use cudart_graph_sys::*;
pub(crate) use primary::{
    current_context, primary_context, primary_is_current, record as record_primary_context,
    record_after_set as record_primary_after_set,
};

thread_local! {
    /// True while this thread runs a host function of this crate.
    static IN_HOST_FN: Cell<bool> = const { Cell::new(false) };
}

/// True while the calling thread runs a host function of this crate, where CUDA calls are
/// forbidden.
#[inline]
pub(crate) fn in_host_fn() -> bool {
    IN_HOST_FN.try_with(Cell::get).unwrap_or(false)
}

/// Runs `body` (a host function's) with the flag set, restoring what it was (host functions
/// do not nest, but a panic-free restore costs nothing).
pub(crate) fn with_host_fn_flag<R>(body: impl FnOnce() -> R) -> R {
    let outer = IN_HOST_FN.try_with(|flag| flag.replace(true)).unwrap_or(false);
    let result = body();
    let _ = IN_HOST_FN.try_with(|flag| flag.set(outer));
    result
}

/// Defines, for each CUDA function listed, a function of the same name and signature that
/// returns `cudaErrorNotPermitted` inside a host function and calls CUDA otherwise.
macro_rules! refused_in_host_functions {
    ($(fn $name:ident($($arg:ident: $ty:ty),* $(,)?);)*) => {$(
        #[inline(always)]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        pub(crate) unsafe extern "C" fn $name($($arg: $ty),*) -> cudaError_t {
            if in_host_fn() {
                return cudaError::cudaErrorNotPermitted;
            }
            // SAFETY: the same call with the same arguments, under the caller's promise.
            unsafe { cudart_graph_sys::$name($($arg),*) }
        }
    )*};
    (primary_context_first; $($(#[$meta:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?);)*) => {$(
        $(#[$meta])*
        #[inline(always)]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        pub(crate) unsafe extern "C" fn $name($($arg: $ty),*) -> cudaError_t {
            if in_host_fn() {
                return cudaError::cudaErrorNotPermitted;
            }
            let bound = bind_primary_context();
            if bound != cudaError::cudaSuccess {
                return bound;
            }
            // SAFETY: the same call with the same arguments, under the caller's promise.
            unsafe { cudart_graph_sys::$name($($arg),*) }
        }
    )*};
}

/// Makes the primary context of the thread's current device current (`cudaGetDevice`, then
/// `cudaSetDevice`, which binds a device's primary context): other code on the thread (cudarc's
/// `CudaContext::new_non_primary`, raw driver calls) may have made another context of the
/// device current, and what this crate makes must live in the primary one, which only
/// `cudaDeviceReset` (never called here) tears down. A stream, event, buffer or exec made in
/// a context another library destroys would dangle.
fn bind_primary_context() -> cudaError_t {
    if primary::current_is_primary() {
        // Bound already: what the two calls below would leave (see `primary`).
        return cudaError::cudaSuccess;
    }
    let mut device = 0;
    // SAFETY: `device` is a valid, writable int.
    let status = unsafe { cudart_graph_sys::cudaGetDevice(&mut device) };
    if status != cudaError::cudaSuccess {
        return status;
    }
    // SAFETY: plain call on the ordinal CUDA just gave.
    unsafe { cudart_graph_sys::cudaSetDevice(device) }
}

refused_in_host_functions! {
    fn cudaDeviceCanAccessPeer(canAccessPeer: *mut core::ffi::c_int, device: core::ffi::c_int, peerDevice: core::ffi::c_int);
    fn cudaDeviceEnablePeerAccess(peerDevice: core::ffi::c_int, flags: core::ffi::c_uint);
    fn cudaDeviceGetAttribute(value: *mut core::ffi::c_int, attr: cudaDeviceAttr, device: core::ffi::c_int);
    fn cudaDeviceGetGraphMemAttribute(device: core::ffi::c_int, attr: cudaGraphMemAttributeType, value: *mut core::ffi::c_void);
    fn cudaDeviceGetLimit(pValue: *mut usize, limit: cudaLimit);
    fn cudaDeviceGetStreamPriorityRange(leastPriority: *mut core::ffi::c_int, greatestPriority: *mut core::ffi::c_int);
    fn cudaDeviceGraphMemTrim(device: core::ffi::c_int);
    fn cudaDeviceSetGraphMemAttribute(device: core::ffi::c_int, attr: cudaGraphMemAttributeType, value: *mut core::ffi::c_void);
    fn cudaDeviceSetLimit(limit: cudaLimit, value: usize);
    fn cudaDeviceSynchronize();
    fn cudaEventDestroy(event: cudaEvent_t);
    fn cudaEventElapsedTime(ms: *mut f32, start: cudaEvent_t, end: cudaEvent_t);
    fn cudaEventQuery(event: cudaEvent_t);
    fn cudaEventRecord(event: cudaEvent_t, stream: cudaStream_t);
    fn cudaEventSynchronize(event: cudaEvent_t);
    fn cudaFree(devPtr: *mut core::ffi::c_void);
    fn cudaFreeAsync(devPtr: *mut core::ffi::c_void, hStream: cudaStream_t);
    fn cudaFreeHost(ptr: *mut core::ffi::c_void);
    fn cudaFuncGetName(name: *mut *const core::ffi::c_char, func: *const core::ffi::c_void);
    fn cudaFuncGetParamInfo(func: *const core::ffi::c_void, paramIndex: usize, paramOffset: *mut usize, paramSize: *mut usize);
    fn cudaGetDevice(device: *mut core::ffi::c_int);
    fn cudaGetDeviceCount(count: *mut core::ffi::c_int);
    fn cudaGetDeviceProperties(prop: *mut cudaDeviceProp, device: core::ffi::c_int);
    fn cudaGetDriverEntryPointByVersion(symbol: *const core::ffi::c_char, funcPtr: *mut *mut core::ffi::c_void, cudaVersion: core::ffi::c_uint, flags: core::ffi::c_ulonglong, driverStatus: *mut cudaDriverEntryPointQueryResult);
    fn cudaGetLastError();
    fn cudaGraphAddDependencies(graph: cudaGraph_t, from: *const cudaGraphNode_t, to: *const cudaGraphNode_t, edgeData: *const cudaGraphEdgeData, numDependencies: usize);
    fn cudaGraphChildGraphNodeGetGraph(node: cudaGraphNode_t, pGraph: *mut cudaGraph_t);
    fn cudaGraphClone(pGraphClone: *mut cudaGraph_t, originalGraph: cudaGraph_t);
    fn cudaGraphConditionalHandleCreate(pHandle_out: *mut cudaGraphConditionalHandle, graph: cudaGraph_t, defaultLaunchValue: core::ffi::c_uint, flags: core::ffi::c_uint);
    fn cudaGraphCreate(pGraph: *mut cudaGraph_t, flags: core::ffi::c_uint);
    fn cudaGraphDebugDotPrint(graph: cudaGraph_t, path: *const core::ffi::c_char, flags: core::ffi::c_uint);
    fn cudaGraphDestroy(graph: cudaGraph_t);
    fn cudaGraphDestroyNode(node: cudaGraphNode_t);
    fn cudaGraphExecDestroy(graphExec: cudaGraphExec_t);
    fn cudaGraphExecGetFlags(graphExec: cudaGraphExec_t, flags: *mut core::ffi::c_ulonglong);
    fn cudaGraphGetEdges(graph: cudaGraph_t, from: *mut cudaGraphNode_t, to: *mut cudaGraphNode_t, edgeData: *mut cudaGraphEdgeData, numEdges: *mut usize);
    fn cudaGraphGetNodes(graph: cudaGraph_t, nodes: *mut cudaGraphNode_t, numNodes: *mut usize);
    fn cudaGraphKernelNodeSetAttribute(hNode: cudaGraphNode_t, attr: cudaLaunchAttributeID, value: *const cudaLaunchAttributeValue);
    fn cudaGraphLaunch(graphExec: cudaGraphExec_t, stream: cudaStream_t);
    fn cudaGraphMemcpyNodeGetParams(node: cudaGraphNode_t, pNodeParams: *mut cudaMemcpy3DParms);
    fn cudaGraphMemsetNodeGetParams(node: cudaGraphNode_t, pNodeParams: *mut cudaMemsetParams);
    fn cudaGraphExecMemcpyNodeSetParams(hGraphExec: cudaGraphExec_t, node: cudaGraphNode_t, pNodeParams: *const cudaMemcpy3DParms);
    fn cudaGraphExecMemsetNodeSetParams(hGraphExec: cudaGraphExec_t, node: cudaGraphNode_t, pNodeParams: *const cudaMemsetParams);
    fn cudaGraphNodeFindInClone(pNode: *mut cudaGraphNode_t, originalNode: cudaGraphNode_t, clonedGraph: cudaGraph_t);
    fn cudaGraphNodeGetDependencies(node: cudaGraphNode_t, pDependencies: *mut cudaGraphNode_t, edgeData: *mut cudaGraphEdgeData, pNumDependencies: *mut usize);
    fn cudaGraphNodeGetDependentNodes(node: cudaGraphNode_t, pDependentNodes: *mut cudaGraphNode_t, edgeData: *mut cudaGraphEdgeData, pNumDependentNodes: *mut usize);
    fn cudaGraphNodeGetEnabled(hGraphExec: cudaGraphExec_t, hNode: cudaGraphNode_t, isEnabled: *mut core::ffi::c_uint);
    fn cudaGraphNodeSetEnabled(hGraphExec: cudaGraphExec_t, hNode: cudaGraphNode_t, isEnabled: core::ffi::c_uint);
    fn cudaGraphRemoveDependencies(graph: cudaGraph_t, from: *const cudaGraphNode_t, to: *const cudaGraphNode_t, edgeData: *const cudaGraphEdgeData, numDependencies: usize);
    fn cudaGraphUpload(graphExec: cudaGraphExec_t, stream: cudaStream_t);
    fn cudaHostGetDevicePointer(pDevice: *mut *mut core::ffi::c_void, pHost: *mut core::ffi::c_void, flags: core::ffi::c_uint);
    fn cudaKernelSetAttributeForDevice(kernel: cudaKernel_t, attr: cudaFuncAttribute, value: core::ffi::c_int, device: core::ffi::c_int);
    fn cudaLaunchHostFunc(stream: cudaStream_t, fn_: cudaHostFn_t, userData: *mut core::ffi::c_void);
    fn cudaLaunchKernel(func: *const core::ffi::c_void, gridDim: dim3, blockDim: dim3, args: *mut *mut core::ffi::c_void, sharedMem: usize, stream: cudaStream_t);
    fn cudaLaunchKernelExC(config: *const cudaLaunchConfig_t, func: *const core::ffi::c_void, args: *mut *mut core::ffi::c_void);
    fn cudaLibraryEnumerateKernels(kernels: *mut cudaKernel_t, numKernels: core::ffi::c_uint, lib: cudaLibrary_t);
    fn cudaLibraryGetKernel(pKernel: *mut cudaKernel_t, library: cudaLibrary_t, name: *const core::ffi::c_char);
    fn cudaLibraryGetKernelCount(count: *mut core::ffi::c_uint, lib: cudaLibrary_t);
    fn cudaLibraryLoadData(library: *mut cudaLibrary_t, code: *const core::ffi::c_void, jitOptions: *mut cudaJitOption, jitOptionsValues: *mut *mut core::ffi::c_void, numJitOptions: core::ffi::c_uint, libraryOptions: *mut cudaLibraryOption, libraryOptionValues: *mut *mut core::ffi::c_void, numLibraryOptions: core::ffi::c_uint);
    fn cudaLibraryUnload(library: cudaLibrary_t);
    fn cudaMallocFromPoolAsync(ptr: *mut *mut core::ffi::c_void, size: usize, memPool: cudaMemPool_t, stream: cudaStream_t);
    fn cudaMemPoolCreate(memPool: *mut cudaMemPool_t, poolProps: *const cudaMemPoolProps);
    fn cudaMemPoolDestroy(memPool: cudaMemPool_t);
    fn cudaMemPoolGetAccess(flags: *mut cudaMemAccessFlags, memPool: cudaMemPool_t, location: *mut cudaMemLocation);
    fn cudaMemPoolGetAttribute(memPool: cudaMemPool_t, attr: cudaMemPoolAttr, value: *mut core::ffi::c_void);
    fn cudaMemPoolSetAccess(memPool: cudaMemPool_t, descList: *const cudaMemAccessDesc, count: usize);
    fn cudaMemPoolSetAttribute(memPool: cudaMemPool_t, attr: cudaMemPoolAttr, value: *mut core::ffi::c_void);
    fn cudaMemPoolTrimTo(memPool: cudaMemPool_t, minBytesToKeep: usize);
    fn cudaMemcpy(dst: *mut core::ffi::c_void, src: *const core::ffi::c_void, count: usize, kind: cudaMemcpyKind);
    fn cudaMemcpy3D(p: *const cudaMemcpy3DParms);
    fn cudaMemcpy3DAsync(p: *const cudaMemcpy3DParms, stream: cudaStream_t);
    fn cudaMemcpyAsync(dst: *mut core::ffi::c_void, src: *const core::ffi::c_void, count: usize, kind: cudaMemcpyKind, stream: cudaStream_t);
    fn cudaMemcpyPeerAsync(dst: *mut core::ffi::c_void, dstDevice: core::ffi::c_int, src: *const core::ffi::c_void, srcDevice: core::ffi::c_int, count: usize, stream: cudaStream_t);
    fn cudaMemset(devPtr: *mut core::ffi::c_void, value: core::ffi::c_int, count: usize);
    fn cudaMemsetAsync(devPtr: *mut core::ffi::c_void, value: core::ffi::c_int, count: usize, stream: cudaStream_t);
    fn cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks: *mut core::ffi::c_int, func: *const core::ffi::c_void, blockSize: core::ffi::c_int, dynamicSMemSize: usize);
    fn cudaPointerGetAttributes(attributes: *mut cudaPointerAttributes, ptr: *const core::ffi::c_void);
    fn cudaSetDevice(device: core::ffi::c_int);
    fn cudaStreamBeginCapture(stream: cudaStream_t, mode: cudaStreamCaptureMode);
    fn cudaStreamBeginCaptureToGraph(stream: cudaStream_t, graph: cudaGraph_t, dependencies: *const cudaGraphNode_t, dependencyData: *const cudaGraphEdgeData, numDependencies: usize, mode: cudaStreamCaptureMode);
    fn cudaStreamDestroy(stream: cudaStream_t);
    fn cudaStreamEndCapture(stream: cudaStream_t, pGraph: *mut cudaGraph_t);
    fn cudaStreamGetCaptureInfo(stream: cudaStream_t, captureStatus_out: *mut cudaStreamCaptureStatus, id_out: *mut core::ffi::c_ulonglong, graph_out: *mut cudaGraph_t, dependencies_out: *mut *const cudaGraphNode_t, edgeData_out: *mut *const cudaGraphEdgeData, numDependencies_out: *mut usize);
    fn cudaStreamGetDevice(hStream: cudaStream_t, device: *mut core::ffi::c_int);
    fn cudaStreamGetFlags(hStream: cudaStream_t, flags: *mut core::ffi::c_uint);
    fn cudaStreamGetPriority(hStream: cudaStream_t, priority: *mut core::ffi::c_int);
    fn cudaStreamIsCapturing(stream: cudaStream_t, pCaptureStatus: *mut cudaStreamCaptureStatus);
    fn cudaStreamQuery(stream: cudaStream_t);
    fn cudaStreamSynchronize(stream: cudaStream_t);
    fn cudaStreamWaitEvent(stream: cudaStream_t, event: cudaEvent_t, flags: core::ffi::c_uint);
}

// Calls that make (or look up) something bound to the current context: the primary context
// of the thread's current device is made current first (see `bind_primary_context`). Adding,
// setting or updating kernel nodes belongs here: the runtime resolves a kernel's host stub to
// a function of the current context, and a node naming a function of a context other code
// destroys later would crash at instantiation (seen on CUDA 13.0 with cudarc's non-primary
// context current).
refused_in_host_functions! {
    primary_context_first;
    fn cudaGraphAddNode(pGraphNode: *mut cudaGraphNode_t, graph: cudaGraph_t, pDependencies: *const cudaGraphNode_t, dependencyData: *const cudaGraphEdgeData, numDependencies: usize, nodeParams: *mut cudaGraphNodeParams);
    fn cudaGraphExecKernelNodeSetParams(hGraphExec: cudaGraphExec_t, node: cudaGraphNode_t, pNodeParams: *const cudaKernelNodeParams);
    fn cudaGraphExecNodeSetParams(graphExec: cudaGraphExec_t, node: cudaGraphNode_t, nodeParams: *mut cudaGraphNodeParams);
    fn cudaGraphExecUpdate(hGraphExec: cudaGraphExec_t, hGraph: cudaGraph_t, resultInfo: *mut cudaGraphExecUpdateResultInfo);
    fn cudaEventCreateWithFlags(event: *mut cudaEvent_t, flags: core::ffi::c_uint);
    fn cudaFuncSetAttribute(func: *const core::ffi::c_void, attr: cudaFuncAttribute, value: core::ffi::c_int);
    fn cudaGetFuncBySymbol(functionPtr: *mut cudaFunction_t, symbolPtr: *const core::ffi::c_void);
    fn cudaGetKernel(kernelPtr: *mut cudaKernel_t, entryFuncAddr: *const core::ffi::c_void);
    fn cudaGetSymbolAddress(devPtr: *mut *mut core::ffi::c_void, symbol: *const core::ffi::c_void);
    fn cudaGetSymbolSize(size: *mut usize, symbol: *const core::ffi::c_void);
    // Kept (unused: the crate calls `bound`'s inside `with_current`) so that the raw binding
    // of the same name never stands in for it.
    #[allow(dead_code)]
    fn cudaGraphInstantiateWithParams(pGraphExec: *mut cudaGraphExec_t, graph: cudaGraph_t, instantiateParams: *mut cudaGraphInstantiateParams);
    fn cudaHostAlloc(pHost: *mut *mut core::ffi::c_void, size: usize, flags: core::ffi::c_uint);
    fn cudaLibraryGetGlobal(dptr: *mut *mut core::ffi::c_void, bytes: *mut usize, library: cudaLibrary_t, name: *const core::ffi::c_char);
    fn cudaMalloc(devPtr: *mut *mut core::ffi::c_void, size: usize);
    fn cudaMalloc3D(pitchedDevPtr: *mut cudaPitchedPtr, extent: cudaExtent);
    fn cudaMallocHost(ptr: *mut *mut core::ffi::c_void, size: usize);
    fn cudaMallocPitch(devPtr: *mut *mut core::ffi::c_void, pitch: *mut usize, width: usize, height: usize);
    fn cudaStreamCreateWithFlags(pStream: *mut cudaStream_t, flags: core::ffi::c_uint);
    fn cudaStreamCreateWithPriority(pStream: *mut cudaStream_t, flags: core::ffi::c_uint, priority: core::ffi::c_int);
}

/// Context-bound calls for callers that have made the right primary context current
/// themselves: inside [`Device::with_current`](crate::Device::with_current), which has just
/// asked the driver (or bound the device), so the binding above would only ask again (one
/// `cuCtxGetCurrent` a call). Still refused inside host functions.
pub(crate) mod bound {
    use super::*;

    refused_in_host_functions! {
        fn cudaGraphExecUpdate(hGraphExec: cudaGraphExec_t, hGraph: cudaGraph_t, resultInfo: *mut cudaGraphExecUpdateResultInfo);
        fn cudaGraphInstantiateWithParams(pGraphExec: *mut cudaGraphExec_t, graph: cudaGraph_t, instantiateParams: *mut cudaGraphInstantiateParams);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_inside_a_host_function_are_refused_before_cuda() {
        // No device needed: the refusal comes before CUDA is called.
        let mut count = 0;
        // SAFETY: `count` is a valid, writable int; the call is refused before CUDA sees it.
        let refused = with_host_fn_flag(|| unsafe { cudaGetDeviceCount(&mut count) });
        assert_eq!(refused, cudaError::cudaErrorNotPermitted);
        assert!(!in_host_fn());
    }
}
