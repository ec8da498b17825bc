//! Build-script helper for crates with CUDA kernels.
//!
//! It finds the CUDA toolkit ([`Toolkit::find`]: `CUDA_PATH`, `CUDA_HOME`, `nvcc` on `PATH`,
//! `/usr/local/cuda`, then a project-local `.cuda/` above the package), compiles a crate's
//! `kernels/*.cu` with relocatable device code, device-links them with `libcudadevrt` so
//! kernels can launch kernels and graphs from the device ([`KernelBuild`]), and prints the
//! Cargo lines that link the CUDA runtime ([`link_cudart`]).
//!
//! ```no_run
//! // in build.rs's main(), for a crate with kernels/*.cu:
//! if let Err(err) = cuda_build::KernelBuild::new().compile("my_kernels") {
//!     panic!("{err}");
//! }
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod arch;
mod kernels;
mod link;
mod signature;
mod toolkit;

pub use arch::{gencode_flags, Arch, BadArch, DEFAULT_ARCHS};
pub use kernels::{emit_device_runtime_link, BuildError, Compiled, KernelBuild};
pub use link::{link_cudart, Cudart};
pub use signature::{
    kernel_definitions, PDL_HEADER, PDL_HEADER_NAME, SIGNATURE_HEADER, SIGNATURE_HEADER_NAME,
    SIGNATURE_SUFFIX, SLICE_HEADER, SLICE_HEADER_NAME,
};
pub use toolkit::{find_local_toolkit_dir, CudaVersion, Source, Toolkit, ToolkitNotFound, LOCAL_TOOLKIT_DIR};

/// True for a documentation-only build (`DOCS_RS` set, as on docs.rs): build scripts then
/// compile and link nothing, so docs build on machines without CUDA.
pub fn is_docs_build() -> bool {
    std::env::var_os("DOCS_RS").is_some()
}
