//! NVRTC, loaded at run time (`dlopen`), so that building needs no CUDA: the library is found
//! where the toolkit is (`CUDA_GRAPH_NVRTC` names the file itself; else `libnvrtc.so.13`
//! through the dynamic loader's search, then under `CUDA_PATH`, `CUDA_HOME`, a `.cuda/` of the
//! working folder or above it, and `/usr/local/cuda`). Only the functions used here are bound.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::PathBuf;
use std::sync::OnceLock;

/// `nvrtcResult`.
pub(super) type Status = c_int;
/// `nvrtcProgram`.
pub(super) type Program = *mut c_void;

/// `NVRTC_SUCCESS`.
pub(super) const SUCCESS: Status = 0;
/// `NVRTC_ERROR_COMPILATION`.
pub(super) const ERROR_COMPILATION: Status = 6;

/// The NVRTC functions, with their C signatures from `nvrtc.h` (CUDA 13.0).
pub(super) struct Nvrtc {
    pub(super) version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> Status,
    pub(super) get_error_string: unsafe extern "C" fn(Status) -> *const c_char,
    pub(super) create_program: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> Status,
    pub(super) destroy_program: unsafe extern "C" fn(*mut Program) -> Status,
    pub(super) compile_program: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> Status,
    pub(super) get_program_log_size: unsafe extern "C" fn(Program, *mut usize) -> Status,
    pub(super) get_program_log: unsafe extern "C" fn(Program, *mut c_char) -> Status,
    pub(super) get_ptx_size: unsafe extern "C" fn(Program, *mut usize) -> Status,
    pub(super) get_ptx: unsafe extern "C" fn(Program, *mut c_char) -> Status,
    pub(super) get_cubin_size: unsafe extern "C" fn(Program, *mut usize) -> Status,
    pub(super) get_cubin: unsafe extern "C" fn(Program, *mut c_char) -> Status,
}

/// The loaded library, or why it could not be loaded; loaded once per process and never
/// unloaded (its functions are kept as plain pointers).
pub(super) fn nvrtc() -> Result<&'static Nvrtc, String> {
    static NVRTC: OnceLock<Result<Nvrtc, String>> = OnceLock::new();
    NVRTC.get_or_init(load).as_ref().map_err(Clone::clone)
}

/// The builtins library NVRTC 13.0 opens by name while compiling.
const BUILTINS: &str = "libnvrtc-builtins.so.13.0";

/// Where to look for the library, in order.
fn candidates() -> Vec<PathBuf> {
    const NAME: &str = "libnvrtc.so.13";
    let mut paths = Vec::new();
    if let Some(file) = std::env::var_os("CUDA_GRAPH_NVRTC") {
        paths.push(PathBuf::from(file));
    }
    paths.push(PathBuf::from(NAME));
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(root) = std::env::var_os(var) {
            let root = PathBuf::from(root);
            paths.extend([root.join("lib64").join(NAME), root.join("lib").join(NAME)]);
        }
    }
    if let Ok(mut dir) = std::env::current_dir() {
        loop {
            paths.push(dir.join(".cuda").join("lib").join(NAME));
            if !dir.pop() {
                break;
            }
        }
    }
    paths.push(PathBuf::from("/usr/local/cuda/lib64").join(NAME));
    paths
}

fn load() -> Result<Nvrtc, String> {
    let tried = candidates();
    let handle = tried.iter().find_map(|path| {
        let name = CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
        // NVRTC opens its builtins library by name when it compiles; a toolkit outside the
        // loader's search path (a wheel install in `.cuda/`) is found only if it is already
        // loaded, so load the one beside this candidate first.
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            let builtins = dir.join(BUILTINS);
            if let Ok(builtins) = CString::new(builtins.as_os_str().as_encoded_bytes()) {
                // SAFETY: a NUL-terminated path; a failure (no such file) is harmless.
                let _ = unsafe { libc::dlopen(builtins.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
            }
        }
        // SAFETY: `name` is a NUL-terminated path; dlopen runs the library's initializers,
        // which NVIDIA's libnvrtc has none of that could conflict with this process.
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        (!handle.is_null()).then_some(handle)
    });
    let Some(handle) = handle else {
        let list: Vec<String> = tried.iter().map(|path| path.display().to_string()).collect();
        return Err(format!(
            "NVRTC (libnvrtc.so.13) was not found; looked for {} (install it with `cargo xtask setup-cuda`, or \
             set CUDA_GRAPH_NVRTC to the library's path)",
            list.join(", ")
        ));
    };
    let symbol = |name: &CStr| -> Result<*mut c_void, String> {
        // SAFETY: `handle` is a live library handle (never closed); `name` is NUL-terminated.
        let address = unsafe { libc::dlsym(handle, name.as_ptr()) };
        if address.is_null() {
            Err(format!("the NVRTC library has no {}", name.to_string_lossy()))
        } else {
            Ok(address)
        }
    };
    macro_rules! bind {
        ($name:literal) => {
            // SAFETY: the symbol is NVRTC's function of that name, whose C signature the
            // field's function pointer type transcribes from nvrtc.h.
            unsafe { as_function(symbol($name)?) }
        };
    }
    Ok(Nvrtc {
        version: bind!(c"nvrtcVersion"),
        get_error_string: bind!(c"nvrtcGetErrorString"),
        create_program: bind!(c"nvrtcCreateProgram"),
        destroy_program: bind!(c"nvrtcDestroyProgram"),
        compile_program: bind!(c"nvrtcCompileProgram"),
        get_program_log_size: bind!(c"nvrtcGetProgramLogSize"),
        get_program_log: bind!(c"nvrtcGetProgramLog"),
        get_ptx_size: bind!(c"nvrtcGetPTXSize"),
        get_ptx: bind!(c"nvrtcGetPTX"),
        get_cubin_size: bind!(c"nvrtcGetCUBINSize"),
        get_cubin: bind!(c"nvrtcGetCUBIN"),
    })
}

/// `address` as the function pointer type `F`.
///
/// # Safety
/// `address` is a function whose C signature `F` (an `unsafe extern "C" fn`) transcribes.
unsafe fn as_function<F: Copy>(address: *mut c_void) -> F {
    assert_eq!(size_of::<F>(), size_of::<*mut c_void>(), "a function pointer is one pointer");
    // SAFETY: same size (checked), and the caller promises the signature.
    unsafe { std::mem::transmute_copy::<*mut c_void, F>(&address) }
}

/// NVRTC's name for `status` (`nvrtcGetErrorString`).
pub(super) fn status_name(nvrtc: &Nvrtc, status: Status) -> String {
    // SAFETY: plain call; NVRTC returns a static NUL-terminated string for any status.
    let text = unsafe { (nvrtc.get_error_string)(status) };
    if text.is_null() {
        return format!("NVRTC status {status}");
    }
    // SAFETY: non-null, NUL-terminated and static (nvrtc.h).
    unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
}
