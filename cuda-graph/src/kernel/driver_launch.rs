//! Stream launches through the driver's `cuLaunchKernelEx`, where that is the same launch as
//! the runtime's and cheaper: the runtime's `cudaLaunchKernel(ExC)` looks the kernel up from
//! its host stub and checks the context on every call, and those lookups cost the host thread
//! about 0.1-0.2 µs of a 2.5-4 µs launch (bench/README.md, "Where the crates still cost more
//! than C++"). A kernel's context-independent handle (`CUkernel`, from `cudaGetKernel` or its
//! library) is looked up once; each launch then asks the driver for the thread's current
//! context (a thread-local read in the driver) and launches through the driver only when
//! that is the stream's own context:
//! - the kernel then resolves in the stream's context, as the runtime's launch would;
//! - another context current (one other code made, or none yet on a new thread) takes the
//!   runtime's path, which handles it as it always has.
//!
//! Only launches no capture can record take this path (the caller checks, under the capture
//! gate): captured launches stay on the runtime's path, so captured graphs hold the nodes they
//! always held. A driver launch that fails queued nothing; the caller then makes the runtime
//! launch, whose status (and last-error bookkeeping) is the one reported, so errors read as
//! they always have.

use std::ffi::c_void;
use std::ptr;
use std::sync::OnceLock;

use crate::runtime as sys;

use crate::driver::launch_entries;
use crate::kernel::LaunchConfig;
use crate::stream::Stream;

/// The context-independent handle of the kernel whose host stub is `stub`
/// (`cudaGetKernel`); `None` when the runtime gives none.
pub(crate) fn kernel_of_stub(stub: *const c_void) -> Option<usize> {
    let mut kernel: sys::cudaKernel_t = ptr::null_mut();
    // SAFETY: `stub` is a kernel's host stub registered with the runtime (a `Kernel`'s
    // entry); `kernel` is a valid out-pointer.
    let status = unsafe { sys::cudaGetKernel(&mut kernel, stub) };
    if status != sys::cudaError::cudaSuccess {
        crate::error::forget_last_error();
        return None;
    }
    (!kernel.is_null()).then_some(kernel as usize)
}

/// A kernel's handles for launches through the driver, looked up at the first such launch:
/// its context-independent handle (`CUkernel`), and its function in the first primary context
/// it was launched in (`CUfunction`; the driver's launch from a `CUfunction` costs the host
/// about 70 ns less than from a `CUkernel`, bench/results/launch_probe.txt, section 7).
/// Launches in other contexts use the `CUkernel`. Only a primary context is recorded: it
/// keeps its handle for the life of the process (see `runtime::primary`), so the function
/// cannot outlive the context it was looked up in while the address is reused.
pub(crate) struct DriverHandles {
    kernel: OnceLock<Option<usize>>,
    function: OnceLock<(usize, usize)>,
}

impl DriverHandles {
    pub(crate) const fn new() -> DriverHandles {
        DriverHandles { kernel: OnceLock::new(), function: OnceLock::new() }
    }

    /// The `CUkernel`, from `look_up` at the first call (`None` when there is none).
    #[inline]
    pub(crate) fn kernel(&self, look_up: impl FnOnce() -> Option<usize>) -> Option<usize> {
        *self.kernel.get_or_init(look_up)
    }

    /// What to hand `cuLaunchKernelEx` for `kernel` (this kernel's `CUkernel`) when `current`,
    /// the thread's current context, is `stream`'s: the recorded function when `current` is
    /// the context it was recorded in; else, when `current` is the primary context of
    /// `stream`'s device and nothing is recorded yet, the function looked up and recorded now;
    /// else `kernel` itself.
    ///
    /// # Safety
    /// `kernel` is this kernel's live `CUkernel`, its library loaded for as long as this
    /// value lives (the `Kernel` holding it holds the library).
    unsafe fn for_context(&self, kernel: usize, current: usize, stream: &Stream) -> usize {
        if let Some(&(context, function)) = self.function.get() {
            return if context == current { function } else { kernel };
        }
        if sys::primary_context(stream.device().ordinal()) != Some(current) {
            return kernel;
        }
        // SAFETY: `kernel` is a live CUkernel whose library stays loaded (the caller's promise).
        let Some(function) = (unsafe { crate::driver::kernel_function_in_current(kernel) }) else {
            return kernel;
        };
        match self.function.get_or_init(|| (current, function)) {
            &(context, recorded) if context == current => recorded,
            _ => kernel,
        }
    }
}

/// Launches `kernel` (a context-independent handle) on `stream` with `config`, `attributes`
/// and the argument `pointers` through the driver, if the thread's current context is the
/// stream's. Returns whether it did; `false` means nothing was queued (another context
/// current, the driver without the functions, or a launch the driver refused), and the caller
/// launches through the runtime.
///
/// # Safety
/// As for the runtime launch the caller would make instead: `kernel` is the handle of the
/// kernel whose parameters `pointers` match (one pointer per parameter, each to a value of
/// that parameter's size, alive for the call); `attributes` are initialized; `stream` is
/// alive; no capture can record this launch.
pub(crate) unsafe fn launch(
    kernel: usize, handles: &DriverHandles, stream: &Stream, config: &LaunchConfig,
    attributes: &mut [sys::cudaLaunchAttribute], pointers: *mut *mut c_void,
) -> bool {
    let Some(entries) = launch_entries() else { return false };
    let Some(stream_context) = stream.driver_context() else { return false };
    let Some(current) = sys::current_context().filter(|&current| current == stream_context) else {
        return false;
    };
    let launch = sys::CUlaunchConfig {
        gridDimX: config.grid.x,
        gridDimY: config.grid.y,
        gridDimZ: config.grid.z,
        blockDimX: config.block.x,
        blockDimY: config.block.y,
        blockDimZ: config.block.z,
        sharedMemBytes: config.shared_mem_bytes,
        hStream: stream.as_raw(),
        attrs: if attributes.is_empty() { ptr::null_mut() } else { attributes.as_mut_ptr() },
        numAttrs: attributes.len() as u32,
    };
    // SAFETY: `kernel` is the live CUkernel of the `Kernel` holding `handles`, which holds
    // its library (the caller's promise).
    let function = unsafe { handles.for_context(kernel, current, stream) };
    // SAFETY: `launch` and the attributes it points at live across the call; `function` is
    // the kernel's CUkernel, which resolves in the current context, or its CUfunction in the
    // current context, which is the stream's (checked just above); the pointers match the
    // kernel's parameters (the caller's promise); no `extra` options.
    let status =
        unsafe { (entries.launch)(&launch, function as sys::cudaFunction_t, pointers, ptr::null_mut()) };
    status == 0
}
