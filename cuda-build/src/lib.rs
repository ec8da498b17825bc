//! Build-script helper for crates with CUDA kernels: it finds the CUDA toolkit
//! ([`Toolkit::find`]), compiles a crate's `kernels/*.cu` with relocatable device code and
//! device-links them with `libcudadevrt`, so kernels can launch kernels and graphs from the
//! device ([`KernelBuild`]), builds loadable images ([`ImageBuild`]), and prints the Cargo
//! lines that link the CUDA runtime ([`link_cudart`]).
//!
//! ```no_run
//! // in build.rs's main(), for a crate with kernels/*.cu (cuda-build in [build-dependencies]):
//! cuda_build::KernelBuild::new()
//!     .compile("my_kernels")
//!     .unwrap_or_else(|err| panic!("{err}"));
//! ```
//!
//! # The CUDA toolkit
//! Building needs CUDA 13.0 or newer ([`MIN_CUDA_VERSION`], checked at build time: an older
//! toolkit is refused with its version and place). Every build script of the crates
//! (`cuda-build`'s builds, `cudart-graph-sys`, `cudadevrt-sys`) searches the same way, with
//! [`Toolkit::find`], so one build uses one toolkit. The first of these wins:
//!
//! 1. `CUDA_PATH`, then `CUDA_HOME`: when set, it must name a usable toolkit, else the build
//!    fails saying why;
//! 2. a project-local `.cuda/` in a folder above the build's target folder: your project's
//!    folder when `target/` is inside it (also any folder above, like your home folder);
//! 3. the toolkit of the `nvcc` on `PATH`;
//! 4. `/usr/local/cuda`.
//!
//! Without root, one command installs CUDA 13.0 from PyPI (Python 3 with pip is all it needs).
//! Run it in the folder of your `Cargo.toml` (or of your workspace), and builds find the
//! toolkit with no variable set (add `.cuda/` to `.gitignore`):
//!
//! ```text
//! python3 -m pip install --upgrade --target .cuda nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85
//! ```
//!
//! ([`pip_install_command`]; a `pip install --target DIR` folder is a toolkit as it stands:
//! `CUDA_PATH=DIR` works too, the toolkit being `DIR/nvidia/cu13`.) The search starts from
//! the target folder, not from each package, so every crate of a build (from the registry,
//! from path dependencies) finds the same `.cuda/`; with a target folder outside the project
//! (`CARGO_TARGET_DIR`), name the toolkit in `.cargo/config.toml` as below. Crates that only load
//! kernels at run time (PTX, NVRTC) and compile none need only `nvidia-cuda-runtime`:
//! `cudart-graph-sys` links the runtime from a toolkit without `bin/nvcc`, and only
//! compiling kernels asks for it.
//!
//! Build scripts rerun when `CUDA_PATH` or `CUDA_HOME` changes, so switching toolkits
//! rebuilds. A variable set in one shell but not in another process that runs Cargo (an
//! editor's rust-analyzer) therefore reruns them, and may find another toolkit or none. The
//! project-local `.cuda/` needs no variable; a toolkit elsewhere is best named once for every
//! process in the project's `.cargo/config.toml`, which Cargo applies to all of them:
//!
//! ```toml
//! [env]
//! CUDA_PATH = "/usr/local/cuda-13.0"
//! # or the project's own, with the target folder elsewhere:
//! # CUDA_PATH = { value = ".cuda", relative = true }
//! ```
//!
//! # Compiler errors and warnings
//! When nvcc fails, the build error holds nvcc's own diagnostics, `file(line): error: ...`,
//! with the step and the command line ([`NvccError`]); nvcc's warnings are shown as Cargo
//! warnings. A kernel typo reads:
//!
//! ```text
//! compiling /home/me/app/kernels/app.cu failed (exit status: 2):
//!
//! /home/me/app/kernels/app.cu(4): error: identifier "valu" is undefined
//!       if (i < n) out[i] = valu;
//!                           ^
//!
//! 1 error detected in the compilation of "/home/me/app/target/debug/build/app-…/out/cuda-graph-signatures/app.cu".
//!
//! command: "/home/me/app/.cuda/nvidia/cu13/bin/nvcc" "-I" …
//! ```
//!
//! # `kernels!` in binaries, tests and examples
//! [`KernelBuild`] links the kernels into the package's library and also into each of its
//! binaries, tests, examples and benches, so `cuda_graph::kernels!` may declare them in any
//! of those targets (Cargo alone would link them into the library only).
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod arch;
mod build_error;
mod image;
mod kernels;
mod link;
mod nvcc;
mod signature;
mod toolkit;

pub use arch::{gencode_flags, Arch, BadArch, DEFAULT_ARCHS};
pub use build_error::BuildError;
pub use image::{ImageBuild, ImageKind};
pub use kernels::{emit_device_runtime_link, Compiled, KernelBuild};
pub use link::{link_cudart, Cudart};
pub use nvcc::NvccError;
pub use signature::{
    kernel_definitions, main_file_text, PDL_HEADER, PDL_HEADER_NAME, SIGNATURE_HEADER, SIGNATURE_HEADER_NAME,
    SIGNATURE_SUFFIX, SLICE_HEADER, SLICE_HEADER_NAME,
};
pub use toolkit::{
    find_local_toolkit_dir, pip_install_command, CudaVersion, MissingPiece, Piece, Source, Toolkit,
    ToolkitNotFound, LOCAL_TOOLKIT_DIR, MIN_CUDA_VERSION, TOOLKIT_ENV_VARS, TOOLKIT_WHEELS,
    WHEEL_TOOLKIT_SUBDIR,
};

/// True for a documentation-only build (`DOCS_RS` set, as on docs.rs): build scripts then
/// compile and link nothing, so docs build on machines without CUDA. Tells Cargo to run the
/// build script again when `DOCS_RS` changes: otherwise a docs-only run's output (no link
/// lines) would be reused by the next normal build, which then fails to link.
pub fn is_docs_build() -> bool {
    println!("cargo:rerun-if-env-changed=DOCS_RS");
    std::env::var_os("DOCS_RS").is_some()
}
