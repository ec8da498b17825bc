//! The error every chapter program returns: refused options, a failed CUDA or device-launch
//! call, or a check that had to hold before the program could go on.

use cuda_graph::CudaError;

/// Why a chapter program stopped without a report.
///
/// A bad option is told apart from a device failure: [`ExampleError::Options`] names the
/// option and comes before any CUDA call, so it needs no GPU.
///
/// ```
/// use chapter_common::ExampleError;
///
/// let err = ExampleError::options("cuda_graphs", "kernels", "kernels must be 2..=4096, not 1");
/// assert!(matches!(err, ExampleError::Options { option: "kernels", .. }));
/// assert_eq!(err.to_string(), "cuda_graphs: invalid option `kernels`: kernels must be 2..=4096, not 1");
///
/// let cuda: ExampleError = cuda_graph::CudaError::InvalidArgument {
///     call: "x",
///     reason: cuda_graph::Refusal::NotPtx,
/// }
/// .into();
/// assert!(matches!(cuda, ExampleError::Cuda(_)));
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ExampleError {
    /// An option is out of bounds; refused before any CUDA call.
    #[error("{program}: invalid option `{option}`: {problem}")]
    Options {
        /// The program that refused it.
        program: &'static str,
        /// The option's name (the field of the program's `Options`).
        option: &'static str,
        /// What is wrong and what is allowed.
        problem: String,
    },
    /// A CUDA call failed (or `cuda-graph` refused an argument).
    #[error(transparent)]
    Cuda(#[from] CudaError),
    /// `device-launch` refused something other than through a CUDA call (a node kind, a limit).
    #[error("device launch: {0}")]
    DeviceLaunch(device_launch::Error),
    /// Something the program must see before it can go on did not hold (on this device, say).
    #[error("{program}: {problem}")]
    Check {
        /// The program that found it.
        program: &'static str,
        /// What did not hold.
        problem: String,
    },
}

impl ExampleError {
    /// A refused option of `program`.
    pub fn options(program: &'static str, option: &'static str, problem: impl Into<String>) -> ExampleError {
        ExampleError::Options { program, option, problem: problem.into() }
    }

    /// A failed check of `program`.
    pub fn check(program: &'static str, problem: impl Into<String>) -> ExampleError {
        ExampleError::Check { program, problem: problem.into() }
    }
}

impl From<device_launch::Error> for ExampleError {
    /// A CUDA failure inside `device-launch` stays a [`ExampleError::Cuda`]; anything else it
    /// refused is a [`ExampleError::DeviceLaunch`].
    fn from(err: device_launch::Error) -> ExampleError {
        match err {
            device_launch::Error::Cuda(err) => ExampleError::Cuda(err),
            other => ExampleError::DeviceLaunch(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_launch_cuda_failures_stay_cuda_failures() {
        let cuda = CudaError::InvalidArgument { call: "c", reason: cuda_graph::Refusal::NotPtx };
        let err = ExampleError::from(device_launch::Error::Cuda(cuda.clone()));
        assert_eq!(err, ExampleError::Cuda(cuda));
    }
}
