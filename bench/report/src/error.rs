//! The report's one error type: every failure is a message, never a panic.

use std::fmt;
use std::path::PathBuf;

/// Why a report could not be made.
#[derive(Debug)]
pub enum ReportError {
    /// Reading or writing a file failed.
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What went wrong.
        error: std::io::Error,
    },
    /// A `bench.csv` could not be read back.
    Csv(String),
    /// The goals file is not what [`crate::goals`] reads.
    Goals(String),
    /// Drawing a chart failed.
    Chart(String),
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            ReportError::Csv(what) => write!(f, "bench.csv: {what}"),
            ReportError::Goals(what) => write!(f, "goals: {what}"),
            ReportError::Chart(what) => write!(f, "chart: {what}"),
        }
    }
}

impl std::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReportError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// The result of every fallible step here.
pub type Result<T, E = ReportError> = std::result::Result<T, E>;

/// Writes `contents` to `dir/name`, creating `dir`, and returns the file's path.
pub fn write_file(dir: &std::path::Path, name: &str, contents: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|error| ReportError::Io { path: dir.to_path_buf(), error })?;
    let path = dir.join(name);
    std::fs::write(&path, contents).map_err(|error| ReportError::Io { path: path.clone(), error })?;
    Ok(path)
}
