//! Compiling a crate's `kernels/*.cu` into a static library that Rust links.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::arch::{gencode_flags, Arch, DEFAULT_ARCHS};
use crate::build_error::BuildError;
use crate::nvcc;
use crate::toolkit::{Piece, Toolkit};

/// Compiles CUDA kernels with relocatable device code (`-rdc=true`), device-links them against
/// `libcudadevrt` (so kernels may launch kernels and graphs), archives them into
/// `OUT_DIR/lib<name>.a`, and tells Cargo how to link the result. Meant for `build.rs`.
///
/// Each `.cu` file is compiled through a wrapper generated in `OUT_DIR` that includes it and
/// then defines, for every `extern "C" __global__` kernel it defines, a host function
/// `<kernel>__cuda_graph_signature()` returning the kernel's C++ parameter types (integers by
/// size and signedness, `f32`, `*mut T`/`*const T`, structs by name: see
/// `cuda_graph_signature.cuh`). `cuda_graph::kernels!` declares that function, so a kernel
/// declared in Rust but not compiled here fails to link, and compares the list with its Rust
/// parameter types at first use. Kernels are found in the source as the compiler sees it
/// (preprocessed by `nvcc -E` with the same include folders and flags): kernels under `#if 0`
/// or an `#ifdef` that is off are skipped, kernels written through macros are found. Write
/// them `extern "C"` (specifiers like `__launch_bounds__(256)` and `extern "C" { ... }` blocks
/// are fine). The same folder, on the include path, holds `cuda_graph.cuh`
/// (`cuda_graph::slice<T>`, a pointer and its length as one parameter: the C++ side of
/// `cuda_graph::DeviceSlice<T>`; a kernel that uses it writes `#include <cuda_graph.cuh>`) and
/// `cuda_graph_pdl.cuh` (`cuda_graph::pdl::wait_upstream()` and `launch_dependents()`, for
/// kernels joined by programmatic edges).
///
/// # Errors and warnings
/// When nvcc (or the host compiler it runs, or nvlink) fails, the error
/// ([`BuildError::Nvcc`]) holds its own diagnostics, `file(line): error: message` as nvcc
/// writes them, with the step and the command line, and a hint for the mistakes cuda-build
/// knows (a missing `#include <cuda_graph.cuh>`, a missing `device_launch.cuh`). What a step
/// that succeeds prints (nvcc's warnings) becomes `cargo:warning=` lines, which Cargo shows
/// for the packages of your workspace.
///
/// # Linking, also in bins, tests, examples and benches
/// The archive is linked into the package's library (`cargo:rustc-link-lib`, which reaches
/// crates depending on it through the library), and, through `cargo:rustc-link-arg`, into
/// every binary, test, example and bench of the package itself: Cargo passes
/// `rustc-link-lib` only to the library of a package that has one, so a `kernels!` declared
/// in `src/main.rs` or `tests/*.rs` would otherwise not link (`undefined symbol: fill`).
///
/// Environment it reads: `CUDA_PATH` and `CUDA_HOME` (the toolkit: [`Toolkit::find`]),
/// `CUDA_ARCHS` (default `80;90`; SASS for each, PTX for the last), `CUDA_DEVICE_DEBUG=1`
/// (adds `-G`, off by default because it makes kernels very slow), `DOCS_RS` (compiles
/// nothing, so docs build without a toolkit), and the variables nvcc reads itself
/// (`NVCC_PREPEND_FLAGS`, `NVCC_APPEND_FLAGS`, `NVCC_CCBIN`); a change of any reruns it.
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

/// The environment variables that nvcc reads itself: a change reruns the build script.
pub(crate) const NVCC_ENV_VARS: [&str; 3] = ["NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN"];

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

    /// Passes an extra flag to nvcc (every step: preprocessing, compiling, device-linking).
    pub fn flag(mut self, flag: impl Into<String>) -> Self {
        self.flags.push(flag.into());
        self
    }

    /// Compiles the kernels into `lib<lib_name>.a` and prints the Cargo link lines.
    pub fn compile(self, lib_name: &str) -> Result<Compiled, BuildError> {
        for var in ["CUDA_ARCHS", "CUDA_DEVICE_DEBUG"].iter().chain(&NVCC_ENV_VARS) {
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
        let toolkit = Toolkit::find()?;
        let nvcc = toolkit.require(Piece::Nvcc)?;
        toolkit.require(Piece::Cudadevrt)?;
        let archs = Arch::parse_list(&env::var("CUDA_ARCHS").unwrap_or_else(|_| DEFAULT_ARCHS.to_string()))
            .map_err(BuildError::Arch)?;
        let sources = cu_files(&self.kernel_dir)?;
        let out_dir = env::var_os("OUT_DIR").map(PathBuf::from).unwrap_or_else(env::temp_dir);
        let work = out_dir.join("cuda-graph-signatures");
        crate::signature::write_headers(&work).map_err(|err| BuildError::Io(work.clone(), err))?;

        // nvcc with the include folders and the flags every step shares.
        let base = |extra: &[String]| {
            let mut command = Command::new(&nvcc);
            command.arg("-I").arg(toolkit.include_dir()).arg("-I").arg(&work);
            for dir in &self.includes {
                command.arg("-I").arg(dir);
            }
            command.arg("-std=c++17").args(extra).args(&self.flags);
            command
        };
        let code_flags = code_flags(&archs);

        let mut objects = Vec::with_capacity(sources.len() + 1);
        for source in &sources {
            let source = std::path::absolute(source).map_err(|err| BuildError::Io(source.clone(), err))?;
            let stem = source.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let kernels = crate::signature::kernels_of(base(&[]), &source, &work.join(format!("{stem}.ii")))?;
            let wrapper = crate::signature::write_wrapper(&work, &source, &kernels)
                .map_err(|err| BuildError::Io(work.clone(), err))?;
            let object = out_dir.join(format!("{lib_name}-{stem}.o"));
            let mut compile = base(&code_flags);
            compile.arg("-c").arg("-o").arg(&object).arg(&wrapper);
            nvcc::run(&mut compile, &format!("compiling {}", source.display()), Some(&source))?;
            objects.push(object);
        }
        // Device code is linked here, with the device runtime, into one more host object, so
        // Rust's linker (which knows nothing of device code) can link the archive.
        let dlink = out_dir.join(format!("{lib_name}_dlink.o"));
        let mut device_link = base(&code_flags);
        device_link.arg("--device-link").arg("-o").arg(&dlink).args(&objects);
        device_link.arg("-L").arg(toolkit.lib_dir()).arg("-lcudadevrt");
        nvcc::run(&mut device_link, &format!("device-linking the kernels of lib{lib_name}.a"), None)?;
        objects.push(dlink);

        let archive = out_dir.join(format!("lib{lib_name}.a"));
        // `nvcc --lib` adds to an existing archive: start from none, so no stale object stays.
        if let Err(err) = std::fs::remove_file(&archive) {
            if err.kind() != std::io::ErrorKind::NotFound {
                return Err(BuildError::Io(archive, err));
            }
        }
        let mut lib = Command::new(&nvcc);
        lib.arg("--lib").arg("-o").arg(&archive).args(&objects);
        nvcc::run(&mut lib, &format!("archiving {}", archive.display()), None)?;

        emit_kernel_library_link(&out_dir, lib_name, &archive);
        emit_device_runtime_link(&toolkit);
        Ok(Compiled::Library { sources, toolkit })
    }
}

/// The flags of compiling and device-linking: optimization, relocatable device code, the
/// architectures.
fn code_flags(archs: &[Arch]) -> Vec<String> {
    let mut flags: Vec<String> = ["-O3", "-lineinfo", "-rdc=true"].map(String::from).into();
    if !env::var("TARGET").unwrap_or_default().contains("windows") {
        flags.extend(["-Xcompiler".to_string(), "-fPIC".to_string()]);
    }
    // nvlink (CUDA 13) drops kernels that no nvcc-compiled host code references once any
    // object carries host-reference information (a .cu file whose host code takes a
    // kernel's address): kernels launched only from Rust would then be missing at run
    // time (cudaErrorSymbolNotFound). nvlink cannot see Rust's references.
    flags.extend(["-Xnvlink".to_string(), "-ignore-host-info".to_string()]);
    if env::var("CUDA_DEVICE_DEBUG").as_deref() == Ok("1") {
        flags.push("-G".to_string());
    }
    for gencode in gencode_flags(archs) {
        flags.push("-gencode".to_string());
        flags.push(gencode);
    }
    flags
}

/// The Cargo lines that link the kernels' archive: into the package's library
/// (`rustc-link-lib`, bundled into its rlib, so crates depending on it link it too), and into
/// the package's own binaries, tests, examples and benches (`rustc-link-arg`: Cargo passes
/// `rustc-link-lib` only to the library of a package that has one). A target that gets both
/// links the archive once: the linker takes an archive's member only for a symbol still
/// undefined. The C++ runtime follows the archive, for linkers that read left to right.
fn emit_kernel_library_link(out_dir: &Path, lib_name: &str, archive: &Path) {
    println!("cargo:rustc-link-search=native={}", out_dir.display());
    println!("cargo:rustc-link-lib=static={lib_name}");
    println!("cargo:rustc-link-arg={}", archive.display());
    if !env::var("TARGET").unwrap_or_default().contains("msvc") {
        println!("cargo:rustc-link-arg=-lstdc++");
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
