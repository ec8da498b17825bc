//! Kernels from modules loaded at run time: PTX, cubin and fatbin images
//! (`cudaLibraryLoadData`), kernels looked up by name (`cudaLibraryGetKernel`) as the same
//! typed [`Kernel<A>`] that [`kernels!`](crate::kernels!) declares, checked the same way at
//! first use: the count, sizes and offsets of the parameters from the driver
//! (`cudaFuncGetParamInfo`), and each parameter's C++ type against the list the image
//! carries, when it carries one (images built by `cuda_build::ImageBuild` do).
//!
//! The lists are the image's device globals `<kernel>__cuda_graph_signature`, read once when
//! the module is loaded, before any code or kernel can write them; lookups are checked
//! against that copy, and [`Module::symbol`] refuses those names. They are read on the
//! current device, which must therefore be able to run the image when it is loaded. A kernel
//! with a list has its parameters counted from the list: the driver is asked about each
//! parameter and no further.
//!
//! PTX text loads from safe code ([`Module::from_ptx`]); a cubin or fatbin only through
//! `unsafe` ([`Module::from_image`]): the driver reads such an image as far as its own
//! headers say, so only an image made by NVIDIA's tools can promise that it stays inside its
//! bytes. NVRTC's output loads safely (`kernel::nvrtc::Compiled::load`, feature `nvrtc`).
//!
//! ```no_run
//! use cuda_graph::kernel::{LaunchConfig, Module};
//! use cuda_graph::{DeviceBuffer, DevicePtr, Stream};
//! # static FATBIN: &[u8] = &[];
//! // SAFETY: FATBIN is the fatbin cuda_build::ImageBuild wrote in build.rs, included unchanged.
//! let module = unsafe { Module::from_image(FATBIN) }?;
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

use std::collections::HashMap;
use std::ffi::CString;
use std::fmt;
use std::sync::Arc;

use crate::runtime as sys;

use super::types::split_list;
use super::{DeviceSymbol, Kernel, KernelArgs};
use crate::error::{check, CudaError, Result};
use crate::memory::DeviceRepr;
use image::Format;
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
    /// Each kernel's C++ parameter types, from the image's signature globals, read when the
    /// module was loaded (kernels without one are absent): what lookups are checked against.
    signatures: Arc<HashMap<String, Arc<[String]>>>,
}

/// The suffix of the device globals that carry a kernel's C++ parameter types
/// (`<kernel>__cuda_graph_signature`, written by `cuda_build::ImageBuild`): reserved, never
/// handed out by [`Module::symbol`].
const SIGNATURE_SUFFIX: &str = "__cuda_graph_signature";

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Module({:#x})", self.library.raw())
    }
}

impl Module {
    /// Loads PTX text (`cudaLibraryLoadData`; the NUL the driver needs is added, and the text
    /// is cut at a NUL it holds). The driver compiles it for each device it is used on. PTX
    /// cannot call the device runtime (no `cudaGraphSetConditional`): use a cubin or fatbin
    /// device-linked with it for that. Text that does not begin with a printable ASCII
    /// character or whitespace, or holds no `.version` directive, is refused: the driver tells
    /// formats apart by their first bytes, and text beginning `\x7fELF` would be read as a cubin.
    ///
    /// ```no_run
    /// let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry noop() { ret; }\n";
    /// let module = cuda_graph::kernel::Module::from_ptx(ptx)?;
    /// assert_eq!(module.kernel_names()?, ["noop"]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn from_ptx(ptx: &str) -> Result<Module> {
        let bytes = image::prepare_ptx("Module::from_ptx", ptx)?;
        // SAFETY: `bytes` is text that begins with a printable ASCII character or whitespace
        // (so the driver reads it as PTX, not as a binary image), cut at its first NUL and
        // NUL-terminated by `prepare_ptx`: the driver reads up to that NUL, inside `bytes`.
        unsafe { Module::load(Format::Ptx, &bytes) }
    }

    /// Loads an image (`cudaLibraryLoadData`): a cubin (ELF), a fatbin, or PTX text, told
    /// apart by their first bytes. The driver copies what it needs: `image` may be dropped
    /// afterwards. Before the driver sees it, the sizes a cubin's or fatbin's outer headers
    /// give are checked to lie inside `image`, as a defence: not a proof that the driver stays
    /// inside it (below).
    ///
    /// Images that `cuda_build::ImageBuild` writes into `OUT_DIR` are loaded the same way
    /// (`include_bytes!` of the file, with a one-line `// SAFETY:`). No safe wrapper is
    /// offered: a file in `OUT_DIR` may have been written by anything in the build script, and
    /// nothing the crate can check at run time tells ImageBuild's output from other bytes.
    ///
    /// # Safety
    /// `image` is a complete, unmodified image made by NVIDIA's tools (nvcc, ptxas,
    /// fatbinary, NVRTC, nvJitLink) or by `cuda_build::ImageBuild`, or NUL-free or
    /// NUL-terminated PTX text. The driver takes no length: it reads a cubin or fatbin as far
    /// as the image's own headers say, and a fatbin's entries and a cubin's sections are
    /// parsed by the driver, which trusts them. Bytes from elsewhere (a file a user names, the
    /// network, an image cut or edited) may make it read past `image`: check them with
    /// NVIDIA's tools first, or compile them here (NVRTC, `kernel::nvrtc` with feature `nvrtc`,
    /// whose output loads safely). PTX text is better loaded with [`from_ptx`](Module::from_ptx),
    /// which is safe.
    ///
    /// ```no_run
    /// use cuda_graph::kernel::Module;
    /// // What `ImageBuild::new("kernels/scale.cu", ImageKind::Fatbin).compile("scale")` wrote
    /// // in build.rs: `include_bytes!(concat!(env!("OUT_DIR"), "/scale.fatbin"))`.
    /// # static SCALE: &[u8] = &[];
    /// // SAFETY: SCALE is the fatbin ImageBuild wrote in this crate's build.rs, unchanged.
    /// let module = unsafe { Module::from_image(SCALE) }?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn from_image(image: &[u8]) -> Result<Module> {
        let (format, bytes) = image::prepare("Module::from_image", image)?;
        // SAFETY: the caller promises a complete image of NVIDIA's tools or PTX text;
        // `prepare` kept its bytes and NUL-terminated PTX.
        unsafe { Module::load(format, &bytes) }
    }

    /// Loads `bytes` (of `format`), then reads every kernel's signature global, before the
    /// module is handed to anyone: no host code or kernel can have written them yet.
    ///
    /// # Safety
    /// As for [`Library::load`]: the driver reads only inside `bytes`.
    unsafe fn load(format: Format, bytes: &[u8]) -> Result<Module> {
        // SAFETY: the caller's promise, passed on.
        let library = Arc::new(unsafe { Library::load(bytes) }?);
        let signatures = read_signatures(&library, format, bytes)?;
        Ok(Module { library, signatures: Arc::new(signatures) })
    }

    /// The kernel `name` as a typed [`Kernel<A>`], whose first use checks the parameters'
    /// count, sizes and offsets (from the driver) and each parameter's C++ type against the
    /// list the image carries, as for [`kernels!`](crate::kernels!). An image that carries no
    /// types for `name` (not built by `cuda_build::ImageBuild`, or compiled by NVRTC) is
    /// refused: use [`kernel_unchecked_types`](Module::kernel_unchecked_types) then.
    ///
    /// The types are those the image carried when it was loaded: writing the signature global
    /// afterwards (from a kernel; [`symbol`](Module::symbol) refuses it) changes nothing. The
    /// parameters are counted from that list, so the check makes no failing CUDA call (under
    /// compute-sanitizer: no API error).
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
            return Err(CudaError::refused(
                "Module::kernel",
                crate::Refusal::NoParameterTypes { kernel: name.to_string() },
            ));
        }
        Ok(Kernel::loaded(loaded))
    }

    /// The kernel `name` as a typed [`Kernel<A>`] whose first use checks the parameters'
    /// count, sizes and offsets only: for images that carry no C++ types (NVRTC output,
    /// another compiler's PTX). Where the image does carry them, they are checked too, and
    /// they give the count.
    ///
    /// Without a type list the parameters are counted by asking the driver
    /// (`cudaFuncGetParamInfo`) for index 0, 1, … until it answers `cudaErrorInvalidValue`
    /// (CUDA 13.0 has no call that gives the count). compute-sanitizer, whose default reports
    /// failing API calls, therefore shows one API error per such kernel at its first use,
    /// and counts it in its `ERROR SUMMARY`:
    /// `Program hit cudaErrorInvalidValue (error 1) due to "invalid argument" on CUDA API call
    /// to cudaFuncGetParamInfo`. It is expected; `compute-sanitizer --report-api-errors no`
    /// silences it (and every other API error).
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
    /// Names ending in `__cuda_graph_signature` are refused: those globals carry the kernels'
    /// C++ parameter types, which belong to the type check.
    ///
    /// ```no_run
    /// # let module: cuda_graph::kernel::Module = todo!();
    /// let bias = module.symbol::<u32>("mod_bias", 1)?;
    /// bias.write(0, &[5])?;
    /// assert!(module.symbol::<u64>("mod_bias", 1)?.to_vec().is_err()); // 8 bytes: refused
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn symbol<T: DeviceRepr>(&self, name: &str, len: usize) -> Result<DeviceSymbol<T>> {
        if name.ends_with(SIGNATURE_SUFFIX) {
            return Err(CudaError::refused(
                "Module::symbol",
                crate::Refusal::ReservedSymbol { name: name.to_string(), suffix: SIGNATURE_SUFFIX },
            ));
        }
        let c_name = CString::new(name).map_err(|_| {
            CudaError::refused("Module::symbol", crate::Refusal::NulInName { what: "symbol" })
        })?;
        Ok(DeviceSymbol::in_module(self.library.clone(), intern(name), c_name, len))
    }

    /// Looks `name` up, with the type list read at load, if the image had one.
    fn lookup(&self, name: &str) -> Result<LoadedKernel> {
        let c_name = CString::new(name).map_err(|_| {
            CudaError::refused("Module::kernel", crate::Refusal::NulInName { what: "kernel" })
        })?;
        let handle = self.library.kernel(&c_name)?;
        let types = self.signatures.get(name).cloned();
        Ok(LoadedKernel::new(intern(name), handle, types, self.library.clone()))
    }
}

/// Every kernel's type list from the signature globals of a library just loaded, before
/// anything else can reach the library. A global is asked for only where the image may hold
/// it ([`image::named_before`]): a cubin or PTX without it makes no failing lookup.
fn read_signatures(
    library: &Library, format: Format, image: &[u8],
) -> Result<HashMap<String, Arc<[String]>>> {
    let mut signatures = HashMap::new();
    let owners = image::named_before(format, image, SIGNATURE_SUFFIX);
    if owners.as_ref().is_some_and(Vec::is_empty) {
        return Ok(signatures);
    }
    for name in library.kernel_names()? {
        let may_have = match &owners {
            Some(owners) => owners.iter().any(|owner| owner.ends_with(name.as_bytes())),
            None => true,
        };
        if !may_have {
            continue;
        }
        if let Some(text) = library.signature(&name)? {
            signatures.insert(name, split_list(&text).into());
        }
    }
    Ok(signatures)
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
        // SAFETY: refused by the header check before the driver sees it.
        let err = unsafe { Module::from_image(b"not an image") }.unwrap_err();
        assert_eq!(err.refusal(), Some(&crate::Refusal::NotAnImage), "{err}");
        let err = Module::from_ptx("\x7fELF\x02\x01 .version").unwrap_err();
        assert_eq!(err.refusal(), Some(&crate::Refusal::PtxFirstByte), "{err}");
    }
}
