//! Typed kernels: a kernel written in CUDA C++ (`extern "C" __global__`), declared once in
//! Rust with its parameter types ([`kernels!`](crate::kernels!)), checked against the
//! compiled kernel's C++ parameter types and layout at first use, and launched with arguments
//! of exactly those types.
//!
//! ```no_run
//! use cuda_graph::{kernel::LaunchConfig, DeviceBuffer, DevicePtr, Stream};
//!
//! cuda_graph::kernels! {
//!     /// `out[i] = (i * 2654435761) ^ seed`.
//!     // SAFETY: fill_pattern writes out[i] only for i < n; private, and launched below
//!     // with n = out.len().
//!     unsafe fn fill_pattern(out: DevicePtr<u32>, n: u32, seed: u32);
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
mod attributes;
mod config;
pub(crate) mod driver_launch;
mod launch;
mod macros;
mod module;
#[cfg(feature = "nvrtc")]
pub mod nvrtc;
mod owners;
mod shared_mem;
mod symbol;
mod types;

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

pub use args::{KernelArgs, KernelParam, ParamLayout};
pub use attributes::{
    ClusterScheduling, KernelAttributes, LaunchAttributes, MemSyncDomain, MemSyncDomainMap, ProgrammaticEvent,
};
pub use config::{Dim3, LaunchConfig, MAX_THREADS_PER_BLOCK};
pub use module::Module;
pub use symbol::DeviceSymbol;
pub use types::SignatureFn;

pub(crate) use args::{check_launch_handles, check_node_handles};
pub(crate) use attributes::{require_programmatic_launch, CheckAttributes};
pub(crate) use owners::{check_placement, kernel_owners};

use crate::error::{CudaError, Result};
use crate::release::KeepAlive;
use module::LoadedKernel;

/// A kernel whose parameters are the tuple `A`, e.g. `Kernel<(DevicePtr<f32>, u32)>`.
///
/// Declared with [`kernels!`](crate::kernels!), not built by hand. The first use
/// ([`function`](Kernel::function), [`launch`](Kernel::launch), or a graph node made from it)
/// checks `A` against the compiled kernel's parameters (count, sizes, offsets) and against
/// its C++ parameter types (see [`KernelParam::cpp_type`]); a mismatch is
/// [`CudaError::KernelSignature`] naming the kernel and the parameter, never a bad launch.
///
/// ```no_run
/// use cuda_graph::DevicePtr;
/// cuda_graph::kernels! {
///     // SAFETY: saxpy reads x[i] and writes y[i] only for i < n; private to code that
///     // passes n no larger than x and y.
///     unsafe fn saxpy(a: f32, x: DevicePtr<f32>, y: DevicePtr<f32>, n: u32);
/// }
/// let kernel: &cuda_graph::kernel::Kernel<(f32, DevicePtr<f32>, DevicePtr<f32>, u32)> = saxpy();
/// assert_eq!(kernel.name(), "saxpy");
/// kernel.function()?; // runs the parameter check
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct Kernel<A> {
    name: &'static str,
    entry: Entry,
    signature: Option<SignatureFn>,
    params: &'static [&'static str],
    checked: OnceLock<std::result::Result<(), CudaError>>,
    /// The handles stream launches go through the driver with (see `driver_launch`).
    driver_handles: driver_launch::DriverHandles,
    _args: PhantomData<fn(A)>,
}

/// Where a kernel's code comes from.
enum Entry {
    /// Linked into the program: its host stub (what nvcc emits under the kernel's name).
    Stub(unsafe extern "C" fn()),
    /// Looked up in a module loaded at run time ([`Module`]), with the C++ types its image
    /// carries, if any.
    Loaded(LoadedKernel),
}

impl<A> fmt::Debug for Kernel<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Kernel({})", self.name)
    }
}

impl<A: KernelArgs> Kernel<A> {
    /// A kernel from its host stub (what nvcc emits under the kernel's name), without its
    /// signature function. Prefer [`kernels!`](crate::kernels!), which also checks the
    /// parameter types and names the parameters in check errors.
    ///
    /// # Safety
    /// `stub` must be the host stub of an `extern "C" __global__` kernel named `name`,
    /// compiled into this program. The first use checks only the count, sizes and offsets of
    /// its parameters: that each parameter's C++ type is the one `A` stands for (`float*`,
    /// not `double*`, for a `DevicePtr<f32>`; `uint32_t`, not `float`, for a `u32`) is then
    /// the caller's promise, as is everything [`kernels!`](crate::kernels!)'s `# Safety`
    /// asks of a declared kernel (it stays inside the memory it is given).
    ///
    /// Without a signature the parameters are counted by asking the driver
    /// (`cuFuncGetParamInfo`) for one past the last, which fails: under compute-sanitizer's
    /// default settings the first use shows one API error, counted in its `ERROR SUMMARY`
    /// (`CUDA_ERROR_INVALID_VALUE` on `cuFuncGetParamInfo`). It is expected;
    /// `--report-api-errors no` silences it. [`kernels!`](crate::kernels!) declarations count
    /// from their signature and make no failing call.
    ///
    /// ```no_run
    /// use cuda_graph::{kernel::Kernel, DevicePtr};
    /// extern "C" {
    ///     fn add_scalar();
    /// }
    /// // SAFETY: `add_scalar(uint32_t* data, uint32_t n, uint32_t value)` is an `extern "C"
    /// // __global__` kernel linked into this program; it writes data[i] only for i < n, and
    /// // this static is private to code that passes n no larger than data.
    /// static ADD_SCALAR: Kernel<(DevicePtr<u32>, u32, u32)> =
    ///     unsafe { Kernel::from_stub("add_scalar", add_scalar) };
    /// ADD_SCALAR.function()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub const unsafe fn from_stub(name: &'static str, stub: unsafe extern "C" fn()) -> Kernel<A> {
        // SAFETY: the caller upholds the same contract.
        unsafe { Kernel::from_stub_with_params(name, stub, &[]) }
    }

    /// A kernel from its host stub and the signature function `cuda-build` generated for it
    /// (`<name>__cuda_graph_signature`), with a description of each parameter (`"n: u32"`)
    /// for check errors: what [`kernels!`](crate::kernels!) calls. The first use checks the
    /// count, sizes and offsets of the parameters, and each parameter's C++ type against
    /// [`KernelParam::cpp_type`]. The count comes from the signature: the driver is asked
    /// about those parameters only, and no CUDA call fails (no API error under
    /// compute-sanitizer).
    ///
    /// # Safety
    /// `stub` must be the host stub of an `extern "C" __global__` kernel named `name`,
    /// compiled into this program, `signature` that kernel's signature function (as
    /// [`SignatureFn`] describes), and the kernel must keep the promise of
    /// [`kernels!`](crate::kernels!)'s `# Safety` for arguments of types `A`.
    ///
    /// ```no_run
    /// use cuda_graph::kernel::Kernel;
    /// extern "C" {
    ///     fn noop();
    ///     fn noop__cuda_graph_signature() -> *const std::ffi::c_char;
    /// }
    /// // SAFETY: `noop` is an `extern "C" __global__` kernel compiled by cuda-build into this
    /// // program, with its signature function; it touches no memory.
    /// static NOOP: Kernel<()> =
    ///     unsafe { Kernel::from_stub_with_signature("noop", noop, noop__cuda_graph_signature, &[]) };
    /// NOOP.function()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub const unsafe fn from_stub_with_signature(
        name: &'static str, stub: unsafe extern "C" fn(), signature: SignatureFn,
        params: &'static [&'static str],
    ) -> Kernel<A> {
        Kernel {
            name,
            entry: Entry::Stub(stub),
            signature: Some(signature),
            params,
            checked: OnceLock::new(),
            driver_handles: driver_launch::DriverHandles::new(),
            _args: PhantomData,
        }
    }

    /// Like [`from_stub`](Kernel::from_stub) (no type check), with a description of each
    /// parameter (`"n: u32"`) that parameter-check errors quote; `params` may be empty, or
    /// must have one entry per parameter. As for `from_stub`, the parameters are counted by
    /// one failing `cuFuncGetParamInfo` at the first use: one API error under
    /// compute-sanitizer's default settings (`--report-api-errors no` silences it).
    ///
    /// # Safety
    /// As for [`from_stub`](Kernel::from_stub).
    ///
    /// ```no_run
    /// use cuda_graph::kernel::Kernel;
    /// extern "C" {
    ///     fn noop();
    /// }
    /// // SAFETY: `noop()` is an `extern "C" __global__` kernel linked into this program; it
    /// // takes no parameter and touches no memory.
    /// static NOOP: Kernel<()> = unsafe { Kernel::from_stub_with_params("noop", noop, &[]) };
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub const unsafe fn from_stub_with_params(
        name: &'static str, stub: unsafe extern "C" fn(), params: &'static [&'static str],
    ) -> Kernel<A> {
        Kernel {
            name,
            entry: Entry::Stub(stub),
            signature: None,
            params,
            checked: OnceLock::new(),
            driver_handles: driver_launch::DriverHandles::new(),
            _args: PhantomData,
        }
    }

    /// A kernel of a loaded module ([`Module::kernel`], [`Module::kernel_unchecked_types`]):
    /// its type check uses the image's list when there is one.
    fn loaded(kernel: LoadedKernel) -> Kernel<A> {
        Kernel {
            name: kernel.name(),
            entry: Entry::Loaded(kernel),
            signature: None,
            params: &[],
            checked: OnceLock::new(),
            driver_handles: driver_launch::DriverHandles::new(),
            _args: PhantomData,
        }
    }

    /// The context-independent handle (`CUkernel`) a stream launch gives the driver: the
    /// library's kernel handle for a loaded kernel, `cudaGetKernel` of the host stub (looked up
    /// once) for a linked one.
    pub(crate) fn launch_handle(&self) -> Option<(usize, &driver_launch::DriverHandles)> {
        let kernel = match &self.entry {
            Entry::Loaded(kernel) => Some(kernel.function() as usize),
            Entry::Stub(stub) => {
                self.driver_handles.kernel(|| driver_launch::kernel_of_stub(*stub as *const c_void))
            }
        };
        Some((kernel?, &self.driver_handles))
    }

    /// What graphs and execs whose nodes launch this kernel must keep: the module of a
    /// loaded kernel, nothing for one linked into the program.
    pub(crate) fn owner(&self) -> Option<KeepAlive> {
        match &self.entry {
            Entry::Stub(_) => None,
            Entry::Loaded(kernel) => Some(kernel.owner()),
        }
    }

    /// Whether the kernel is a library's (a [`Module`]'s), whose launch handle is a
    /// `cudaKernel_t` rather than a host stub.
    pub(crate) fn is_loaded(&self) -> bool {
        matches!(self.entry, Entry::Loaded(_))
    }

    /// The kernel's name.
    ///
    /// ```no_run
    /// cuda_graph::kernels! { unsafe fn noop(); }
    /// assert_eq!(noop().name(), "noop");
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The parameter-type check alone: each parameter's [`KernelParam::cpp_type`] against
    /// the C++ type the kernel's signature function reports. It makes no CUDA call, so it
    /// runs without a device (a test can check every declaration of a crate this way).
    /// `Ok` for a kernel made without a signature function ([`from_stub`](Kernel::from_stub)).
    /// [`function`](Kernel::function) runs it after the layout check.
    ///
    /// ```
    /// // Needs no GPU.
    /// # fn f(kernel: &cuda_graph::kernel::Kernel<(cuda_graph::DevicePtr<u32>, u32)>) {
    /// if let Err(err) = kernel.check_types() {
    ///     panic!("{err}");
    /// }
    /// # }
    /// ```
    pub fn check_types(&self) -> Result<()> {
        let labels = abi::Labels { kernel: self.name, params: self.params };
        match (&self.entry, self.signature) {
            (_, Some(signature)) => {
                // SAFETY: `signature` was given to `from_stub_with_signature`, whose caller
                // promised it is the kernel's generated signature function.
                let cpp = unsafe { types::cpp_types(signature) };
                types::compare_types(labels, &A::cpp_types(), &cpp)
            }
            (Entry::Loaded(kernel), None) => match kernel.cpp_types() {
                Some(cpp) => types::compare_types(labels, &A::cpp_types(), cpp),
                None => Ok(()),
            },
            (Entry::Stub(_), None) => Ok(()),
        }
    }

    /// The host stub's address, or for a kernel of a [`Module`] its `cudaKernel_t` (what
    /// `cudaLaunchKernel` and kernel nodes take), after the parameter check has passed: the
    /// count, sizes and offsets of the compiled kernel's parameters (from the driver), then,
    /// for a kernel with a signature function (every [`kernels!`](crate::kernels!)
    /// declaration) or a module kernel whose image carries its types, each parameter's C++
    /// type.
    ///
    /// The check runs once per kernel: its outcome (passed, or
    /// [`CudaError::KernelSignature`]) is kept. A CUDA error met while checking (no device
    /// yet, say) is returned and not kept, so a later call checks again.
    ///
    /// ```no_run
    /// cuda_graph::kernels! { unsafe fn noop(); }
    /// let function = noop().function()?;
    /// assert!(!function.is_null());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn function(&self) -> Result<*const c_void> {
        let stub = match &self.entry {
            Entry::Stub(stub) => *stub as *const c_void,
            Entry::Loaded(kernel) => kernel.function(),
        };
        if let Some(outcome) = self.checked.get() {
            return outcome.clone().map(|()| stub);
        }
        // The count of parameters, where a generated signature gives it: the driver is then
        // asked about those only (no failing call; see `abi`).
        let layout = match &self.entry {
            Entry::Stub(_) => {
                // SAFETY: `signature` was given to `from_stub_with_signature`, whose caller
                // promised it is the kernel's generated signature function.
                let count = self.signature.map(|signature| unsafe { types::cpp_types(signature) }.len());
                abi::check_kernel(self.name, stub, self.params, &A::layout(), count)
            }
            Entry::Loaded(kernel) => {
                let count = kernel.cpp_types().map(<[String]>::len);
                abi::check_loaded_kernel(self.name, stub, &A::layout(), count)
            }
        };
        let outcome = layout.and_then(|()| self.check_types());
        if matches!(outcome, Ok(()) | Err(CudaError::KernelSignature { .. })) {
            // Another thread may have stored the same outcome first; either is the answer.
            let _ = self.checked.set(outcome.clone());
        }
        outcome.map(|()| stub)
    }
}
