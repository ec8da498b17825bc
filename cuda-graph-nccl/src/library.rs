//! Finding NCCL at run time, its version, and its status codes as [`CudaError`]s.
//!
//! cudarc loads the library on the first NCCL call and panics when it cannot; every entry
//! point of this crate asks [`loaded`] first, which looks for it once and turns its absence
//! into an error naming what was searched.

use std::ffi::{c_char, CStr};
use std::sync::OnceLock;

use cuda_graph::{CudaError, Result};
use cudarc::nccl::sys;

/// The oldest NCCL this crate calls (every function it uses exists there).
pub const MIN_VERSION: (i32, i32) = (2, 18);

/// The NCCL library found: its version as (major, minor, patch).
///
/// ```no_run
/// let (major, minor, patch) = cuda_graph_nccl::version()?;
/// println!("NCCL {major}.{minor}.{patch}");
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub fn version() -> Result<(i32, i32, i32)> {
    loaded("cuda_graph_nccl::version")
}

/// The version of the NCCL found, looked for once per process; the error names the search
/// (see the crate docs, "Finding NCCL").
pub(crate) fn loaded(call: &'static str) -> Result<(i32, i32, i32)> {
    static FOUND: OnceLock<std::result::Result<(i32, i32, i32), String>> = OnceLock::new();
    let found = FOUND.get_or_init(|| {
        // SAFETY: only tries to open the library by each name cudarc would load (and closes
        // it again); loading NCCL runs no code of ours.
        if !unsafe { sys::is_culib_present() } {
            return Err(format!(
                "NCCL not found: the dynamic loader found no libnccl.so (names tried: {}). Run \
                 `cargo xtask setup-cuda --nccl` and put the project's .cuda/nccl/lib on \
                 LD_LIBRARY_PATH (cargo xtask test does), or install NCCL where the loader \
                 looks (libnccl.so, e.g. the libnccl-dev package)",
                cudarc::get_lib_name_candidates("nccl").join(", ")
            ));
        }
        let mut code = 0;
        // SAFETY: the library is present (checked above), so cudarc resolves the symbol;
        // `code` is a valid, writable int.
        let status = unsafe { sys::ncclGetVersion(&mut code) };
        if status != sys::ncclResult_t::ncclSuccess {
            return Err(format!("ncclGetVersion failed: NCCL error {}", status as i32));
        }
        let version = (code / 10000, (code / 100) % 100, code % 100);
        if (version.0, version.1) < MIN_VERSION {
            return Err(format!(
                "NCCL {}.{}.{} is older than {}.{}, the oldest this crate calls",
                version.0, version.1, version.2, MIN_VERSION.0, MIN_VERSION.1
            ));
        }
        Ok(version)
    });
    found.clone().map_err(|message| CudaError::Library { library: "NCCL", call, code: -1, message })
}

/// `Ok` for `ncclSuccess`; else the error of `call` with NCCL's description of the code and,
/// when `comm` is given, NCCL's last error message for it (`ncclGetLastError`).
pub(crate) fn check(
    status: sys::ncclResult_t, call: &'static str, comm: Option<sys::ncclComm_t>,
) -> Result<()> {
    if status == sys::ncclResult_t::ncclSuccess {
        return Ok(());
    }
    // SAFETY: NCCL is loaded (a call just returned); ncclGetErrorString takes any code and
    // returns a static string.
    let mut message = text(unsafe { sys::ncclGetErrorString(status) });
    let last = match comm {
        // SAFETY: `comm` is a live communicator of the caller's; NCCL returns a string it
        // owns, valid until the next NCCL call on this thread (copied at once).
        Some(comm) => text(unsafe { sys::ncclGetLastError(comm) }),
        // SAFETY: a null communicator asks for the thread's last error, as NCCL documents.
        None => text(unsafe { sys::ncclGetLastError(std::ptr::null_mut()) }),
    };
    if !last.is_empty() && last != message {
        message = format!("{message} ({last})");
    }
    Err(CudaError::Library { library: "NCCL", call, code: status as i32, message })
}

/// A C string NCCL returned, copied (empty for null).
fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: NCCL returns NUL-terminated strings that stay valid at least until the next
    // NCCL call on this thread; this copies it before any.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_is_ok_without_asking_nccl() {
        assert!(check(sys::ncclResult_t::ncclSuccess, "ncclAllReduce", None).is_ok());
    }

    #[test]
    fn nccl_codes_carry_nccls_own_description() {
        if let Err(err) = version() {
            assert!(std::env::var("REQUIRE_NCCL").map_or(true, |v| v != "1"), "REQUIRE_NCCL=1 but {err}");
            assert!(err.to_string().contains("libnccl.so"), "{err}");
            eprintln!("skipped: {err}: nccl_codes_carry_nccls_own_description");
            return;
        }
        let err = check(sys::ncclResult_t::ncclInvalidUsage, "ncclAllReduce", None).unwrap_err();
        let CudaError::Library { library, call, code, message } = &err else { panic!("{err:?}") };
        assert_eq!((*library, *call, *code), ("NCCL", "ncclAllReduce", 5));
        assert!(message.to_lowercase().contains("usage"), "NCCL's own text: {message}");
    }

    #[test]
    fn text_of_null_is_empty() {
        assert_eq!(text(std::ptr::null()), "");
        assert_eq!(text(c" invalid usage ".as_ptr()), "invalid usage");
    }
}
