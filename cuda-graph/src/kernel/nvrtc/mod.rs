//! Compiling CUDA C++ at run time with NVRTC (the `nvrtc` feature) into a [`Module`].
//!
//! NVRTC is loaded when first used, so building needs no CUDA. `libnvrtc.so.13` is looked for
//! in this order: the file `CUDA_GRAPH_NVRTC` names; the dynamic loader's search; `lib64/`,
//! `lib/` and `nvidia/cu13/lib/` under `CUDA_PATH`, then `CUDA_HOME`; `.cuda/lib/` and
//! `.cuda/nvidia/cu13/lib/` in the working folder or a folder above it; `/usr/local/cuda/lib64/`.
//! The project-local `.cuda/` gets it from the same `pip install --upgrade --target .cuda …`
//! command that installs the toolkit (`cuda-build`'s README) with `nvidia-cuda-nvrtc==13.0.88`
//! added (in the cuda-graph workspace, `cargo xtask setup-cuda` installs it). When it is not
//! found, [`CompileError::Unavailable`] lists every path tried. A compile error comes back as
//! [`CompileError::Compilation`] with NVRTC's log.
//!
//! Kernels compiled this way carry no C++ type lists: look them up with
//! [`Module::kernel_unchecked_types`]; only their parameters' count, sizes and offsets are
//! checked. Write them `extern "C"` so that their names are not mangled. NVRTC output is not
//! device-linked: kernels cannot call the device runtime (`cudaGraphSetConditional`).
//!
//! Without a type list the parameters are counted by asking the driver for one past the last
//! (CUDA 13.0 has no call that gives the count), so under compute-sanitizer's default settings
//! each such kernel's first use shows one API error, counted in the `ERROR SUMMARY`:
//! `cudaErrorInvalidValue` from `cudaFuncGetParamInfo`. It is expected; `--report-api-errors
//! no` silences it.
//!
//! NVRTC's output loads from safe code ([`Compiled::load`]): a [`Compiled`] is made only by
//! [`compile`], and its bytes cannot be changed afterwards.
//!
//! ```no_run
//! use cuda_graph::kernel::nvrtc::{compile, CompileOptions};
//! use cuda_graph::DevicePtr;
//! let source = r#"extern "C" __global__ void twice(unsigned* p, unsigned n) {
//!     unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
//!     if (i < n) p[i] *= 2;
//! }"#;
//! let module = compile(source, &CompileOptions::default())?.load()?;
//! // SAFETY: `twice(unsigned* p, unsigned n)` writes p[i] only for i < n.
//! let twice = unsafe { module.kernel_unchecked_types::<(DevicePtr<u32>, u32)>("twice") }?;
//! # Ok::<(), cuda_graph::CudaError>(())
//! ```

mod library;

use std::ffi::{c_char, CString};
use std::fmt;
use std::ptr;

use super::Module;
use crate::device::Device;
use crate::error::CudaError;
use library::{nvrtc, status_name, Nvrtc, Program, ERROR_COMPILATION, SUCCESS};

/// What NVRTC writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Output {
    /// A cubin for exactly the target architecture (the default).
    #[default]
    Cubin,
    /// PTX for the target's virtual architecture, compiled by the driver where it loads.
    Ptx,
}

/// How to compile: the program's name (in messages), the target architecture, headers the
/// source includes, extra NVRTC options.
///
/// ```
/// use cuda_graph::kernel::nvrtc::{CompileOptions, Output};
/// let options = CompileOptions { arch: Some(90), output: Output::Ptx, ..Default::default() };
/// assert_eq!(options.arch_flag(90), "--gpu-architecture=compute_90");
/// ```
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// The program's name, as messages show it (default `program.cu`).
    pub name: Option<String>,
    /// The compute capability as a number (`90` for sm_90); `None`: the current device's.
    pub arch: Option<u32>,
    /// Cubin or PTX.
    pub output: Output,
    /// `(name, contents)` of headers the source may `#include "name"`.
    pub headers: Vec<(String, String)>,
    /// Further NVRTC options (`-D NAME=1`, `--use_fast_math`, …).
    pub options: Vec<String>,
}

impl CompileOptions {
    /// The `--gpu-architecture` option for `arch`: `sm_` for a cubin, `compute_` for PTX.
    pub fn arch_flag(&self, arch: u32) -> String {
        match self.output {
            Output::Cubin => format!("--gpu-architecture=sm_{arch}"),
            Output::Ptx => format!("--gpu-architecture=compute_{arch}"),
        }
    }
}

/// What NVRTC made: the image and its log (warnings). Only [`compile`] makes one, and its
/// image cannot be changed afterwards (the fields are private): that is what makes
/// [`load`](Compiled::load) safe, where [`Module::from_image`] of arbitrary bytes is not.
///
/// ```no_run
/// use cuda_graph::kernel::nvrtc::{compile, CompileOptions, Output};
/// let compiled = compile(r#"extern "C" __global__ void noop() {}"#, &CompileOptions::default())?;
/// assert_eq!(compiled.output(), Output::Cubin);
/// assert!(compiled.image().starts_with(b"\x7fELF"));
/// let module = compiled.load()?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The cubin, or the PTX text (with its NUL), as NVRTC wrote it.
    image: Vec<u8>,
    /// Which of the two.
    output: Output,
    /// NVRTC's log: empty, or its warnings.
    log: String,
}

impl Compiled {
    /// Loads the image as a [`Module`] (as [`Module::from_image`] does, safely here: the bytes
    /// are NVRTC's, unchanged).
    ///
    /// ```no_run
    /// let compiled = cuda_graph::kernel::nvrtc::compile(
    ///     r#"extern "C" __global__ void noop() {}"#,
    ///     &Default::default(),
    /// )?;
    /// assert_eq!(compiled.load()?.kernel_names()?, ["noop"]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn load(&self) -> crate::Result<Module> {
        // SAFETY: `image` is what NVRTC wrote (nvrtcGetCUBIN or nvrtcGetPTX, read into a
        // buffer of the size NVRTC gave), unchanged: only `compile` makes a `Compiled`, its
        // fields are private and nothing hands out a mutable view. A complete image made by
        // NVIDIA's tools is what `from_image` asks for.
        unsafe { Module::from_image(&self.image) }
    }

    /// The cubin, or the PTX text with its NUL, as NVRTC wrote it (a copy may be handed to
    /// another loader, such as cudarc's `Ptx::from_binary`).
    ///
    /// ```no_run
    /// let compiled = cuda_graph::kernel::nvrtc::compile("extern \"C\" __global__ void k() {}", &Default::default())?;
    /// let bytes: Vec<u8> = compiled.image().to_vec();
    /// # Ok::<(), cuda_graph::kernel::nvrtc::CompileError>(())
    /// ```
    pub fn image(&self) -> &[u8] {
        &self.image
    }

    /// Which output the image is: a cubin or PTX.
    ///
    /// ```no_run
    /// use cuda_graph::kernel::nvrtc::{compile, CompileOptions, Output};
    /// let options = CompileOptions { output: Output::Ptx, ..Default::default() };
    /// assert_eq!(compile("extern \"C\" __global__ void k() {}", &options)?.output(), Output::Ptx);
    /// # Ok::<(), cuda_graph::kernel::nvrtc::CompileError>(())
    /// ```
    pub fn output(&self) -> Output {
        self.output
    }

    /// NVRTC's log: empty, or its warnings.
    ///
    /// ```no_run
    /// let compiled = cuda_graph::kernel::nvrtc::compile("extern \"C\" __global__ void k() {}", &Default::default())?;
    /// for line in compiled.log().lines() {
    ///     eprintln!("nvrtc: {line}");
    /// }
    /// # Ok::<(), cuda_graph::kernel::nvrtc::CompileError>(())
    /// ```
    pub fn log(&self) -> &str {
        &self.log
    }
}

/// Why a compilation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompileError {
    /// NVRTC could not be loaded; the text says where it was looked for.
    Unavailable(String),
    /// The source did not compile: NVRTC's log.
    Compilation {
        /// The program's name.
        program: String,
        /// NVRTC's log, with every error and warning.
        log: String,
    },
    /// An NVRTC call failed otherwise.
    Nvrtc {
        /// The call.
        call: &'static str,
        /// NVRTC's name for its status.
        status: String,
    },
    /// A source, header or option held a NUL byte.
    Nul(&'static str),
    /// Asking the current device for its architecture failed.
    Device(CudaError),
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::Unavailable(why) => f.write_str(why),
            CompileError::Compilation { program, log } => {
                write!(f, "NVRTC could not compile {program}:\n{log}")
            }
            CompileError::Nvrtc { call, status } => write!(f, "{call} failed: {status}"),
            CompileError::Nul(what) => write!(f, "the {what} contains a NUL byte"),
            CompileError::Device(err) => write!(f, "the current device's architecture: {err}"),
        }
    }
}

impl std::error::Error for CompileError {}

impl From<CompileError> for CudaError {
    fn from(err: CompileError) -> CudaError {
        match err {
            CompileError::Device(err) => err,
            other => CudaError::refused(
                "nvrtcCompileProgram",
                crate::Refusal::Compile { message: other.to_string() },
            ),
        }
    }
}

/// NVRTC's version, `(major, minor)`.
///
/// ```no_run
/// let (major, _) = cuda_graph::kernel::nvrtc::version()?;
/// assert!(major >= 13);
/// # Ok::<(), cuda_graph::kernel::nvrtc::CompileError>(())
/// ```
pub fn version() -> Result<(i32, i32), CompileError> {
    let nvrtc = nvrtc().map_err(CompileError::Unavailable)?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: both are valid, writable ints.
    let status = unsafe { (nvrtc.version)(&mut major, &mut minor) };
    check(nvrtc, status, "nvrtcVersion")?;
    Ok((major, minor))
}

/// Compiles `source` (`nvrtcCreateProgram`, `nvrtcCompileProgram`) into a cubin or PTX.
///
/// ```no_run
/// use cuda_graph::kernel::nvrtc::{compile, CompileError, CompileOptions};
/// let err = compile("this is not C++", &CompileOptions::default()).unwrap_err();
/// assert!(matches!(err, CompileError::Compilation { .. }));
/// ```
pub fn compile(source: &str, options: &CompileOptions) -> Result<Compiled, CompileError> {
    let nvrtc = nvrtc().map_err(CompileError::Unavailable)?;
    let arch = match options.arch {
        Some(arch) => arch,
        None => {
            let properties = Device::current().and_then(Device::properties).map_err(CompileError::Device)?;
            (properties.major * 10 + properties.minor) as u32
        }
    };
    let name = options.name.clone().unwrap_or_else(|| "program.cu".to_string());
    let c_source = CString::new(source).map_err(|_| CompileError::Nul("source"))?;
    let c_name = CString::new(name.clone()).map_err(|_| CompileError::Nul("program name"))?;
    let header_names = c_strings(options.headers.iter().map(|(name, _)| name.as_str()), "header name")?;
    let header_texts = c_strings(options.headers.iter().map(|(_, text)| text.as_str()), "header")?;
    let mut flags = vec![options.arch_flag(arch), "-std=c++17".to_string()];
    flags.extend(options.options.iter().cloned());
    let flags = c_strings(flags.iter().map(String::as_str), "option")?;
    let program = ProgramGuard::create(nvrtc, &c_source, &c_name, &header_texts, &header_names)?;
    let pointers: Vec<*const c_char> = flags.iter().map(|flag| flag.as_ptr()).collect();
    // SAFETY: the program is alive; `pointers` holds `flags.len()` NUL-terminated strings,
    // alive for the call.
    let status = unsafe { (nvrtc.compile_program)(program.0, pointers.len() as i32, pointers.as_ptr()) };
    let log = program.log()?;
    if status == ERROR_COMPILATION {
        return Err(CompileError::Compilation { program: name, log });
    }
    check(nvrtc, status, "nvrtcCompileProgram")?;
    let image = match options.output {
        Output::Cubin => program.read(nvrtc.get_cubin_size, nvrtc.get_cubin, "nvrtcGetCUBIN")?,
        Output::Ptx => program.read(nvrtc.get_ptx_size, nvrtc.get_ptx, "nvrtcGetPTX")?,
    };
    Ok(Compiled { image, output: options.output, log })
}

impl Module {
    /// Compiles `source` with NVRTC for the current device (a cubin) and loads it: the
    /// shortest way from CUDA C++ text to kernels ([`compile`] for options). Compile errors
    /// are `Err` with NVRTC's log.
    ///
    /// ```no_run
    /// let module = cuda_graph::kernel::Module::from_cuda_source(
    ///     r#"extern "C" __global__ void noop() {}"#,
    /// )?;
    /// assert_eq!(module.kernel_names()?, ["noop"]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn from_cuda_source(source: &str) -> crate::Result<Module> {
        compile(source, &CompileOptions::default())?.load()
    }
}

fn c_strings<'a>(
    texts: impl Iterator<Item = &'a str>, what: &'static str,
) -> Result<Vec<CString>, CompileError> {
    texts.map(|text| CString::new(text).map_err(|_| CompileError::Nul(what))).collect()
}

fn check(nvrtc: &Nvrtc, status: i32, call: &'static str) -> Result<(), CompileError> {
    if status == SUCCESS {
        Ok(())
    } else {
        Err(CompileError::Nvrtc { call, status: status_name(nvrtc, status) })
    }
}

/// A program, destroyed on drop.
struct ProgramGuard<'a>(Program, &'a Nvrtc);

impl<'a> ProgramGuard<'a> {
    fn create(
        nvrtc: &'a Nvrtc, source: &CString, name: &CString, headers: &[CString], header_names: &[CString],
    ) -> Result<ProgramGuard<'a>, CompileError> {
        let texts: Vec<*const c_char> = headers.iter().map(|text| text.as_ptr()).collect();
        let names: Vec<*const c_char> = header_names.iter().map(|name| name.as_ptr()).collect();
        let mut program: Program = ptr::null_mut();
        // SAFETY: `program` is writable; the source, the name and the `texts.len()` headers
        // and their names are NUL-terminated strings alive for the call.
        let status = unsafe {
            (nvrtc.create_program)(
                &mut program,
                source.as_ptr(),
                name.as_ptr(),
                texts.len() as i32,
                texts.as_ptr(),
                names.as_ptr(),
            )
        };
        check(nvrtc, status, "nvrtcCreateProgram")?;
        Ok(ProgramGuard(program, nvrtc))
    }

    fn log(&self) -> Result<String, CompileError> {
        let bytes = self.read(self.1.get_program_log_size, self.1.get_program_log, "nvrtcGetProgramLog")?;
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Ok(String::from_utf8_lossy(&bytes[..end]).trim_end().to_string())
    }

    /// Reads one of the program's outputs through its size and copy functions.
    fn read(
        &self, size_of: unsafe extern "C" fn(Program, *mut usize) -> i32,
        copy: unsafe extern "C" fn(Program, *mut c_char) -> i32, call: &'static str,
    ) -> Result<Vec<u8>, CompileError> {
        let mut size = 0usize;
        // SAFETY: the program is alive; `size` is writable.
        check(self.1, unsafe { size_of(self.0, &mut size) }, call)?;
        let mut bytes = vec![0u8; size];
        // SAFETY: `bytes` holds the `size` bytes NVRTC said it writes.
        check(self.1, unsafe { copy(self.0, bytes.as_mut_ptr().cast()) }, call)?;
        Ok(bytes)
    }
}

impl Drop for ProgramGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: the program was created once and is destroyed once; an error leaves
        // nothing of ours to release.
        let _ = unsafe { (self.1.destroy_program)(&mut self.0) };
    }
}
