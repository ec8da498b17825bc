//! The crate's one error type, the `check` helper that turns CUDA status codes into it, and
//! [`UpdateRefusal`], the reason an update was refused that [`CudaError::UpdateRefused`] carries.
//!
//! [`Refusal`], the reason a refusal carries, lives in `refusal` below. The lowest layer but
//! `runtime`: imports nothing else of the crate.

use std::ffi::{c_char, CStr};

use crate::runtime as sys;

pub mod refusal;
pub use refusal::Refusal;

/// The result of every fallible call in this crate.
pub type Result<T, E = CudaError> = std::result::Result<T, E>;

/// Why a call failed: a CUDA status (with its code, name, message and the call that returned
/// it), or a problem this crate found before asking CUDA.
///
/// ```
/// use cuda_graph::CudaError;
/// let err = CudaError::from_code(1, "cudaMalloc");
/// assert_eq!(err.code(), Some(1));
/// assert_eq!(err.to_string(), "cudaMalloc failed: cudaErrorInvalidValue (1): invalid argument");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CudaError {
    /// A CUDA call returned an error status.
    #[error("{call} failed: {name} ({code}): {message}")]
    Api {
        /// The `cudaError_t` value.
        code: i32,
        /// Its name, e.g. `cudaErrorInvalidValue`.
        name: &'static str,
        /// CUDA's description of it.
        message: &'static str,
        /// The CUDA function that returned it.
        call: &'static str,
    },
    /// A kernel's Rust declaration does not match the compiled kernel.
    #[error("kernel `{kernel}`: {problem}")]
    KernelSignature {
        /// The kernel's name.
        kernel: &'static str,
        /// What differs (which parameter, which size or offset).
        problem: String,
    },
    /// An argument CUDA would refuse, or misread, caught before the call: `reason` says why,
    /// with the numbers, devices and names involved; match on it to tell refusals apart.
    ///
    /// ```
    /// use cuda_graph::{CudaError, Refusal};
    /// let err = CudaError::InvalidArgument { call: "LaunchLimits::apply", reason: Refusal::ZeroPendingLaunches };
    /// assert!(matches!(err, CudaError::InvalidArgument { reason: Refusal::ZeroPendingLaunches, .. }));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "LaunchLimits::apply: a pending launch count of 0 would make every device-side kernel launch fail"
    /// );
    /// ```
    #[error("{call}: {reason}")]
    InvalidArgument {
        /// The operation that was refused.
        call: &'static str,
        /// Why: what is wrong with the argument and what is allowed.
        reason: Refusal,
    },
    /// `cudaGraphExecUpdate` refused the new graph.
    #[error("cudaGraphExecUpdate refused the update: {reason}{}", .node.as_ref().map(|node| format!(", at {node}")).unwrap_or_default())]
    UpdateRefused {
        /// Why CUDA refused it.
        reason: UpdateRefusal,
        /// The node of the new graph CUDA named (`errorNode`, and for a changed edge the
        /// node it comes from), as the graph's `nodes()` lists it: e.g. ``node 2 (kernel
        /// `fill`)``. `None` when CUDA named none (a refusal of the whole graph).
        node: Option<String>,
    },
    /// A library built on CUDA (NCCL, say, through `cuda-graph-nccl`) returned an error.
    ///
    /// ```
    /// let err = cuda_graph::CudaError::Library {
    ///     library: "NCCL",
    ///     call: "ncclAllReduce",
    ///     code: 4,
    ///     message: "invalid argument".into(),
    /// };
    /// assert_eq!(err.to_string(), "ncclAllReduce failed: NCCL error 4: invalid argument");
    /// ```
    #[error("{call} failed: {library} error {code}: {message}")]
    Library {
        /// The library's name, e.g. `NCCL`.
        library: &'static str,
        /// The library function that returned the error.
        call: &'static str,
        /// The library's status code.
        code: i32,
        /// The library's description of it (and of the last error, where it keeps one).
        message: String,
    },
    /// A host function (host node or stream callback) panicked; the panic was caught at the
    /// FFI boundary.
    #[error("a host function panicked: {message}")]
    HostFunctionPanicked {
        /// The panic payload, if it was a string.
        message: String,
    },
}

impl CudaError {
    /// The error for status `code` returned by `call`, with CUDA's name and message.
    pub fn from_code(code: i32, call: &'static str) -> CudaError {
        let status = sys::cudaError(code as u32);
        // SAFETY: cudaGetErrorName takes any code by value (unknown ones give a fixed string)
        // and returns a pointer to a static string or null; nothing is written.
        let name = unsafe { sys::cudaGetErrorName(status) };
        // SAFETY: as above, for cudaGetErrorString: any code, a static string (or null) back.
        let message = unsafe { sys::cudaGetErrorString(status) };
        CudaError::Api { code, name: static_str(name), message: static_str(message), call }
    }

    /// The CUDA status code, for errors CUDA returned.
    pub fn code(&self) -> Option<i32> {
        match self {
            CudaError::Api { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// Why the call was refused, for refusals this crate made before asking CUDA
    /// ([`CudaError::InvalidArgument`]).
    ///
    /// ```
    /// use cuda_graph::{CudaError, Refusal};
    /// let err = CudaError::InvalidArgument { call: "Event::from_raw", reason: Refusal::NullHandle { what: "event" } };
    /// assert!(matches!(err.refusal(), Some(Refusal::NullHandle { what: "event" })));
    /// assert_eq!(CudaError::from_code(1, "cudaMalloc").refusal(), None);
    /// ```
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            CudaError::InvalidArgument { reason, .. } => Some(reason),
            _ => None,
        }
    }

    /// True for errors that mean there is no usable GPU or driver here (35: insufficient
    /// driver, 100: no device, 34: stub library).
    pub fn is_no_device(&self) -> bool {
        matches!(self.code(), Some(34 | 35 | 100))
    }

    /// The refusal of `call` for `reason`.
    pub(crate) fn refused(call: &'static str, reason: impl Into<Refusal>) -> CudaError {
        CudaError::InvalidArgument { call, reason: reason.into() }
    }
}

/// Turns a CUDA status into `Ok(())` or the error naming `call`.
#[inline]
pub(crate) fn check(status: sys::cudaError_t, call: &'static str) -> Result<()> {
    if status == sys::cudaError::cudaSuccess {
        Ok(())
    } else if status == sys::cudaError::cudaErrorNotPermitted && sys::in_host_fn() {
        Err(CudaError::refused(call, Refusal::InHostFunction))
    } else {
        Err(CudaError::from_code(status.0 as i32, call))
    }
}

/// Forgets a failure that was an answer: the runtime keeps a failed call's status as this
/// thread's last error (`cudaGetLastError`), where a later reader, this crate's or the user's,
/// would take it for its own. Called right after a call whose failure the caller expected and
/// handled (a symbol not found, a parameter index past the last, peer access already enabled),
/// and after a failed launch, whose status the runtime would otherwise report twice.
pub(crate) fn forget_last_error() {
    // SAFETY: no arguments; reads and resets this thread's last-error slot.
    let _ = unsafe { sys::cudaGetLastError() };
}

/// The status of a query (`cudaEventQuery`, `cudaStreamQuery`) as done or not: `true` for
/// success, `false` for `cudaErrorNotReady`, any other status as the error of `call`.
pub(crate) fn check_done(status: sys::cudaError_t, call: &'static str) -> Result<bool> {
    if status == sys::cudaError::cudaErrorNotReady {
        return Ok(false);
    }
    check(status, call).map(|()| true)
}

fn static_str(p: *const c_char) -> &'static str {
    if p.is_null() {
        return "unknown CUDA error";
    }
    // SAFETY: cudaGetErrorName/cudaGetErrorString return pointers to static, NUL-terminated
    // strings inside the runtime library, valid for the life of the program.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("unknown CUDA error")
}

/// Why CUDA refused to update an exec from a graph (`cudaGraphExecUpdateResult`).
///
/// ```
/// use cuda_graph::UpdateRefusal;
/// assert_eq!(UpdateRefusal::TopologyChanged.to_string(), "the graph's topology changed (nodes or edges added or removed)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UpdateRefusal {
    /// An unspecified error.
    Error,
    /// Nodes or edges were added or removed.
    TopologyChanged,
    /// A node's type changed.
    NodeTypeChanged,
    /// A kernel node's function changed in a way the update cannot apply.
    FunctionChanged,
    /// A node's parameters changed in a way the update cannot apply.
    ParametersChanged,
    /// Something about the graph that the update does not support.
    NotSupported,
    /// A kernel node's function changed to one of an unsupported kind.
    UnsupportedFunctionChange,
    /// A node's attributes changed in a way the update cannot apply.
    AttributesChanged,
    /// A result code this crate does not know.
    Unknown(u32),
}

impl UpdateRefusal {
    /// Maps `cudaGraphExecUpdateResult`; `None` for success.
    pub fn from_raw(result: sys::cudaGraphExecUpdateResult) -> Option<UpdateRefusal> {
        use sys::cudaGraphExecUpdateResult as R;
        Some(match result {
            R::cudaGraphExecUpdateSuccess => return None,
            R::cudaGraphExecUpdateError => UpdateRefusal::Error,
            R::cudaGraphExecUpdateErrorTopologyChanged => UpdateRefusal::TopologyChanged,
            R::cudaGraphExecUpdateErrorNodeTypeChanged => UpdateRefusal::NodeTypeChanged,
            R::cudaGraphExecUpdateErrorFunctionChanged => UpdateRefusal::FunctionChanged,
            R::cudaGraphExecUpdateErrorParametersChanged => UpdateRefusal::ParametersChanged,
            R::cudaGraphExecUpdateErrorNotSupported => UpdateRefusal::NotSupported,
            R::cudaGraphExecUpdateErrorUnsupportedFunctionChange => UpdateRefusal::UnsupportedFunctionChange,
            R::cudaGraphExecUpdateErrorAttributesChanged => UpdateRefusal::AttributesChanged,
            other => UpdateRefusal::Unknown(other.0),
        })
    }
}

impl std::fmt::Display for UpdateRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpdateRefusal::Error => f.write_str("an unspecified error"),
            UpdateRefusal::TopologyChanged => {
                f.write_str("the graph's topology changed (nodes or edges added or removed)")
            }
            UpdateRefusal::NodeTypeChanged => f.write_str("a node's type changed"),
            UpdateRefusal::FunctionChanged => f.write_str("a kernel node's function changed"),
            UpdateRefusal::ParametersChanged => {
                f.write_str("a node's parameters changed in a way that cannot be updated")
            }
            UpdateRefusal::NotSupported => {
                f.write_str("the graph uses something the update does not support")
            }
            UpdateRefusal::UnsupportedFunctionChange => {
                f.write_str("a kernel node's function changed to an unsupported kind")
            }
            UpdateRefusal::AttributesChanged => f.write_str("a node's attributes changed"),
            UpdateRefusal::Unknown(code) => write!(f, "unknown update result {code}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_api_error_names_the_code_and_the_call() {
        let err = CudaError::from_code(2, "cudaMalloc");
        assert_eq!(err.code(), Some(2));
        let text = err.to_string();
        assert!(text.starts_with("cudaMalloc failed: cudaErrorMemoryAllocation (2)"), "{text}");
    }

    #[test]
    fn check_passes_success_and_maps_failures() {
        assert!(check(sys::cudaError::cudaSuccess, "x").is_ok());
        let err = check(sys::cudaError::cudaErrorInsufficientDriver, "cudaSetDevice").unwrap_err();
        assert!(err.is_no_device());
        assert!(err.to_string().contains("cudaErrorInsufficientDriver (35)"), "{err}");
    }

    #[test]
    fn non_cuda_errors_have_no_code() {
        let err = CudaError::refused("launch", Refusal::NoSuchDevice { ordinal: 3, count: 1 });
        assert_eq!(err.code(), None);
        assert_eq!(err.to_string(), "launch: device 3 does not exist: there are 1 devices");
    }
}
