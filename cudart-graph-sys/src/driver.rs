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
