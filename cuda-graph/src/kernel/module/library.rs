//! The loaded library (`cudaLibrary_t`): loading, lookups, and unloading only once no device
//! runs its kernels any more; and a kernel of it ([`LoadedKernel`]).

use std::ffi::{c_void, CStr, CString};
use std::ptr;
use std::sync::Arc;

use crate::runtime as sys;

use super::read_device;
use crate::error::{check, Result};
use crate::memory::{devices_idle, EVERY_DEVICE};
use crate::release::{defer_drop, in_host_fn, record_drop_error, KeepAlive};

/// A loaded library. Unloaded on drop, after waiting for every device with an active context,
/// since unloading is not documented to wait for kernels still running. Which devices ran its
/// kernels is not tracked: a lookup happens before the device that runs the kernel is made
/// current (a graph of another device), so any record kept at lookup could miss it.
pub(in crate::kernel) struct Library {
    raw: usize,
}

impl Library {
    /// Loads `image` (a cubin, a fatbin, or NUL-terminated PTX; checked by `image::prepare`).
    ///
    /// # Safety
    /// As for [`Module::from_image`](super::Module::from_image): `image` is NUL-terminated PTX
    /// text, or a complete, unmodified cubin or fatbin made by NVIDIA's tools, so that the
    /// driver, which takes no length, reads only inside it.
    pub(super) unsafe fn load(image: &[u8]) -> Result<Library> {
        let mut raw: sys::cudaLibrary_t = ptr::null_mut();
        check(
            // SAFETY: `raw` is a valid out-pointer; the caller promises that the driver reads
            // only inside `image` (NUL-terminated PTX, or a complete image of NVIDIA's tools);
            // no options.
            unsafe {
                sys::cudaLibraryLoadData(
                    &mut raw,
                    image.as_ptr().cast(),
                    ptr::null_mut(),
                    ptr::null_mut(),
                    0,
                    ptr::null_mut(),
                    ptr::null_mut(),
                    0,
                )
            },
            "cudaLibraryLoadData",
        )?;
        Ok(Library { raw: raw as usize })
    }

    pub(super) fn raw(&self) -> usize {
        self.raw
    }

    fn handle(&self) -> sys::cudaLibrary_t {
        self.raw as sys::cudaLibrary_t
    }

    /// The kernel `name` (`cudaLibraryGetKernel`), as an address.
    pub(super) fn kernel(&self, name: &CStr) -> Result<usize> {
        let mut kernel: sys::cudaKernel_t = ptr::null_mut();
        check(
            // SAFETY: the library is alive; `name` is NUL-terminated; `kernel` is writable.
            unsafe { sys::cudaLibraryGetKernel(&mut kernel, self.handle(), name.as_ptr()) },
            "cudaLibraryGetKernel",
        )?;
        Ok(kernel as usize)
    }

    /// The text of the device global `<name>__cuda_graph_signature`, if the image has one.
    pub(super) fn signature(&self, name: &str) -> Result<Option<String>> {
        let global = CString::new(format!("{name}__cuda_graph_signature")).expect("the name has no NUL");
        let (mut address, mut bytes): (*mut c_void, usize) = (ptr::null_mut(), 0);
        // SAFETY: the library is alive; `global` is NUL-terminated; both outputs writable.
        let status =
            unsafe { sys::cudaLibraryGetGlobal(&mut address, &mut bytes, self.handle(), global.as_ptr()) };
        if status == sys::cudaError::cudaErrorSymbolNotFound {
            // The lookup's error is not sticky, but it is the thread's last error: clear it.
            crate::error::forget_last_error();
            return Ok(None);
        }
        check(status, "cudaLibraryGetGlobal")?;
        let text = read_device(address, bytes)?;
        let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
        Ok(Some(String::from_utf8_lossy(&text[..end]).into_owned()))
    }

    /// The address and size in bytes of the device global `name` on the current device
    /// (`cudaLibraryGetGlobal`).
    pub(in crate::kernel) fn global(&self, name: &CStr) -> Result<(usize, usize)> {
        let (mut address, mut bytes): (*mut c_void, usize) = (ptr::null_mut(), 0);
        // SAFETY: the library is alive; `name` is NUL-terminated; both outputs writable.
        let status =
            unsafe { sys::cudaLibraryGetGlobal(&mut address, &mut bytes, self.handle(), name.as_ptr()) };
        if status != sys::cudaError::cudaSuccess {
            // The lookup's error is not sticky, but it is the thread's last error: clear it.
            crate::error::forget_last_error();
        }
        check(status, "cudaLibraryGetGlobal")?;
        Ok((address as usize, bytes))
    }

    /// The names of the library's kernels.
    pub(super) fn kernel_names(&self) -> Result<Vec<String>> {
        let mut count = 0u32;
        check(
            // SAFETY: the library is alive; `count` is writable.
            unsafe { sys::cudaLibraryGetKernelCount(&mut count, self.handle()) },
            "cudaLibraryGetKernelCount",
        )?;
        let mut kernels: Vec<sys::cudaKernel_t> = vec![ptr::null_mut(); count as usize];
        check(
            // SAFETY: `kernels` holds `count` writable handles; the library is alive.
            unsafe { sys::cudaLibraryEnumerateKernels(kernels.as_mut_ptr(), count, self.handle()) },
            "cudaLibraryEnumerateKernels",
        )?;
        kernels
            .into_iter()
            .map(|kernel| {
                let mut name: *const std::ffi::c_char = ptr::null();
                check(
                    // SAFETY: `kernel` is a kernel of this live library (taken as a
                    // cudaKernel_t, documented); `name` is writable.
                    unsafe { sys::cudaFuncGetName(&mut name, kernel as *const c_void) },
                    "cudaFuncGetName",
                )?;
                // SAFETY: the driver returned a NUL-terminated name that lives with the library.
                Ok(unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned())
            })
            .collect()
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        if self.raw == 0 {
            return;
        }
        if in_host_fn() {
            defer_drop(Library { raw: std::mem::take(&mut self.raw) });
            return;
        }
        // Unloading waits for the devices, which must not overlap a capture (see
        // `capture_gate::device_waits`): kept until the captures have ended.
        let Some(_no_capture) = crate::capture_gate::device_wait_allowed() else {
            crate::capture_gate::defer_until_no_capture(Library { raw: std::mem::take(&mut self.raw) });
            return;
        };
        if !devices_idle(EVERY_DEVICE) {
            // A kernel of it may still run: leak the library rather than unload it under it.
            return;
        }
        // SAFETY: loaded once, unloaded once; no kernel of it runs (every device with an
        // active context, so every device that ran one, is idle) and none can be launched
        // (the last owner is going).
        record_drop_error(unsafe { sys::cudaLibraryUnload(self.handle()) }, "cudaLibraryUnload");
    }
}

/// A kernel of a loaded library, as a [`Kernel`](crate::kernel::Kernel) holds it.
#[derive(Clone)]
pub(crate) struct LoadedKernel {
    name: &'static str,
    handle: usize,
    types: Option<Arc<[String]>>,
    library: Arc<Library>,
}

impl LoadedKernel {
    pub(super) fn new(
        name: &'static str, handle: usize, types: Option<Arc<[String]>>, library: Arc<Library>,
    ) -> Self {
        LoadedKernel { name, handle, types, library }
    }

    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// The C++ parameter types the image carries for it.
    pub(crate) fn cpp_types(&self) -> Option<&[String]> {
        self.types.as_deref()
    }

    /// The `cudaKernel_t`, as the `func` that launches and kernel nodes take (the runtime
    /// accepts a kernel handle there).
    pub(crate) fn function(&self) -> *const c_void {
        self.handle as *const c_void
    }

    /// The library, for graphs and execs whose nodes launch this kernel.
    pub(crate) fn owner(&self) -> KeepAlive {
        self.library.clone()
    }
}
