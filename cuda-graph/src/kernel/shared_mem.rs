//! A kernel's limit of dynamic shared memory per block: 48 KB unless raised
//! (`cudaFuncSetAttribute` with `cudaFuncAttributeMaxDynamicSharedMemorySize`), up to what the
//! device lets a block opt into (227 KB on an H100 or H200, less the kernel's static shared
//! memory). A launch or kernel node asking for more than the kernel's limit is refused by CUDA.

use std::sync::{Mutex, PoisonError};

use crate::device::Device;
use crate::error::{check, forget_last_error, CudaError, Result};
use crate::runtime as sys;
use crate::Refusal;

use super::{Kernel, KernelArgs};

impl<A: KernelArgs> Kernel<A> {
    /// Lets launches and kernel nodes of this kernel on `device` ask for up to `bytes` of
    /// dynamic shared memory per block ([`LaunchConfig::with_shared_mem`](super::LaunchConfig::with_shared_mem)):
    /// needed above 48 KB. The limit is CUDA's, kept per kernel and device: it holds from then
    /// on for every launch and kernel node of this kernel on that device, whoever made them (a
    /// lower limit makes larger launches of it fail, CUDA's refusal), so set it once for each
    /// device the kernel runs on. More than the device allows (its opt-in maximum per block,
    /// less the kernel's static shared memory) is CUDA's refusal, an error; more than
    /// `i32::MAX` is refused before CUDA is called, and so is a call from a host function.
    ///
    /// ```no_run
    /// use cuda_graph::{Device, LaunchConfig, Stream};
    /// cuda_graph::kernels! {
    ///     // SAFETY: uses its dynamic shared memory only (no pointers).
    ///     unsafe fn noop();
    /// }
    /// let device = Device::get(0)?;
    /// noop().set_max_dynamic_shared_mem(device, 96 * 1024)?;
    /// noop().launch(&Stream::new()?, LaunchConfig::new(1, 32).with_shared_mem(96 * 1024), ())?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn set_max_dynamic_shared_mem(&self, device: Device, bytes: u32) -> Result<()> {
        const CALL: &str = "Kernel::set_max_dynamic_shared_mem";
        if sys::in_host_fn() {
            // Before any lookup: none may fail there and be remembered.
            return Err(CudaError::refused(CALL, Refusal::InHostFunction));
        }
        let value = i32::try_from(bytes).map_err(|_| {
            CudaError::refused(
                CALL,
                Refusal::OutOfRange {
                    what: "dynamic shared memory bytes",
                    value: u64::from(bytes),
                    min: 0,
                    max: i32::MAX as u64,
                },
            )
        })?;
        // The parameter check first: no attribute is set on a kernel declared wrongly.
        let function = self.function()?;
        let attribute = sys::cudaFuncAttribute::cudaFuncAttributeMaxDynamicSharedMemorySize;
        // CUDA keeps the limit in two places, both set, under one lock so that two threads
        // setting different limits leave both places at the same one: the kernel's function in
        // the device's primary context (`cudaFuncSetAttribute`: stream launches, kernel nodes
        // made from the host stub) and its context-independent handle on the device
        // (`cudaKernelSetAttributeForDevice`: kernel nodes added with `cudaGraphAddNode`,
        // launches through the driver). A loaded kernel's `function` is that handle already.
        static SETTING: Mutex<()> = Mutex::new(());
        let _setting = SETTING.lock().unwrap_or_else(PoisonError::into_inner);
        device.with_current(|| {
            let kernel = match &self.entry {
                super::Entry::Stub(_) => {
                    // SAFETY: `function` is this kernel's host stub, checked above and alive for
                    // the program; the attribute and value are plain integers.
                    let status = unsafe { sys::cudaFuncSetAttribute(function, attribute, value) };
                    answer(check(status, "cudaFuncSetAttribute"))?;
                    // Looked up here, its failure returned (not the launch path's cached lookup,
                    // which keeps a failure as "no handle").
                    let mut kernel: sys::cudaKernel_t = std::ptr::null_mut();
                    // SAFETY: `function` is a host stub registered with the runtime; `kernel` is
                    // a valid out-pointer.
                    let status = unsafe { sys::cudaGetKernel(&mut kernel, function) };
                    answer(check(status, "cudaGetKernel"))?;
                    kernel
                }
                super::Entry::Loaded(_) => function.cast_mut().cast(),
            };
            // SAFETY: `kernel` is this kernel's `cudaKernel_t` (from `cudaGetKernel` of its stub,
            // or its module's, which `self` keeps loaded); the attribute, value and ordinal are
            // plain integers.
            let status =
                unsafe { sys::cudaKernelSetAttributeForDevice(kernel, attribute, value, device.ordinal()) };
            answer(check(status, "cudaKernelSetAttributeForDevice"))
        })
    }
}

/// A failed call's error, returned, not also left as CUDA's last error for the next reader.
fn answer(result: Result<()>) -> Result<()> {
    if result.is_err() {
        forget_last_error();
    }
    result
}
