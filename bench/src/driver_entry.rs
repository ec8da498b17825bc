//! The driver's functions the probes call directly (`bench/examples`), looked up through the
//! runtime (`cudaGetDriverEntryPointByVersion`), so that no probe links the driver library.

use std::ffi::{c_void, CStr};

use cuda_graph::{sys, CudaError};

use crate::error::Result;

/// The address of the driver function `name` at ABI `version` (e.g. 12000 for CUDA 12.0's);
/// `cudaErrorSymbolNotFound` when the driver lacks it. The caller transmutes it to the function's C signature.
///
/// ```no_run
/// let entry = cuda_graph_bench::driver_entry::entry_point(c"cuCtxGetCurrent", 4000)?;
/// assert!(!entry.is_null());
/// # Ok::<(), cuda_graph_bench::BenchError>(())
/// ```
pub fn entry_point(name: &CStr, version: u32) -> Result<*mut c_void> {
    let mut entry: *mut c_void = std::ptr::null_mut();
    let mut found = sys::cudaDriverEntryPointQueryResult::cudaDriverEntryPointSymbolNotFound;
    // SAFETY: NUL-terminated name, valid out-pointers, default flags.
    let status = unsafe {
        sys::cudaGetDriverEntryPointByVersion(
            name.as_ptr(),
            &mut entry,
            version,
            sys::cudaGetDriverEntryPointFlags::cudaEnableDefault.0 as u64,
            &mut found,
        )
    };
    if status != sys::cudaError::cudaSuccess {
        return Err(CudaError::from_code(status.0 as i32, "cudaGetDriverEntryPointByVersion").into());
    }
    if found != sys::cudaDriverEntryPointQueryResult::cudaDriverEntryPointSuccess || entry.is_null() {
        return Err(crate::BenchError::WrongResult(format!(
            "the driver has no {name:?} at version {version}"
        )));
    }
    Ok(entry)
}
