//! The loaded library (`cudaLibrary_t`): loading, lookups, and unloading only once no device
//! runs its kernels any more; and a kernel of it ([`LoadedKernel`]).

use std::ffi::{c_void, CStr, CString};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use cudart_graph_sys as sys;

use super::read_device;
use crate::error::{check, Result};
use crate::release::{defer_drop, in_host_fn, record_drop_error, KeepAlive};

/// A loaded library. Unloaded on drop, after waiting for every device its kernels were used
/// on (`used_on`), since unloading is not documented to wait for kernels still running.
pub(in crate::kernel) struct Library {
    raw: usize,
    /// Bit `d` set once a kernel of this library was used with device `d` current; bit 63
    /// stands for every device from 63 up.
    used_on: AtomicU64,
}

impl Library {
    /// Loads `image` (a cubin, a fatbin, or NUL-terminated PTX; checked by `image::prepare`).
    pub(super) fn load(image: &[u8]) -> Result<Library> {
        let mut raw: sys::cudaLibrary_t = ptr::null_mut();
        check(
            // SAFETY: `raw` is a valid out-pointer; `image` is a complete image whose header
            // sizes lie inside it, or NUL-terminated PTX (`image::prepare`); no options.
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
        Ok(Library { raw: raw as usize, used_on: AtomicU64::new(0) })
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
            // SAFETY: plain call; reads and resets this thread's last-error slot.
            let _ = unsafe { sys::cudaGetLastError() };
            return Ok(None);
        }
        check(status, "cudaLibraryGetGlobal")?;
        let text = read_device(address, bytes)?;
        let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
        Ok(Some(String::from_utf8_lossy(&text[..end]).into_owned()))
    }

    /// The address and size in bytes of the device global `name` on the current device
    /// (`cudaLibraryGetGlobal`), noting the device as one the library is used on: the
    /// library is unloaded only after that device is idle.
    pub(in crate::kernel) fn global(&self, name: &CStr) -> Result<(usize, usize)> {
        let (mut address, mut bytes): (*mut c_void, usize) = (ptr::null_mut(), 0);
        // SAFETY: the library is alive; `name` is NUL-terminated; both outputs writable.
        let status =
            unsafe { sys::cudaLibraryGetGlobal(&mut address, &mut bytes, self.handle(), name.as_ptr()) };
        if status != sys::cudaError::cudaSuccess {
            // The lookup's error is not sticky, but it is the thread's last error: clear it.
            // SAFETY: plain call; reads and resets this thread's last-error slot.
            let _ = unsafe { sys::cudaGetLastError() };
        }
        check(status, "cudaLibraryGetGlobal")?;
        self.note_use();
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

    /// Notes that a kernel of this library is used with the current device.
    fn note_use(&self) {
        let mut device = 0;
        // SAFETY: `device` is a valid, writable i32.
        if unsafe { sys::cudaGetDevice(&mut device) } == sys::cudaError::cudaSuccess {
            self.used_on.fetch_or(1 << device.clamp(0, 63), Ordering::Relaxed);
        } else {
            self.used_on.fetch_or(u64::MAX, Ordering::Relaxed);
        }
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        if self.raw == 0 {
            return;
        }
        if in_host_fn() {
            defer_drop(Library {
                raw: std::mem::take(&mut self.raw),
                used_on: AtomicU64::new(self.used_on.load(Ordering::Relaxed)),
            });
            return;
        }
        if !devices_idle(self.used_on.load(Ordering::Relaxed)) {
            // A kernel of it may still run: leak the library rather than unload it under it.
            return;
        }
        // SAFETY: loaded once, unloaded once; no kernel of it runs (the devices it was used
        // on are idle) and none can be launched (the last owner is going).
        record_drop_error(unsafe { sys::cudaLibraryUnload(self.handle()) }, "cudaLibraryUnload");
    }
}

/// Waits for each device of the `used` mask (every device when bit 63 is set), restoring the
/// caller's current device. False (errors recorded) when any wait failed.
fn devices_idle(used: u64) -> bool {
    if used == 0 {
        return true;
    }
    let (mut current, mut count) = (0, 0);
    // SAFETY: both are valid, writable i32s.
    let status = unsafe { sys::cudaGetDevice(&mut current) };
    if status != sys::cudaError::cudaSuccess {
        record_drop_error(status, "cudaGetDevice");
        return false;
    }
    // SAFETY: as above.
    let status = unsafe { sys::cudaGetDeviceCount(&mut count) };
    if status != sys::cudaError::cudaSuccess {
        record_drop_error(status, "cudaGetDeviceCount");
        return false;
    }
    let mut idle = true;
    for device in 0..count {
        if used & (1 << device.min(63)) == 0 {
            continue;
        }
        // SAFETY: plain calls on a valid ordinal; the caller's device is restored below.
        let set = unsafe { sys::cudaSetDevice(device) };
        let synced = if set == sys::cudaError::cudaSuccess {
            // SAFETY: plain call.
            unsafe { sys::cudaDeviceSynchronize() }
        } else {
            set
        };
        if synced != sys::cudaError::cudaSuccess {
            record_drop_error(synced, "cudaDeviceSynchronize before cudaLibraryUnload");
            idle = false;
        }
    }
    // SAFETY: restores the caller's current device.
    record_drop_error(unsafe { sys::cudaSetDevice(current) }, "cudaSetDevice");
    idle
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
    /// accepts a kernel handle there), noting the current device as one it is used on.
    pub(crate) fn function(&self) -> *const c_void {
        self.library.note_use();
        self.handle as *const c_void
    }

    /// The library, for graphs and execs whose nodes launch this kernel.
    pub(crate) fn owner(&self) -> KeepAlive {
        self.library.clone()
    }
}
