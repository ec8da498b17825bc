//! Compiling a crate's `kernels/*.cu` into a static library that Rust links.

use std::env;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::arch::{gencode_flags, Arch, BadArch, DEFAULT_ARCHS};
use crate::toolkit::{Toolkit, ToolkitNotFound};

/// Compiles CUDA kernels with relocatable device code (`-rdc=true`), device-links them against
/// `libcudadevrt` (so kernels may launch kernels and graphs), and tells Cargo how to link the
/// result. Meant for `build.rs`.
///
/// Each `.cu` file is compiled through a wrapper generated in `OUT_DIR` that includes it and
/// then defines, for every `extern "C" __global__` kernel it defines, a host function
/// `<kernel>__cuda_graph_signature()` returning the kernel's C++ parameter types (integers by
/// size and signedness, `f32`, `*mut T`/`*const T`, structs by name: see
/// `cuda_graph_signature.cuh`). `cuda_graph::kernels!` declares that function, so a kernel
/// declared in Rust but not compiled here fails to link, and compares the list with its Rust
/// parameter types at first use. Kernels are found by scanning the source: write them as
/// `extern "C" __global__ void name(...) { ... }` (specifiers like `__launch_bounds__(256)`
/// and `extern "C" { ... }` blocks are fine), not through a macro. The same folder, on the
/// include path, holds `cuda_graph.cuh` (`cuda_graph::slice<T>`, a pointer and its length as
/// one parameter: the C++ side of `cuda_graph::DeviceSlice<T>`) and `cuda_graph_pdl.cuh`
/// (`cuda_graph::pdl::wait_upstream()` and `launch_dependents()`, for kernels joined by
/// programmatic edges).
///
/// Environment it reads: `CUDA_ARCHS` (default `80;90`; SASS for each, PTX for the last),
/// `CUDA_DEVICE_DEBUG=1` (adds `-G`, off by default because it makes kernels very slow), and
/// `DOCS_RS` (compiles nothing, so docs build without a toolkit).
///
/// ```no_run
/// // in build.rs's main():
/// cuda_build::KernelBuild::new()
///     .include_from_dependency("DEVICE_LAUNCH")
///     .compile("my_kernels")
///     .unwrap_or_else(|err| panic!("{err}"));
/// ```
#[derive(Debug, Clone)]
pub struct KernelBuild {
    kernel_dir: PathBuf,
    includes: Vec<PathBuf>,
    flags: Vec<String>,
    missing_dependency_includes: Vec<String>,
}

/// What [`KernelBuild::compile`] did.
#[derive(Debug, Clone)]
pub enum Compiled {
    /// The kernels were compiled into `lib<name>.a` and Cargo was told to link it.
    Library {
        /// The `.cu` files compiled.
        sources: Vec<PathBuf>,
        /// The toolkit used.
        toolkit: Toolkit,
    },
    /// A docs-only build (`DOCS_RS` set): nothing compiled, nothing linked.
    SkippedForDocs,
}

/// Why kernels could not be compiled.
#[derive(Debug)]
pub enum BuildError {
    /// No toolkit was found; the inner value names where it looked.
    Toolkit(ToolkitNotFound),
    /// `CUDA_ARCHS` has an entry that is not an architecture.
    Arch(BadArch),
    /// The kernel folder has no `.cu` file.
    NoKernels(PathBuf),
    /// A `.include_from_dependency(NAME)` whose `DEP_NAME_INCLUDE` Cargo did not set.
    MissingDependencyInclude(String),
    /// Reading the kernel folder failed.
    Io(PathBuf, std::io::Error),
    /// nvcc failed; its output was already printed by Cargo.
    Nvcc(String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Toolkit(err) => err.fmt(f),
            BuildError::Arch(err) => err.fmt(f),
            BuildError::NoKernels(dir) => write!(f, "no .cu file in {}", dir.display()),
            BuildError::MissingDependencyInclude(name) => write!(
                f,
                "DEP_{name}_INCLUDE is not set: add the crate whose `links = ...` key is \
                 {:?} to [dependencies] so Cargo passes its include path",
                name.to_lowercase().replace('_', "-")
            ),
            BuildError::Io(path, err) => write!(f, "cannot read {}: {err}", path.display()),
            BuildError::Nvcc(msg) => write!(f, "nvcc failed: {msg}"),
        }
    }
}

impl std::error::Error for BuildError {}

impl Default for KernelBuild {
    fn default() -> Self {
        Self::new()
    }
}

impl KernelBuild {
    /// A build of `<package>/kernels/*.cu`.
    pub fn new() -> Self {
        let package = env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from).unwrap_or_default();
        KernelBuild {
            kernel_dir: package.join("kernels"),
            includes: Vec::new(),
            flags: Vec::new(),
            missing_dependency_includes: Vec::new(),
        }
    }

    /// Compiles the `.cu` files of `dir` instead of `kernels/`.
    pub fn kernel_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.kernel_dir = dir.into();
        self
    }

    /// Adds an include folder (its changes also trigger a rebuild).
    pub fn include(mut self, dir: impl Into<PathBuf>) -> Self {
        self.includes.push(dir.into());
        self
    }

    /// Adds the include folders that a dependency's build script published as
    /// `cargo:include=...` under `links = "<name>"`; `name` is the `links` value in upper case
    /// with `-` as `_`, e.g. `DEVICE_LAUNCH`. Several folders are joined as in `PATH`
    /// (`std::env::join_paths`): a header may then include headers of the dependency's own
    /// dependencies, as `device_launch.cuh` includes `cudadevrt_limits.cuh`.
    pub fn include_from_dependency(mut self, name: &str) -> Self {
        match env::var_os(format!("DEP_{name}_INCLUDE")) {
            Some(dirs) => self.includes.extend(env::split_paths(&dirs)),
            None => self.missing_dependency_includes.push(name.to_string()),
        }
        self
    }

    /// Passes an extra flag to nvcc.
    pub fn flag(mut self, flag: impl Into<String>) -> Self {
        self.flags.push(flag.into());
        self
    }

    /// Compiles the kernels into `lib<lib_name>.a` and prints the Cargo link lines.
    pub fn compile(self, lib_name: &str) -> Result<Compiled, BuildError> {
        for var in ["CUDA_ARCHS", "CUDA_DEVICE_DEBUG", "CUDA_PATH", "CUDA_HOME", "DOCS_RS"] {
            println!("cargo:rerun-if-env-changed={var}");
        }
        println!("cargo:rerun-if-changed={}", self.kernel_dir.display());
        for dir in &self.includes {
            println!("cargo:rerun-if-changed={}", dir.display());
        }
        if let Some(name) = self.missing_dependency_includes.first() {
            return Err(BuildError::MissingDependencyInclude(name.clone()));
        }
        if crate::is_docs_build() {
            return Ok(Compiled::SkippedForDocs);
        }
        let toolkit = Toolkit::find().map_err(BuildError::Toolkit)?;
        let archs = Arch::parse_list(&env::var("CUDA_ARCHS").unwrap_or_else(|_| DEFAULT_ARCHS.to_string()))
            .map_err(BuildError::Arch)?;
        let sources = cu_files(&self.kernel_dir)?;

        let mut build = cc::Build::new();
        build
            .cuda(true)
            .cudart("none")
            .compiler(toolkit.nvcc())
            .debug(false)
            // cc's defaults are gcc flags that nvcc rejects; the host compiler gets -fPIC below.
            .no_default_flags(true)
            .warnings(false)
            .extra_warnings(false)
            .cargo_warnings(false)
            .flag("-O3")
            .flag("-Xcompiler")
            .flag("-fPIC")
            .include(toolkit.include_dir())
            .flag("-rdc=true")
            // nvlink (CUDA 13) drops kernels that no nvcc-compiled host code references once
            // any object carries host-reference information (a .cu file whose host code takes
            // a kernel's address): kernels launched only from Rust would then be missing at
            // run time (cudaErrorSymbolNotFound). nvlink cannot see Rust's references.
            .flag("-Xnvlink")
            .flag("-ignore-host-info")
            .flag("-std=c++17")
            .flag("-lineinfo")
            .flag("-L")
            .flag(toolkit.lib_dir().to_string_lossy().as_ref())
            .flag("-lcudadevrt");
        if env::var("CUDA_DEVICE_DEBUG").as_deref() == Ok("1") {
            build.flag("-G");
        }
        for gencode in gencode_flags(&archs) {
            build.flag("-gencode").flag(&gencode);
        }
        for dir in &self.includes {
            build.include(dir);
        }
        for flag in &self.flags {
            build.flag(flag);
        }
        // Each source is compiled through a wrapper that adds its kernels' signature functions.
        let out_dir = env::var_os("OUT_DIR").map(PathBuf::from).unwrap_or_else(env::temp_dir);
        let wrapper_dir = out_dir.join("cuda-graph-signatures");
        let wrappers = crate::signature::write_wrappers(&wrapper_dir, &sources)
            .map_err(|err| BuildError::Io(wrapper_dir.clone(), err))?;
        build.include(&wrapper_dir).files(&wrappers);
        build.try_compile(lib_name).map_err(|err| BuildError::Nvcc(err.to_string()))?;

        emit_device_runtime_link(&toolkit);
        Ok(Compiled::Library { sources, toolkit })
    }
}

/// The Cargo lines that link `libcudadevrt.a` and the C++ runtime that nvcc's host stubs need.
///
/// The device runtime is linked unbundled, so several crates of one program that each compile
/// kernels share one copy at the final link.
pub fn emit_device_runtime_link(toolkit: &Toolkit) {
    println!("cargo:rustc-link-search=native={}", toolkit.lib_dir().display());
    println!("cargo:rustc-link-lib=static:-bundle=cudadevrt");
    println!("cargo:rustc-link-lib=dylib=stdc++");
}

fn cu_files(dir: &Path) -> Result<Vec<PathBuf>, BuildError> {
    let entries = std::fs::read_dir(dir).map_err(|err| BuildError::Io(dir.to_path_buf(), err))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|err| BuildError::Io(dir.to_path_buf(), err))?.path();
        if path.extension().is_some_and(|ext| ext == "cu") {
            files.push(path);
        }
    }
    if files.is_empty() {
        return Err(BuildError::NoKernels(dir.to_path_buf()));
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_without_cu_files_is_an_error() {
        let dir = env::temp_dir().join(format!("cuda-build-nocu-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("notes.txt"), "x").unwrap();
        let err = cu_files(&dir).unwrap_err();
        assert!(matches!(err, BuildError::NoKernels(_)), "{err}");
        std::fs::write(dir.join("b.cu"), "").unwrap();
        std::fs::write(dir.join("a.cu"), "").unwrap();
        let names: Vec<_> =
            cu_files(&dir).unwrap().into_iter().map(|p| p.file_name().unwrap().to_owned()).collect();
        assert_eq!(names, ["a.cu", "b.cu"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_dependency_include_names_the_crate_to_add() {
        let err = BuildError::MissingDependencyInclude("DEVICE_LAUNCH".into());
        assert!(err.to_string().contains("\"device-launch\""), "{err}");
    }
}
