//! The benchmark's one error type: every failure ends the run with a message, never a panic.

use std::fmt;

use cuda_graph::CudaError;
use cuda_graph_bench_report::ReportError;

/// Why a benchmark run stopped.
#[derive(Debug)]
pub enum BenchError {
    /// There is no usable GPU or driver here.
    NoDevice(CudaError),
    /// A call of the Rust path failed.
    Cuda(CudaError),
    /// A `device-launch` call of the Rust path failed, or a device-side launch was refused
    /// (read back from its `ErrorSlot`).
    DeviceLaunch(device_launch::Error),
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
    /// Reading or writing a results folder (the CSV, the README, the charts) failed, or the
    /// goals file did not read: the report crate's error.
    Report(ReportError),
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::NoDevice(err) => write!(f, "no CUDA device: {err}"),
            BenchError::Cuda(err) => write!(f, "Rust path: {err}"),
            BenchError::DeviceLaunch(err) => write!(f, "Rust path: {err}"),
            BenchError::Twin { function, failed_call, error } => {
                write!(f, "C++ twin: {function}: `{failed_call}` failed: {error}")
            }
            BenchError::WrongResult(what) => write!(f, "wrong result: {what}"),
            BenchError::Options(what) => write!(f, "bad options: {what}"),
            BenchError::Report(err) => write!(f, "{err}"),
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

impl From<ReportError> for BenchError {
    fn from(err: ReportError) -> BenchError {
        BenchError::Report(err)
    }
}

impl From<device_launch::Error> for BenchError {
    fn from(err: device_launch::Error) -> BenchError {
        match err {
            device_launch::Error::Cuda(err) => err.into(),
            other => BenchError::DeviceLaunch(other),
        }
    }
}

impl From<device_launch::DeviceLaunchError> for BenchError {
    fn from(err: device_launch::DeviceLaunchError) -> BenchError {
        BenchError::DeviceLaunch(err.into())
    }
}

/// The result of every fallible step here.
pub type Result<T, E = BenchError> = std::result::Result<T, E>;

/// `Ok` when the counter is `want`; else [`BenchError::WrongResult`] naming what and which side.
pub fn expect_count(what: &str, side: &str, got: u32, want: u32) -> Result<()> {
    expect_value(what, side, "the counter", got, want)
}

/// `Ok` when `value` (e.g. `the step count`) is `want`; else [`BenchError::WrongResult`] naming
/// what, which side and which value.
pub fn expect_value(what: &str, side: &str, value: &str, got: u32, want: u32) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(BenchError::WrongResult(format!("{what} ({side}): {value} is {got}, expected {want}")))
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
        let err = expect_value("loop", "Rust", "the step count", 7, 8).unwrap_err();
        assert_eq!(err.to_string(), "wrong result: loop (Rust): the step count is 7, expected 8");
    }

    #[test]
    fn device_launch_errors_keep_cuda_errors_apart() {
        let no_device = device_launch::Error::Cuda(CudaError::from_code(100, "cudaGetDeviceCount"));
        assert!(matches!(BenchError::from(no_device), BenchError::NoDevice(_)));
        let refused = BenchError::from(device_launch::Error::HandlesOutstanding { holders: 1 });
        assert!(refused.to_string().starts_with("Rust path: cannot update a device graph"), "{refused}");
    }
}
