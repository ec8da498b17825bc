//! Kernels from modules loaded at run time: PTX, cubin and fatbin images
//! (`cudaLibraryLoadData`), kernels looked up by name (`cudaLibraryGetKernel`) as the same
//! typed [`Kernel<A>`] that [`kernels!`](crate::kernels!) declares, checked the same way at
//! first use: the count, sizes and offsets of the parameters from the driver
//! (`cudaFuncGetParamInfo`), and each parameter's C++ type against the list the image
//! carries, when it carries one (images built by `cuda_build::ImageBuild` do).
//!
//! ```no_run
//! use cuda_graph::kernel::{LaunchConfig, Module};
//! use cuda_graph::{DeviceBuffer, DevicePtr, Stream};
//! # let fatbin: &[u8] = &[];
//! let module = Module::from_image(fatbin)?;
//! // SAFETY: `add` writes data[i] only for i < n, and is launched with n = data.len().
//! let add = unsafe { module.kernel::<(DevicePtr<u32>, u32, u32)>("add") }?;
//! let data = DeviceBuffer::from_slice(&[1u32, 2, 3])?;
//! let stream = Stream::new()?;
//! add.launch(&stream, LaunchConfig::for_elements(3, 128), (data.ptr(), 3, 10))?;
//! stream.synchronize()?;
//! assert_eq!(data.to_vec()?, [11, 12, 13]);
//! # Ok::<(), cuda_graph::CudaError>(())
//! ```

mod image;
mod library;

use std::ffi::CString;
use std::fmt;
use std::sync::Arc;

use cudart_graph_sys as sys;

use super::types::split_list;
use super::{DeviceSymbol, Kernel, KernelArgs};
use crate::error::{check, CudaError, Result};
use crate::memory::DeviceRepr;
pub(super) use library::Library;

pub(crate) use library::LoadedKernel;

/// A module loaded from a PTX, cubin or fatbin image (a `cudaLibrary_t`), whose kernels are
/// looked up by name. Loaded once for every device (the driver loads it into each device's
/// context when a kernel is first used there). Cheap to clone; unloaded once the module and
/// every kernel, graph and exec using its kernels are gone, after waiting for the devices
/// that used it.
///
/// ```no_run
/// let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry noop() { ret; }\n";
/// let module = cuda_graph::kernel::Module::from_ptx(ptx)?;
/// // SAFETY: `noop` takes no parameter and touches no memory.
/// let noop = unsafe { module.kernel_unchecked_types::<()>("noop") }?;
/// noop.function()?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Clone)]
pub struct Module {
    library: Arc<Library>,
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Module({:#x})", self.library.raw())
    }
}

impl Module {
    /// Loads PTX text (`cudaLibraryLoadData`; the NUL the driver needs is added). The driver
    /// compiles it for each device it is used on. PTX cannot call the device runtime (no
    /// `cudaGraphSetConditional`): use a cubin or fatbin device-linked with it for that.
    ///
    /// ```no_run
    /// let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry noop() { ret; }\n";
    /// let module = cuda_graph::kernel::Module::from_ptx(ptx)?;
    /// assert_eq!(module.kernel_names()?, ["noop"]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn from_ptx(ptx: &str) -> Result<Module> {
        Module::from_image(ptx.as_bytes())
    }

    /// Loads an image (`cudaLibraryLoadData`): a cubin (ELF), a fatbin, or PTX text, told
    /// apart by their first bytes. The sizes a cubin's or fatbin's headers give are checked
    /// to lie inside `image` before the driver reads it (it takes no length). The driver
    /// copies what it needs: `image` may be dropped afterwards.
    ///
    /// ```no_run
    /// # let cubin: Vec<u8> = Vec::new();
    /// let module = cuda_graph::kernel::Module::from_image(&cubin)?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn from_image(image: &[u8]) -> Result<Module> {
        let (_, bytes) = image::prepare("Module::from_image", image)?;
        Ok(Module { library: Arc::new(Library::load(&bytes)?) })
    }

    /// The kernel `name` as a typed [`Kernel<A>`], whose first use checks the parameters'
    /// count, sizes and offsets (from the driver) and each parameter's C++ type against the
    /// list the image carries, as for [`kernels!`](crate::kernels!). An image that carries no
    /// types for `name` (not built by `cuda_build::ImageBuild`, or compiled by NVRTC) is
    /// refused: use [`kernel_unchecked_types`](Module::kernel_unchecked_types) then.
    ///
    /// # Safety
    /// As for each declaration of [`kernels!`](crate::kernels!): the kernel touches only
    /// memory it is given, for any argument values of types `A` that code able to call the
    /// returned kernel can pass (see its `# Safety`); and the image's type lists are the ones
    /// `cuda_build::ImageBuild` wrote for its kernels.
    ///
    /// ```no_run
    /// # let module: cuda_graph::kernel::Module = todo!();
    /// use cuda_graph::DevicePtr;
    /// // SAFETY: `scale` writes p[i] only for i < n; private to code passing n <= p.len().
    /// let scale = unsafe { module.kernel::<(DevicePtr<f32>, u32, f32)>("scale") }?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn kernel<A: KernelArgs>(&self, name: &str) -> Result<Kernel<A>> {
        let loaded = self.lookup(name)?;
        if loaded.cpp_types().is_none() {
            return Err(CudaError::invalid(
                "Module::kernel",
                format!(
                    "the image carries no C++ parameter types for kernel `{name}` (build it with \
                     cuda_build::ImageBuild), so they cannot be checked: use Module::kernel_unchecked_types"
                ),
            ));
        }
        Ok(Kernel::loaded(loaded))
    }

    /// The kernel `name` as a typed [`Kernel<A>`] whose first use checks the parameters'
    /// count, sizes and offsets only: for images that carry no C++ types (NVRTC output,
    /// another compiler's PTX).
    ///
    /// # Safety
    /// Each parameter's C++ type is the one `A` stands for (`float*`, not `double*`, for a
    /// `DevicePtr<f32>`: a size check cannot tell them apart), plus the promise of
    /// [`kernel`](Module::kernel).
    ///
    /// ```no_run
    /// # let module: cuda_graph::kernel::Module = todo!();
    /// use cuda_graph::DevicePtr;
    /// // SAFETY: `fill(unsigned* out, unsigned n, unsigned value)` writes out[i] only for
    /// // i < n, and is private to code passing n <= out.len().
    /// let fill = unsafe { module.kernel_unchecked_types::<(DevicePtr<u32>, u32, u32)>("fill") }?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn kernel_unchecked_types<A: KernelArgs>(&self, name: &str) -> Result<Kernel<A>> {
        Ok(Kernel::loaded(self.lookup(name)?))
    }

    /// The C++ parameter types the image carries for kernel `name` (`["*mut f32", "u32"]`),
    /// or `None` when it carries none; an unknown kernel is an error.
    ///
    /// ```no_run
    /// # let module: cuda_graph::kernel::Module = todo!();
    /// if let Some(types) = module.cpp_types("scale")? {
    ///     println!("scale({})", types.join(", "));
    /// }
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn cpp_types(&self, name: &str) -> Result<Option<Vec<String>>> {
        Ok(self.lookup(name)?.cpp_types().map(<[String]>::to_vec))
    }

    /// The names of the module's kernels (`cudaLibraryEnumerateKernels`, `cudaFuncGetName`).
    pub fn kernel_names(&self) -> Result<Vec<String>> {
        self.library.kernel_names()
    }

    /// The device global `name` of the module, `len` elements of `T`
    /// (`__device__ T name;` for 1, `__device__ T name[len];`). Its size is checked against
    /// the module's (`cudaLibraryGetGlobal`) at each use, on the device the use runs on; the
    /// symbol keeps the module loaded. See [`DeviceSymbol`].
    ///
    /// ```no_run
    /// # let module: cuda_graph::kernel::Module = todo!();
    /// let bias = module.symbol::<u32>("mod_bias", 1)?;
    /// bias.write(0, &[5])?;
    /// assert!(module.symbol::<u64>("mod_bias", 1)?.to_vec().is_err()); // 8 bytes: refused
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn symbol<T: DeviceRepr>(&self, name: &str, len: usize) -> Result<DeviceSymbol<T>> {
        let c_name = CString::new(name)
            .map_err(|_| CudaError::invalid("Module::symbol", "the symbol name contains a NUL byte"))?;
        Ok(DeviceSymbol::in_module(self.library.clone(), intern(name), c_name, len))
    }

    /// Looks `name` up and reads its type list, if the image has one.
    fn lookup(&self, name: &str) -> Result<LoadedKernel> {
        let c_name = CString::new(name)
            .map_err(|_| CudaError::invalid("Module::kernel", "the kernel name contains a NUL byte"))?;
        let handle = self.library.kernel(&c_name)?;
        let types = self.library.signature(name)?.map(|text| split_list(&text).into());
        Ok(LoadedKernel::new(intern(name), handle, types, self.library.clone()))
    }
}

/// `name` as a `&'static str`, kept once per distinct name for the process: kernel names
/// appear in [`CudaError::KernelSignature`], which holds static names.
fn intern(name: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let names = names.get_or_insert_with(HashSet::new);
    if let Some(&known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// Copies `bytes` bytes of device memory at `src` to the host (`cudaMemcpy`).
fn read_device(src: *const std::ffi::c_void, bytes: usize) -> Result<Vec<u8>> {
    let mut out = vec![0u8; bytes];
    check(
        // SAFETY: `out` holds `bytes` writable bytes; `src` is a module global of that size
        // (the driver gave both).
        unsafe {
            sys::cudaMemcpy(out.as_mut_ptr().cast(), src, bytes, sys::cudaMemcpyKind::cudaMemcpyDeviceToHost)
        },
        "cudaMemcpy",
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_interned_once() {
        let a = intern("interned_kernel_name");
        let b = intern(&String::from("interned_kernel_name"));
        assert!(std::ptr::eq(a, b));
    }

    #[test]
    fn what_is_not_an_image_is_refused_before_the_driver() {
        let err = Module::from_image(b"not an image").unwrap_err();
        assert!(err.to_string().contains("neither a cubin"), "{err}");
    }
}
