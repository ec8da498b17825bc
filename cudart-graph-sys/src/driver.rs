//! Driver functions reached through `cudaGetDriverEntryPointByVersion`, declared by hand:
//! the runtime hands out their addresses, and these are their C signatures from `cuda.h`.

use crate::bindings::cudaFunction_t;

/// `CUresult` (the driver's status code; 0 is success).
pub type CUresult = ::core::ffi::c_int;

/// The driver symbol name of [`PFN_cuFuncGetParamInfo`], NUL-terminated for the entry-point
/// lookup.
pub const CU_FUNC_GET_PARAM_INFO: &[u8] = b"cuFuncGetParamInfo\0";

/// The driver version (12.4) that introduced `cuFuncGetParamInfo`; ask for that version.
pub const CU_FUNC_GET_PARAM_INFO_VERSION: ::core::ffi::c_uint = 12040;

/// `CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t* paramOffset,
/// size_t* paramSize)`: the offset and size of one kernel parameter. An index past the last
/// parameter returns `CUDA_ERROR_INVALID_VALUE` (1), which is how parameters are counted.
pub type PFN_cuFuncGetParamInfo = unsafe extern "C" fn(
    func: cudaFunction_t,
    param_index: usize,
    param_offset: *mut usize,
    param_size: *mut usize,
) -> CUresult;

/// `CUDA_ERROR_INVALID_VALUE`.
pub const CUDA_ERROR_INVALID_VALUE: CUresult = 1;

/// `CUdevice`: the driver's device handle (an ordinal).
pub type CUdevice = ::core::ffi::c_int;

/// The driver symbol name of [`PFN_cuDeviceGet`], NUL-terminated.
pub const CU_DEVICE_GET: &[u8] = b"cuDeviceGet\0";

/// The driver version (2.0) of the `cuDeviceGet` signature below.
pub const CU_DEVICE_GET_VERSION: ::core::ffi::c_uint = 2000;

/// `CUresult cuDeviceGet(CUdevice* device, int ordinal)`: the handle of device `ordinal`.
pub type PFN_cuDeviceGet =
    unsafe extern "C" fn(device: *mut CUdevice, ordinal: ::core::ffi::c_int) -> CUresult;

/// The driver symbol name of [`PFN_cuDevicePrimaryCtxGetState`], NUL-terminated.
pub const CU_DEVICE_PRIMARY_CTX_GET_STATE: &[u8] = b"cuDevicePrimaryCtxGetState\0";

/// The driver version (7.0) that introduced `cuDevicePrimaryCtxGetState`.
pub const CU_DEVICE_PRIMARY_CTX_GET_STATE_VERSION: ::core::ffi::c_uint = 7000;

/// `CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active)`:
/// whether the device's primary context (the one the runtime uses) is active, and its flags.
pub type PFN_cuDevicePrimaryCtxGetState = unsafe extern "C" fn(
    dev: CUdevice,
    flags: *mut ::core::ffi::c_uint,
    active: *mut ::core::ffi::c_int,
) -> CUresult;

/// `CUkernel`: a kernel of a library, independent of any context (the runtime's
/// `cudaKernel_t` is the same handle).
pub type CUkernel = *mut ::core::ffi::c_void;

/// `CUcontext`: a driver context.
pub type CUcontext = *mut ::core::ffi::c_void;

/// `CUDA_KERNEL_NODE_PARAMS_v2` from `cuda.h`: a kernel node as the driver describes it.
/// Reading a node fills `func` with the function in the node's context, whether the node was
/// made from a runtime kernel, a library kernel or a module function; `kern` is set for the
/// first two.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CUDA_KERNEL_NODE_PARAMS_v2 {
    /// The kernel's function (`CUfunction`).
    pub func: cudaFunction_t,
    /// Grid width in blocks.
    pub gridDimX: ::core::ffi::c_uint,
    /// Grid height in blocks.
    pub gridDimY: ::core::ffi::c_uint,
    /// Grid depth in blocks.
    pub gridDimZ: ::core::ffi::c_uint,
    /// Block width in threads.
    pub blockDimX: ::core::ffi::c_uint,
    /// Block height in threads.
    pub blockDimY: ::core::ffi::c_uint,
    /// Block depth in threads.
    pub blockDimZ: ::core::ffi::c_uint,
    /// Dynamic shared memory per block, in bytes.
    pub sharedMemBytes: ::core::ffi::c_uint,
    /// Pointers to the argument values.
    pub kernelParams: *mut *mut ::core::ffi::c_void,
    /// Extra launch options.
    pub extra: *mut *mut ::core::ffi::c_void,
    /// The library kernel, when the node was made from one.
    pub kern: CUkernel,
    /// The context the node runs in.
    pub ctx: CUcontext,
}

impl Default for CUDA_KERNEL_NODE_PARAMS_v2 {
    fn default() -> Self {
        CUDA_KERNEL_NODE_PARAMS_v2 {
            func: ::core::ptr::null_mut(),
            gridDimX: 0,
            gridDimY: 0,
            gridDimZ: 0,
            blockDimX: 0,
            blockDimY: 0,
            blockDimZ: 0,
            sharedMemBytes: 0,
            kernelParams: ::core::ptr::null_mut(),
            extra: ::core::ptr::null_mut(),
            kern: ::core::ptr::null_mut(),
            ctx: ::core::ptr::null_mut(),
        }
    }
}

/// The driver symbol name of [`PFN_cuGraphKernelNodeGetParams`], NUL-terminated.
pub const CU_GRAPH_KERNEL_NODE_GET_PARAMS: &[u8] = b"cuGraphKernelNodeGetParams\0";

/// The driver version (12.0) whose `cuGraphKernelNodeGetParams` takes
/// [`CUDA_KERNEL_NODE_PARAMS_v2`].
pub const CU_GRAPH_KERNEL_NODE_GET_PARAMS_VERSION: ::core::ffi::c_uint = 12000;

/// `CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS* nodeParams)`
/// (the 12.0 signature): unlike the runtime's `cudaGraphKernelNodeGetParams`, it reads kernel
/// nodes of library and module kernels too.
pub type PFN_cuGraphKernelNodeGetParams = unsafe extern "C" fn(
    node: crate::bindings::cudaGraphNode_t,
    params: *mut CUDA_KERNEL_NODE_PARAMS_v2,
) -> CUresult;

/// The driver symbol name of [`PFN_cuFuncGetName`], NUL-terminated.
pub const CU_FUNC_GET_NAME: &[u8] = b"cuFuncGetName\0";

/// The driver version (12.3) that introduced `cuFuncGetName`.
pub const CU_FUNC_GET_NAME_VERSION: ::core::ffi::c_uint = 12030;

/// `CUresult cuFuncGetName(const char** name, CUfunction hfunc)`: the function's (mangled)
/// name, owned by the driver.
pub type PFN_cuFuncGetName =
    unsafe extern "C" fn(name: *mut *const ::core::ffi::c_char, func: cudaFunction_t) -> CUresult;

/// The driver symbol name of [`PFN_cuKernelGetFunction`], NUL-terminated.
pub const CU_KERNEL_GET_FUNCTION: &[u8] = b"cuKernelGetFunction\0";

/// The driver version (12.0) that introduced `cuKernelGetFunction`.
pub const CU_KERNEL_GET_FUNCTION_VERSION: ::core::ffi::c_uint = 12000;

/// `CUresult cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel)`: the library kernel's
/// function in the current context.
pub type PFN_cuKernelGetFunction =
    unsafe extern "C" fn(func: *mut cudaFunction_t, kernel: CUkernel) -> CUresult;

/// `CUlaunchConfig` from `cuda.h`: a launch's geometry, stream and attributes, as
/// `cuLaunchKernelEx` takes them. The attributes are the runtime's `cudaLaunchAttribute`, which
/// `cuda.h`'s `CUlaunchAttribute` matches field for field (a 4-byte id, 4 bytes of padding, a
/// 64-byte value union) with the same id and value numbering.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CUlaunchConfig {
    /// Grid width in blocks.
    pub gridDimX: ::core::ffi::c_uint,
    /// Grid height in blocks.
    pub gridDimY: ::core::ffi::c_uint,
    /// Grid depth in blocks.
    pub gridDimZ: ::core::ffi::c_uint,
    /// Block width in threads.
    pub blockDimX: ::core::ffi::c_uint,
    /// Block height in threads.
    pub blockDimY: ::core::ffi::c_uint,
    /// Block depth in threads.
    pub blockDimZ: ::core::ffi::c_uint,
    /// Dynamic shared memory per block, in bytes.
    pub sharedMemBytes: ::core::ffi::c_uint,
    /// The stream (`CUstream`, the runtime's `cudaStream_t`).
    pub hStream: crate::bindings::cudaStream_t,
    /// `numAttrs` attributes, or null.
    pub attrs: *mut crate::bindings::cudaLaunchAttribute,
    /// How many attributes `attrs` points at.
    pub numAttrs: ::core::ffi::c_uint,
}

/// The driver symbol name of [`PFN_cuLaunchKernelEx`], NUL-terminated.
pub const CU_LAUNCH_KERNEL_EX: &[u8] = b"cuLaunchKernelEx\0";

/// The driver version (11.8) that introduced `cuLaunchKernelEx`.
pub const CU_LAUNCH_KERNEL_EX_VERSION: ::core::ffi::c_uint = 11080;

/// `CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
/// void** extra)`: launches `f` (a `CUfunction`, or a [`CUkernel`], which the driver resolves in
/// the current context) with `config`.
pub type PFN_cuLaunchKernelEx = unsafe extern "C" fn(
    config: *const CUlaunchConfig,
    f: cudaFunction_t,
    kernel_params: *mut *mut ::core::ffi::c_void,
    extra: *mut *mut ::core::ffi::c_void,
) -> CUresult;

/// The driver symbol name of [`PFN_cuCtxGetCurrent`], NUL-terminated.
pub const CU_CTX_GET_CURRENT: &[u8] = b"cuCtxGetCurrent\0";

/// The driver version (4.0) of the `cuCtxGetCurrent` signature below.
pub const CU_CTX_GET_CURRENT_VERSION: ::core::ffi::c_uint = 4000;

/// `CUresult cuCtxGetCurrent(CUcontext* pctx)`: the calling thread's current context (null
/// when none is).
pub type PFN_cuCtxGetCurrent = unsafe extern "C" fn(context: *mut CUcontext) -> CUresult;

/// The driver symbol name of [`PFN_cuStreamGetCtx`], NUL-terminated.
pub const CU_STREAM_GET_CTX: &[u8] = b"cuStreamGetCtx\0";

/// The driver version (9.2) of the `cuStreamGetCtx` signature below.
pub const CU_STREAM_GET_CTX_VERSION: ::core::ffi::c_uint = 9020;

/// `CUresult cuStreamGetCtx(CUstream hStream, CUcontext* pctx)`: the context `hStream` belongs
/// to.
pub type PFN_cuStreamGetCtx =
    unsafe extern "C" fn(stream: crate::bindings::cudaStream_t, context: *mut CUcontext) -> CUresult;

/// The driver symbol name of [`PFN_cuGraphNodeGetType`], NUL-terminated.
pub const CU_GRAPH_NODE_GET_TYPE: &[u8] = b"cuGraphNodeGetType\0";

/// The driver version (10.0) of the `cuGraphNodeGetType` signature below.
pub const CU_GRAPH_NODE_GET_TYPE_VERSION: ::core::ffi::c_uint = 10000;

/// `CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType* type)`: the node's type, by
/// the runtime's numbering (`cudaGraphNodeType`), and also for the kinds only the driver makes
/// (batch memory operations, 12), whose type the runtime's `cudaGraphNodeGetType` fails to
/// report (`cudaErrorUnknown` on CUDA 13.0).
pub type PFN_cuGraphNodeGetType = unsafe extern "C" fn(
    node: crate::bindings::cudaGraphNode_t,
    node_type: *mut ::core::ffi::c_uint,
) -> CUresult;
