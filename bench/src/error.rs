//! The benchmark's one error type: every failure ends the run with a message, never a panic.

use std::fmt;
use std::path::PathBuf;

use cuda_graph::CudaError;

/// Why a benchmark run stopped.
#[derive(Debug)]
pub enum BenchError {
    /// There is no usable GPU or driver here.
    NoDevice(CudaError),
    /// A call of the Rust path failed.
    Cuda(CudaError),
    /// A CUDA call inside the C++ twin failed.
    Twin {
        /// The twin function called.
        function: &'static str,
        /// The CUDA call inside it that failed, as written in twin.cu.
        failed_call: String,
        /// The status it returned.
        error: CudaError,
    },
    /// A measured run left a wrong result: its time would mean nothing.
    WrongResult(String),
    /// The options cannot run.
    Options(String),
    /// Writing an output file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: std::io::Error,
    },
    /// Drawing the chart failed.
    Chart(String),
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::NoDevice(err) => write!(f, "no CUDA device: {err}"),
            BenchError::Cuda(err) => write!(f, "Rust path: {err}"),
            BenchError::Twin { function, failed_call, error } => {
                write!(f, "C++ twin: {function}: `{failed_call}` failed: {error}")
            }
            BenchError::WrongResult(what) => write!(f, "wrong result: {what}"),
            BenchError::Options(what) => write!(f, "bad options: {what}"),
            BenchError::Io { path, error } => write!(f, "cannot write {}: {error}", path.display()),
            BenchError::Chart(what) => write!(f, "chart: {what}"),
        }
    }
}

impl std::error::Error for BenchError {}

impl From<CudaError> for BenchError {
    fn from(err: CudaError) -> BenchError {
        if err.is_no_device() {
            BenchError::NoDevice(err)
        } else {
            BenchError::Cuda(err)
        }
    }
}

/// The result of every fallible step here.
pub type Result<T, E = BenchError> = std::result::Result<T, E>;

/// `Ok` when `got == want`; else [`BenchError::WrongResult`] naming what and which side.
pub fn expect_count(what: &str, side: &str, got: u32, want: u32) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(BenchError::WrongResult(format!("{what} ({side}): the counter is {got}, expected {want}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_side_and_the_call() {
        let err = BenchError::Twin {
            function: "twin_chain_replay",
            failed_call: "cudaGraphLaunch(c->exec, s->stream)".into(),
            error: CudaError::from_code(1, "twin_chain_replay"),
        };
        let text = err.to_string();
        assert!(
            text.starts_with("C++ twin: twin_chain_replay: `cudaGraphLaunch(c->exec, s->stream)` failed"),
            "{text}"
        );
        assert!(BenchError::from(CudaError::from_code(35, "cudaGetDeviceCount"))
            .to_string()
            .starts_with("no CUDA device"));
        assert!(expect_count("chain", "Rust", 3, 3).is_ok());
        let err = expect_count("chain", "C++", 2, 3).unwrap_err();
        assert_eq!(err.to_string(), "wrong result: chain (C++): the counter is 2, expected 3");
    }
}
