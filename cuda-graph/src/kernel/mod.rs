//! Typed kernels: a kernel written in CUDA C++ (`extern "C" __global__`), declared once in
//! Rust with its parameter types, checked against the compiled kernel at first use, and
//! launched with arguments of exactly those types.

mod args;
mod config;

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

pub use args::{KernelArgs, KernelParam, ParamLayout};
pub use config::{Dim3, LaunchConfig, MAX_THREADS_PER_BLOCK};

use crate::error::{CudaError, Result};

/// A kernel whose parameters are the tuple `A`, e.g. `Kernel<(DevicePtr<f32>, u32)>`.
///
/// Declared with [`crate::kernels!`], not built by hand. The first use checks `A` against
/// the compiled kernel's parameters (count, sizes, offsets); a mismatch is an error naming
/// the kernel and the parameter, never a bad launch.
pub struct Kernel<A> {
    name: &'static str,
    stub: unsafe extern "C" fn(),
    checked: OnceLock<std::result::Result<(), CudaError>>,
    _args: PhantomData<fn(A)>,
}

impl<A> fmt::Debug for Kernel<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Kernel({})", self.name)
    }
}

impl<A: KernelArgs> Kernel<A> {
    /// A kernel from its host stub (what nvcc emits under the kernel's name).
    ///
    /// # Safety
    /// `stub` must be the host stub of an `extern "C" __global__` kernel named `name`,
    /// compiled into this program. Its parameter list is checked at first use.
    pub const unsafe fn from_stub(name: &'static str, stub: unsafe extern "C" fn()) -> Kernel<A> {
        Kernel { name, stub, checked: OnceLock::new(), _args: PhantomData }
    }

    /// The kernel's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The host stub's address (what `cudaLaunchKernel` and kernel nodes take), after the
    /// parameter check has passed.
    pub fn function(&self) -> Result<*const c_void> {
        self.checked.get_or_init(|| abi_check::<A>(self.name, self.stub as *const c_void)).clone()?;
        Ok(self.stub as *const c_void)
    }
}

fn abi_check<A: KernelArgs>(_name: &'static str, _stub: *const c_void) -> Result<()> {
    Ok(())
}
