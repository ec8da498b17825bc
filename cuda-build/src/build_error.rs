//! The one error of a build: [`BuildError`], whose `Display` is the build script's panic
//! message.

use std::fmt;
use std::path::PathBuf;

use crate::arch::BadArch;
use crate::nvcc::NvccError;
use crate::toolkit::{MissingPiece, ToolkitNotFound};

/// Why kernels (or an image) could not be built. `Display` writes the whole story, meant to
/// be the build script's panic message: `.unwrap_or_else(|err| panic!("{err}"))`.
#[derive(Debug)]
pub enum BuildError {
    /// No usable toolkit was found; the inner value names where it looked and the fix.
    Toolkit(ToolkitNotFound),
    /// The toolkit found lacks what this build needs (`bin/nvcc`, `libcudadevrt.a`).
    Incomplete(MissingPiece),
    /// `CUDA_ARCHS` has an entry that is not an architecture.
    Arch(BadArch),
    /// The kernel folder has no `.cu` file.
    NoKernels(PathBuf),
    /// A `.include_from_dependency(NAME)` whose `DEP_NAME_INCLUDE` Cargo did not set.
    MissingDependencyInclude(String),
    /// Reading the kernel folder or writing into `OUT_DIR` failed.
    Io(PathBuf, std::io::Error),
    /// nvcc, the host compiler or nvlink it runs, the archiver, or the signature printer
    /// failed. Nothing of it was printed before: the error holds their own output (nvcc's
    /// `file(line): error: message` diagnostics), the step, the command line and, for known
    /// mistakes, a hint.
    Nvcc(NvccError),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Toolkit(err) => err.fmt(f),
            BuildError::Incomplete(err) => err.fmt(f),
            BuildError::Arch(err) => err.fmt(f),
            BuildError::NoKernels(dir) => write!(f, "no .cu file in {}", dir.display()),
            BuildError::MissingDependencyInclude(name) => write!(
                f,
                "DEP_{name}_INCLUDE is not set: add the crate whose `links = ...` key is \
                 {:?} to [dependencies] so Cargo passes its include path",
                name.to_lowercase().replace('_', "-")
            ),
            BuildError::Io(path, err) => write!(f, "cannot read or write {}: {err}", path.display()),
            BuildError::Nvcc(err) => err.fmt(f),
        }
    }
}

impl std::error::Error for BuildError {}

impl From<ToolkitNotFound> for BuildError {
    fn from(err: ToolkitNotFound) -> Self {
        BuildError::Toolkit(err)
    }
}

impl From<MissingPiece> for BuildError {
    fn from(err: MissingPiece) -> Self {
        BuildError::Incomplete(err)
    }
}

impl From<NvccError> for BuildError {
    fn from(err: NvccError) -> Self {
        BuildError::Nvcc(err)
    }
}
