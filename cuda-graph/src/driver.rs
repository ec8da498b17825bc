//! Driver functions the runtime hands out (`cudaGetDriverEntryPointByVersion`), for what the
//! runtime API lacks: a kernel's parameter layout (`kernel::abi`), whether a device's
//! primary context is active (`device`), and the cheaper stream launch
//! (`kernel::driver_launch`): `cuLaunchKernelEx`, a stream's context, a kernel's function in
//! the current context (the current context itself: `runtime::primary`).

use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::OnceLock;

use crate::runtime as sys;

use crate::error::{check, CudaError, Result};

/// The driver function `symbol` (a NUL-terminated name) with the C signature it had at driver
/// version `version`, as the function pointer type `F` (`cudaGetDriverEntryPointByVersion`,
/// default search); `call` names the lookup in errors. A driver without the function gives
/// CUDA's "symbol not found" (`cudaErrorSymbolNotFound`).
///
/// # Safety
/// `F` is the `unsafe extern "C" fn` type of that C signature.
pub(crate) unsafe fn function<F: Copy>(symbol: &'static [u8], version: u32, call: &'static str) -> Result<F> {
    assert_eq!(size_of::<F>(), size_of::<*mut c_void>(), "{call}: a driver function is one pointer");
    let entry = entry_point(symbol, version, call)?;
    // SAFETY: `entry` is the function's non-null address and `F`, of the same size (checked),
    // is its function pointer type (the caller's promise).
    Ok(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&entry) })
}

/// The address of the driver function `symbol` at `version` (see [`function`]).
fn entry_point(symbol: &'static [u8], version: u32, call: &'static str) -> Result<*mut c_void> {
    let symbol = CStr::from_bytes_with_nul(symbol)
        .map_err(|_| CudaError::refused(call, crate::Refusal::DriverSymbolName))?;
    let mut entry: *mut c_void = ptr::null_mut();
    let mut found = sys::cudaDriverEntryPointQueryResult::cudaDriverEntryPointSymbolNotFound;
    check(
        // SAFETY: `symbol` is a NUL-terminated C string, `entry` and `found` are valid
        // out-pointers, and the flags value is a defined one (default search).
        unsafe {
            sys::cudaGetDriverEntryPointByVersion(
                symbol.as_ptr(),
                &mut entry,
                version,
                sys::cudaGetDriverEntryPointFlags::cudaEnableDefault.0 as u64,
                &mut found,
            )
        },
        call,
    )?;
    if found != sys::cudaDriverEntryPointQueryResult::cudaDriverEntryPointSuccess || entry.is_null() {
        return Err(CudaError::from_code(sys::cudaError::cudaErrorSymbolNotFound.0 as i32, call));
    }
    Ok(entry)
}

/// Turns a driver status (`CUresult`) into `Ok(())` or the error naming `call`. The driver's
/// codes share the runtime's numbering for the errors the functions used here return
/// (invalid value 1, not initialized 3, invalid device 101).
pub(crate) fn check_driver(status: sys::CUresult, call: &'static str) -> Result<()> {
    if status == 0 {
        Ok(())
    } else {
        Err(CudaError::from_code(status, call))
    }
}

// `CUlaunchAttribute` and the runtime's `cudaLaunchAttribute`, which the driver is handed, are
// one layout: a 4-byte id, 4 bytes of padding, a 64-byte value.
const _: () = assert!(std::mem::size_of::<sys::cudaLaunchAttribute>() == 72);

/// The driver functions a stream launch through the driver uses (`kernel::driver_launch`).
pub(crate) struct LaunchEntries {
    /// `cuLaunchKernelEx`.
    pub(crate) launch: sys::PFN_cuLaunchKernelEx,
    /// `cuStreamGetCtx`.
    pub(crate) stream_context: sys::PFN_cuStreamGetCtx,
}

/// Looked up once; `None` when the driver lacks one of them (every launch then takes the
/// runtime's path).
static LAUNCH_ENTRIES: OnceLock<Option<LaunchEntries>> = OnceLock::new();

pub(crate) fn launch_entries() -> Option<&'static LaunchEntries> {
    LAUNCH_ENTRIES.get_or_init(look_up_launch_entries).as_ref()
}

fn look_up_launch_entries() -> Option<LaunchEntries> {
    // Each type below is the `unsafe extern "C" fn` type of the C signature the symbol had at
    // the version asked for (cudart-graph-sys's declarations).
    // SAFETY: as just said, for cuLaunchKernelEx.
    let launch =
        unsafe { function(sys::CU_LAUNCH_KERNEL_EX, sys::CU_LAUNCH_KERNEL_EX_VERSION, "cuLaunchKernelEx") };
    // SAFETY: as above.
    let stream_context =
        unsafe { function(sys::CU_STREAM_GET_CTX, sys::CU_STREAM_GET_CTX_VERSION, "cuStreamGetCtx") };
    if launch.is_err() || stream_context.is_err() {
        // A failed lookup is an answer (this driver lacks one): forget its status.
        crate::error::forget_last_error();
    }
    Some(LaunchEntries { launch: launch.ok()?, stream_context: stream_context.ok()? })
}

/// `cuKernelGetFunction`, looked up once; `None` when the driver lacks it.
static KERNEL_GET_FUNCTION: OnceLock<Option<sys::PFN_cuKernelGetFunction>> = OnceLock::new();

/// The function of `kernel` (a live context-independent kernel handle, `CUkernel`) in the
/// calling thread's current context (`cuKernelGetFunction`, which loads the kernel's library
/// into that context if needed), as an address; `None` when the driver gives none.
///
/// # Safety
/// `kernel` is a live `CUkernel` (a library's kernel handle, or `cudaGetKernel`'s of a host
/// stub), its library loaded for as long as the call runs.
pub(crate) unsafe fn kernel_function_in_current(kernel: usize) -> Option<usize> {
    let get = KERNEL_GET_FUNCTION.get_or_init(|| {
        // SAFETY: `PFN_cuKernelGetFunction` is the C signature of cuKernelGetFunction at 12.0.
        let found = unsafe {
            function(sys::CU_KERNEL_GET_FUNCTION, sys::CU_KERNEL_GET_FUNCTION_VERSION, "cuKernelGetFunction")
        };
        if found.is_err() {
            // A failed lookup is an answer (this driver lacks it): forget its status.
            crate::error::forget_last_error();
        }
        found.ok()
    });
    let get = (*get)?;
    let mut function: sys::cudaFunction_t = ptr::null_mut();
    // SAFETY: `kernel` is a live CUkernel (the caller's promise); `function` a valid out-pointer.
    let status = unsafe { get(&mut function, kernel as sys::CUkernel) };
    (status == 0 && !function.is_null()).then_some(function as usize)
}

/// The context `stream` (a live stream handle, not a default-stream handle) belongs to, as an
/// address; `None` when the driver cannot say.
pub(crate) fn stream_context(stream: sys::cudaStream_t) -> Option<usize> {
    let entries = launch_entries()?;
    let mut context: sys::CUcontext = ptr::null_mut();
    // SAFETY: `stream` is a live stream handle (the caller's `Stream` owns or borrows it) and
    // `context` a valid out-pointer.
    let status = unsafe { (entries.stream_context)(stream, &mut context) };
    (status == 0 && !context.is_null()).then_some(context as usize)
}

/// `cuGraphNodeGetType`, looked up once; `None` when the driver lacks it.
static NODE_GET_TYPE: OnceLock<Option<sys::PFN_cuGraphNodeGetType>> = OnceLock::new();

/// The type of `node` (a live node; the caller holds its graph) by the driver's answer, which
/// knows the kinds only the driver makes (batch memory operations), where the runtime's
/// `cudaGraphNodeGetType` fails.
pub(crate) fn node_type(node: sys::cudaGraphNode_t) -> Result<sys::cudaGraphNodeType> {
    const CALL: &str = "cuGraphNodeGetType";
    if sys::in_host_fn() {
        // Refused there like every CUDA call of the crate (see `runtime`).
        check(sys::cudaError::cudaErrorNotPermitted, CALL)?;
    }
    let get = NODE_GET_TYPE.get_or_init(|| {
        // SAFETY: `PFN_cuGraphNodeGetType` is the C signature of cuGraphNodeGetType at 10.0.
        let found =
            unsafe { function(sys::CU_GRAPH_NODE_GET_TYPE, sys::CU_GRAPH_NODE_GET_TYPE_VERSION, CALL) };
        found.ok()
    });
    let get =
        get.ok_or_else(|| CudaError::from_code(sys::cudaError::cudaErrorSymbolNotFound.0 as i32, CALL))?;
    let mut raw = 0;
    // SAFETY: `node` is a live node (the caller's promise); `raw` is a valid out-pointer.
    check_driver(unsafe { get(node, &mut raw) }, CALL)?;
    Ok(sys::cudaGraphNodeType(raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symbol_without_its_nul_is_refused_before_cuda() {
        let err = entry_point(b"cuDeviceGet", 2000, "lookup").unwrap_err();
        assert!(matches!(err, CudaError::InvalidArgument { call: "lookup", .. }), "{err}");
    }

    #[test]
    fn driver_statuses_become_errors_naming_the_call() {
        assert_eq!(check_driver(0, "cuDeviceGet"), Ok(()));
        let err = check_driver(101, "cuDeviceGet").unwrap_err();
        assert_eq!(err.code(), Some(101));
        assert!(err.to_string().contains("cuDeviceGet"), "{err}");
    }
}
