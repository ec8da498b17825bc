//! NVRTC, loaded at run time (`dlopen`), so that building needs no CUDA. Only the functions
//! used here are bound. The library (`libnvrtc.so.13`) is looked for, first found wins:
//!
//! 1. the file `CUDA_GRAPH_NVRTC` names;
//! 2. `libnvrtc.so.13` through the dynamic loader's own search (`LD_LIBRARY_PATH`, the system's
//!    libraries);
//! 3. under `CUDA_PATH`, then `CUDA_HOME`: `lib64/`, `lib/`, and `nvidia/cu13/lib/` (a
//!    `pip install --target` folder of the CUDA wheels, which `cuda-build` also takes as a
//!    toolkit);
//! 4. a `.cuda/` in the working folder or a folder above it: `.cuda/lib/` (the layout of
//!    `cargo xtask setup-cuda`) and `.cuda/nvidia/cu13/lib/` (the layout of the `pip install
//!    --upgrade --target .cuda …` that `cuda-build`'s README documents, with
//!    `nvidia-cuda-nvrtc==13.0.88` added to it);
//! 5. `/usr/local/cuda/lib64/`.
//!
//! When none loads, the error lists every path tried, with the loader's reason for files that
//! exist but failed to load.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
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

/// The library's file name (CUDA 13).
const NAME: &str = "libnvrtc.so.13";

/// Where the CUDA 13 wheels put the toolkit inside a `pip install --target DIR`
/// (`cuda_build::WHEEL_TOOLKIT_SUBDIR`: the same folder `cuda-build` looks in).
const WHEEL_TOOLKIT_SUBDIR: &str = "nvidia/cu13";

/// Where to look for the library, in order (the module's docs).
fn candidates() -> Vec<PathBuf> {
    let roots = ["CUDA_PATH", "CUDA_HOME"].map(|var| std::env::var_os(var).map(PathBuf::from));
    let named = std::env::var_os("CUDA_GRAPH_NVRTC").map(PathBuf::from);
    candidates_from(named, &roots, std::env::current_dir().ok())
}

/// [`candidates`] from the file `CUDA_GRAPH_NVRTC` names, the toolkit roots of `CUDA_PATH`
/// and `CUDA_HOME`, and the working folder.
fn candidates_from(
    named: Option<PathBuf>, roots: &[Option<PathBuf>], working: Option<PathBuf>,
) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = named.into_iter().collect();
    paths.push(PathBuf::from(NAME));
    for root in roots.iter().flatten() {
        paths.extend([root.join("lib64").join(NAME), root.join("lib").join(NAME), wheel_lib(root)]);
    }
    if let Some(mut dir) = working {
        loop {
            let local = dir.join(".cuda");
            paths.extend([local.join("lib").join(NAME), wheel_lib(&local)]);
            if !dir.pop() {
                break;
            }
        }
    }
    paths.push(PathBuf::from("/usr/local/cuda/lib64").join(NAME));
    paths
}

/// The library in a `pip install --target root` of the wheels.
fn wheel_lib(root: &Path) -> PathBuf {
    root.join(WHEEL_TOOLKIT_SUBDIR).join("lib").join(NAME)
}

/// The dynamic loader's message for the last failure (`dlerror`), if it has one.
fn loader_error() -> Option<String> {
    // SAFETY: plain call; it returns null or a NUL-terminated string valid until the next
    // dl* call of this thread, copied out at once.
    let text = unsafe { libc::dlerror() };
    // SAFETY: non-null, NUL-terminated (dlerror's contract).
    (!text.is_null()).then(|| unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned())
}

fn load() -> Result<Nvrtc, String> {
    let tried = candidates();
    // Files that exist but did not load, with the loader's reason.
    let mut refused = Vec::new();
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
        if handle.is_null() {
            let why = loader_error();
            if path.is_file() {
                refused.push(format!("{} ({})", path.display(), why.as_deref().unwrap_or("no reason given")));
            }
            return None;
        }
        Some(handle)
    });
    let Some(handle) = handle else {
        let list: Vec<String> = tried.iter().map(|path| path.display().to_string()).collect();
        let refused = if refused.is_empty() {
            String::new()
        } else {
            format!("; found but not loaded: {}", refused.join(", "))
        };
        return Err(format!(
            "NVRTC ({NAME}) was not found; looked for {}{refused}. Install it into the project's `.cuda/`: add \
             nvidia-cuda-nvrtc==13.0.88 to cuda-build's `pip install --upgrade --target .cuda …` command \
             (cuda_build::pip_install_command; in the cuda-graph workspace, `cargo xtask setup-cuda`), or set \
             CUDA_GRAPH_NVRTC to the library's path",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_covers_the_toolkit_layouts_and_the_wheels_in_dot_cuda() {
        let found = candidates_from(
            Some(PathBuf::from("/opt/nvrtc.so")),
            &[Some(PathBuf::from("/toolkit")), None],
            Some(PathBuf::from("/home/me/app")),
        );
        let expected = [
            "/opt/nvrtc.so",
            "libnvrtc.so.13",
            "/toolkit/lib64/libnvrtc.so.13",
            "/toolkit/lib/libnvrtc.so.13",
            "/toolkit/nvidia/cu13/lib/libnvrtc.so.13",
            "/home/me/app/.cuda/lib/libnvrtc.so.13",
            "/home/me/app/.cuda/nvidia/cu13/lib/libnvrtc.so.13",
            "/home/me/.cuda/lib/libnvrtc.so.13",
            "/home/me/.cuda/nvidia/cu13/lib/libnvrtc.so.13",
            "/home/.cuda/lib/libnvrtc.so.13",
            "/home/.cuda/nvidia/cu13/lib/libnvrtc.so.13",
            "/.cuda/lib/libnvrtc.so.13",
            "/.cuda/nvidia/cu13/lib/libnvrtc.so.13",
            "/usr/local/cuda/lib64/libnvrtc.so.13",
        ];
        assert_eq!(found, expected.map(PathBuf::from));
    }
}
