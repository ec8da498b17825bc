//! cudarc 0.19.10 (`cudarc = "=0.19.10"`, the `cudarc` feature) and this crate side by side.
//! The feature needs Rust 1.88 (cudarc's libloading 0.9 declares it), where the crate
//! otherwise needs 1.82.
//!
//! - [`Stream::borrow_cudarc`](crate::Stream::borrow_cudarc): a cudarc [`CudaStream`](::cudarc::driver::CudaStream) used
//!   as a [`Stream`](crate::Stream) for as long as it is borrowed;
//!   [`Stream::into_cudarc`](crate::Stream::into_cudarc) hands one of ours to cudarc.
//! - [`CudarcSlice`]: a cudarc [`CudaSlice`](::cudarc::driver::CudaSlice) shared with this
//!   crate's kernels, copies, graphs and execs, which keep it alive as they keep a
//!   [`DeviceBuffer`](crate::DeviceBuffer); [`DeviceBuffer::lend_to_cudarc`](crate::DeviceBuffer::lend_to_cudarc)
//!   shows one of our buffers to cudarc as a `CudaSlice` for a while.
//! - [`capture_cudarc`]: cudarc work recorded into a [`Graph`](crate::graph::Graph), which
//!   can then hold conditional nodes, be updated and be launched from the device.
//!
//! # One context, two views
//! This crate uses the CUDA runtime, which works in each device's *primary context*; cudarc
//! uses the driver API, and [`CudaContext::new`] retains that same primary context. Work of
//! both therefore shares one address space, one set of streams and one module cache: a
//! cudarc stream is a runtime stream, a cudarc device pointer a runtime device pointer.
//! Everything here refuses a non-primary cudarc context (`CudaContext::new_non_primary`,
//! most uses of `from_raw_context`), whose handles the runtime could not use.
//! [`same_primary_context`] checks the agreement at run time.
//!
//! ```no_run
//! use cudarc::driver::CudaContext;
//! use cuda_graph::interop::cudarc::same_primary_context;
//! let ctx = CudaContext::new(0).expect("cudarc context");
//! assert!(same_primary_context(&ctx)?);
//! # Ok::<(), cuda_graph::CudaError>(())
//! ```

mod capture;
mod lend;
mod slice;
mod stream;

use ::cudarc::driver::{CudaContext, DriverError};

use crate::device::Device;
use crate::error::{check, CudaError, Result};

pub use capture::capture_cudarc;
pub use lend::LentSlice;
pub use slice::CudarcSlice;

/// cudarc's driver error as this crate's, naming `call`.
pub(crate) fn driver_error(err: DriverError, call: &'static str) -> CudaError {
    CudaError::from_code(err.0 as i32, call)
}

/// The runtime device of `ctx`, refusing a context that is not its device's primary one
/// (the only context the runtime, and so this crate, uses).
pub(crate) fn primary_device(ctx: &CudaContext, call: &'static str) -> Result<Device> {
    if !ctx.is_primary() {
        return Err(CudaError::refused(call, crate::Refusal::NotPrimaryContext));
    }
    let ordinal = i32::try_from(ctx.ordinal()).map_err(|_| {
        CudaError::refused(call, crate::Refusal::DeviceOrdinalOutOfRange { ordinal: ctx.ordinal() })
    })?;
    Device::get(ordinal)
}

/// Whether the runtime's context of `ctx`'s device (the one this crate's calls use) is the
/// very context cudarc holds: made current by the runtime (`cudaSetDevice`, `cudaFree(NULL)`
/// to initialize it), then read back through the driver (`cuCtxGetCurrent`) and compared with
/// [`CudaContext::cu_ctx`]. The caller's current device and cudarc's binding are restored.
///
/// ```no_run
/// let ctx = cudarc::driver::CudaContext::new(0).expect("cudarc context");
/// assert!(cuda_graph::interop::cudarc::same_primary_context(&ctx)?);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub fn same_primary_context(ctx: &CudaContext) -> Result<bool> {
    let device = primary_device(ctx, "same_primary_context")?;
    let runtime = device.with_current(|| {
        // SAFETY: a null pointer is a no-op free; it initializes the device's primary context.
        check(unsafe { crate::runtime::cudaFree(std::ptr::null_mut()) }, "cudaFree(NULL)")?;
        ::cudarc::driver::result::ctx::get_current().map_err(|err| driver_error(err, "cuCtxGetCurrent"))
    })?;
    Ok(runtime.is_some_and(|current| std::ptr::eq(current, ctx.cu_ctx())))
}
