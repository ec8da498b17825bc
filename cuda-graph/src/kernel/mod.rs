//! Typed kernels: a kernel written in CUDA C++ (`extern "C" __global__`), declared once in
//! Rust with its parameter types ([`kernels!`](crate::kernels!)), checked against the
//! compiled kernel at first use, and launched with arguments of exactly those types.
//!
//! ```no_run
//! use cuda_graph::{kernel::LaunchConfig, DeviceBuffer, DevicePtr, Stream};
//!
//! cuda_graph::kernels! {
//!     /// `out[i] = (i * 2654435761) ^ seed`.
//!     pub fn fill_pattern(out: DevicePtr<u32>, n: u32, seed: u32);
//! }
//!
//! let stream = Stream::new()?;
//! let out = DeviceBuffer::<u32>::zeroed(1000)?;
//! fill_pattern().launch(&stream, LaunchConfig::for_elements(1000, 256), (out.ptr(), 1000, 7))?;
//! stream.synchronize()?;
//! # Ok::<(), cuda_graph::CudaError>(())
//! ```

mod abi;
mod args;
mod config;
mod launch;
mod macros;

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

pub use args::{KernelArgs, KernelParam, ParamLayout};
pub use config::{Dim3, LaunchConfig, MAX_THREADS_PER_BLOCK};

use crate::error::{CudaError, Result};

/// A kernel whose parameters are the tuple `A`, e.g. `Kernel<(DevicePtr<f32>, u32)>`.
///
/// Declared with [`kernels!`](crate::kernels!), not built by hand. The first use
/// ([`function`](Kernel::function), [`launch`](Kernel::launch), or a graph node made from it)
/// checks `A` against the compiled kernel's parameters (count, sizes, offsets); a mismatch is
/// [`CudaError::KernelSignature`] naming the kernel and the parameter, never a bad launch.
///
/// ```no_run
/// use cuda_graph::DevicePtr;
/// cuda_graph::kernels! {
///     fn saxpy(a: f32, x: DevicePtr<f32>, y: DevicePtr<f32>, n: u32);
/// }
/// let kernel: &cuda_graph::kernel::Kernel<(f32, DevicePtr<f32>, DevicePtr<f32>, u32)> = saxpy();
/// assert_eq!(kernel.name(), "saxpy");
/// kernel.function()?; // runs the parameter check
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct Kernel<A> {
    name: &'static str,
    stub: unsafe extern "C" fn(),
    params: &'static [&'static str],
    checked: OnceLock<std::result::Result<(), CudaError>>,
    _args: PhantomData<fn(A)>,
}

impl<A> fmt::Debug for Kernel<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Kernel({})", self.name)
    }
}

impl<A: KernelArgs> Kernel<A> {
    /// A kernel from its host stub (what nvcc emits under the kernel's name). Prefer
    /// [`kernels!`](crate::kernels!), which also names the parameters in check errors.
    ///
    /// # Safety
    /// `stub` must be the host stub of an `extern "C" __global__` kernel named `name`,
    /// compiled into this program. Its parameter list is checked at first use.
    ///
    /// ```no_run
    /// use cuda_graph::{kernel::Kernel, DevicePtr};
    /// extern "C" {
    ///     fn add_scalar();
    /// }
    /// // SAFETY: `add_scalar` is an `extern "C" __global__` kernel linked into this program.
    /// static ADD_SCALAR: Kernel<(DevicePtr<u32>, u32, u32)> =
    ///     unsafe { Kernel::from_stub("add_scalar", add_scalar) };
    /// ADD_SCALAR.function()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub const unsafe fn from_stub(name: &'static str, stub: unsafe extern "C" fn()) -> Kernel<A> {
        // SAFETY: the caller upholds the same contract.
        unsafe { Kernel::from_stub_with_params(name, stub, &[]) }
    }

    /// Like [`from_stub`](Kernel::from_stub), with a description of each parameter
    /// (`"n: u32"`) that parameter-check errors quote. [`kernels!`](crate::kernels!) calls
    /// this; `params` may be empty, or must have one entry per parameter.
    ///
    /// # Safety
    /// As for [`from_stub`](Kernel::from_stub).
    ///
    /// ```no_run
    /// use cuda_graph::kernel::Kernel;
    /// extern "C" {
    ///     fn noop();
    /// }
    /// // SAFETY: `noop` is an `extern "C" __global__` kernel linked into this program.
    /// static NOOP: Kernel<()> = unsafe { Kernel::from_stub_with_params("noop", noop, &[]) };
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub const unsafe fn from_stub_with_params(
        name: &'static str,
        stub: unsafe extern "C" fn(),
        params: &'static [&'static str],
    ) -> Kernel<A> {
        Kernel { name, stub, params, checked: OnceLock::new(), _args: PhantomData }
    }

    /// The kernel's name.
    ///
    /// ```no_run
    /// cuda_graph::kernels! { fn noop(); }
    /// assert_eq!(noop().name(), "noop");
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The host stub's address (what `cudaLaunchKernel` and kernel nodes take), after the
    /// parameter check has passed.
    ///
    /// The check runs once per kernel: its outcome (passed, or
    /// [`CudaError::KernelSignature`]) is kept. A CUDA error met while checking (no device
    /// yet, say) is returned and not kept, so a later call checks again.
    ///
    /// ```no_run
    /// cuda_graph::kernels! { fn noop(); }
    /// let function = noop().function()?;
    /// assert!(!function.is_null());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn function(&self) -> Result<*const c_void> {
        let stub = self.stub as *const c_void;
        if let Some(outcome) = self.checked.get() {
            return outcome.clone().map(|()| stub);
        }
        let outcome = abi::check_kernel(self.name, stub, self.params, &A::layout());
        if matches!(outcome, Ok(()) | Err(CudaError::KernelSignature { .. })) {
            // Another thread may have stored the same outcome first; either is the answer.
            let _ = self.checked.set(outcome.clone());
        }
        outcome.map(|()| stub)
    }
}
