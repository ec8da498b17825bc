//! What a kernel node launches, read through the driver (`cuGraphKernelNodeGetParams`).
//!
//! The runtime's `cudaGraphKernelNodeGetParams` answers `cudaErrorInvalidDeviceFunction` for
//! nodes of a library's kernels (a [`Module`](crate::kernel::Module)'s, or NCCL's recorded by
//! capture): it has no entry function to return for them. A failing call is what
//! compute-sanitizer reports by default, so this crate never makes it: the driver's call
//! reads every kernel node, giving the node's function (`CUfunction`) always and its library
//! kernel (`CUkernel`) where the node was made from one (runtime kernels and library kernels
//! both; a module function launched through the driver has none).

use std::ffi::{c_void, CStr};
use std::ptr;

use crate::driver::{check_driver, function};
use crate::error::Result;
use crate::kernel::{Dim3, LaunchConfig};
use crate::runtime as sys;

/// A kernel node as the driver reads it (handles as numbers: a value read back is data, and
/// stays `Send`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KernelNodeRead {
    /// Grid, block and dynamic shared memory.
    pub config: LaunchConfig,
    /// The node's function in its context (`CUfunction`; never 0 for a kernel node).
    pub function: usize,
    /// The library kernel the node was made from (`CUkernel`), or 0.
    pub kernel: usize,
}

/// Reads the kernel node `node`.
///
/// # Safety
/// `node` is a live kernel node, held by the caller for the call.
pub(crate) unsafe fn read(node: sys::cudaGraphNode_t) -> Result<KernelNodeRead> {
    const CALL: &str = "cudaGetDriverEntryPointByVersion(cuGraphKernelNodeGetParams)";
    // SAFETY: PFN_cuGraphKernelNodeGetParams transcribes the C signature at 12.0, whose
    // parameter struct is CUDA_KERNEL_NODE_PARAMS_v2.
    let get: sys::PFN_cuGraphKernelNodeGetParams = unsafe {
        function(sys::CU_GRAPH_KERNEL_NODE_GET_PARAMS, sys::CU_GRAPH_KERNEL_NODE_GET_PARAMS_VERSION, CALL)
    }?;
    let mut raw = sys::CUDA_KERNEL_NODE_PARAMS_v2::default();
    // SAFETY: `node` is a live kernel node (the caller's promise); `raw` is a writable struct of
    // the layout this version fills.
    check_driver(unsafe { get(node, &mut raw) }, "cuGraphKernelNodeGetParams")?;
    Ok(KernelNodeRead {
        config: LaunchConfig {
            grid: Dim3 { x: raw.gridDimX, y: raw.gridDimY, z: raw.gridDimZ },
            block: Dim3 { x: raw.blockDimX, y: raw.blockDimY, z: raw.blockDimZ },
            shared_mem_bytes: raw.sharedMemBytes,
        },
        function: raw.func as usize,
        kernel: raw.kern as usize,
    })
}

/// The name of `node_function` (a function a kernel node read back gave), or `None` where the
/// driver cannot say.
pub(crate) fn name(node_function: usize) -> Result<Option<String>> {
    const CALL: &str = "cudaGetDriverEntryPointByVersion(cuFuncGetName)";
    if node_function == 0 {
        return Ok(None);
    }
    // SAFETY: PFN_cuFuncGetName transcribes cuFuncGetName's C signature at 12.3.
    let get_name: sys::PFN_cuFuncGetName =
        unsafe { function(sys::CU_FUNC_GET_NAME, sys::CU_FUNC_GET_NAME_VERSION, CALL) }?;
    let mut name: *const std::ffi::c_char = ptr::null();
    // SAFETY: `node_function` is a function a kernel node of a live graph holds; `name` is a valid
    // out-pointer.
    if unsafe { get_name(&mut name, node_function as sys::cudaFunction_t) } != 0 || name.is_null() {
        return Ok(None);
    }
    // SAFETY: the driver returns a NUL-terminated name that lives as long as the function's
    // module; it is copied at once.
    Ok(Some(unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()))
}

/// Whether the node read as `read` launches the kernel whose launch handle is `handle` (a
/// host stub, or a library's `cudaKernel_t`): compared by library kernel, the handle every
/// runtime and library kernel has in any context; a node without one (a module function
/// launched through the driver) launches none of this crate's kernels.
pub(crate) fn launches(
    read: &KernelNodeRead, handle: *const c_void, is_library_kernel: bool,
) -> Result<bool> {
    if read.kernel == 0 {
        return Ok(false);
    }
    let kernel = if is_library_kernel {
        handle as usize
    } else {
        let mut kernel: sys::cudaKernel_t = ptr::null_mut();
        crate::error::check(
            // SAFETY: `handle` is a host stub of this program (a `Kernel`'s entry) and `kernel`
            // a valid out-pointer.
            unsafe { sys::cudaGetKernel(&mut kernel, handle) },
            "cudaGetKernel",
        )?;
        kernel as usize
    };
    Ok(kernel == read.kernel)
}
