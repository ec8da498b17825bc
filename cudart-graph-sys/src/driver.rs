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
