//! Compiling one `.cu` file into a loadable image (PTX, cubin or fatbin) that carries, for
//! each `extern "C" __global__` kernel, the kernel's C++ parameter types: what
//! `cuda_graph::kernel::Module` reads to check a kernel looked up by name as exactly as
//! `cuda_graph::kernels!` checks one linked into the program.
//!
//! The types are rendered by the same signature functions [`KernelBuild`](crate::KernelBuild)
//! links (`cuda_graph_signature.cuh`): a small host program built from the source prints them,
//! and the image's source then defines, per kernel, a device global
//! `extern "C" __device__ char <kernel>__cuda_graph_signature[]` holding the list. An
//! image without these globals (compiled elsewhere, or by NVRTC) can still be loaded; its
//! kernels' types are then the caller's promise.

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::arch::{gencode_flags, Arch, DEFAULT_ARCHS};
use crate::build_error::BuildError;
use crate::nvcc::{self, NvccError};
use crate::signature::{SIGNATURE_HEADER_NAME, SIGNATURE_SUFFIX};
use crate::toolkit::{Piece, Toolkit};

/// What [`ImageBuild`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    /// PTX text for the newest architecture of `CUDA_ARCHS` (`nvcc -ptx`), NUL-free: add the
    /// NUL when loading (`cuda_graph::kernel::Module::from_ptx` does). PTX is not linked:
    /// its kernels cannot call the device runtime (`cudaGraphSetConditional`, device-side
    /// `cudaGraphLaunch`); use a cubin or fatbin for those.
    Ptx,
    /// A cubin for the newest architecture of `CUDA_ARCHS`, compiled with `-rdc=true` and
    /// device-linked with `libcudadevrt` (`nvcc -dlink -cubin`): it loads only on a GPU of
    /// exactly that architecture.
    Cubin,
    /// A fatbin with code for every architecture of `CUDA_ARCHS`, compiled with `-rdc=true`
    /// and device-linked with `libcudadevrt` (`nvcc -dlink -fatbin`).
    Fatbin,
}

impl ImageKind {
    /// The file extension, and the nvcc flag that makes it.
    fn extension(self) -> &'static str {
        match self {
            ImageKind::Ptx => "ptx",
            ImageKind::Cubin => "cubin",
            ImageKind::Fatbin => "fatbin",
        }
    }
}

/// Compiles one `.cu` file into a module image in `OUT_DIR`, with its kernels' signatures
/// inside (see the module docs). Meant for `build.rs`; the image is then embedded with
/// `include_bytes!(concat!(env!("OUT_DIR"), "/<name>.<ext>"))` and loaded at run time.
///
/// Reads `CUDA_PATH` and `CUDA_HOME` (the toolkit, found as [`Toolkit::find`] finds it),
/// `CUDA_ARCHS` (default `80;90`) and `DOCS_RS` (writes an empty file, compiles nothing).
/// Kernels are found as [`KernelBuild`](crate::KernelBuild) finds them (the source
/// preprocessed by `nvcc -E`). The signatures come from a host program built from the source
/// and run on the build machine, so cross-compiling needs a host that can run it.
///
/// ```no_run
/// // in build.rs's main():
/// use cuda_build::{ImageBuild, ImageKind};
/// let path = ImageBuild::new("kernels/scale.cu", ImageKind::Fatbin)
///     .compile("scale")
///     .unwrap_or_else(|err| panic!("{err}"));
/// println!("image at {}", path.display());
/// ```
#[derive(Debug, Clone)]
pub struct ImageBuild {
    source: PathBuf,
    kind: ImageKind,
    flags: Vec<String>,
}

impl ImageBuild {
    /// An image of `kind` from `source`.
    pub fn new(source: impl Into<PathBuf>, kind: ImageKind) -> ImageBuild {
        ImageBuild { source: source.into(), kind, flags: Vec::new() }
    }

    /// Passes an extra flag to nvcc (both compilations).
    pub fn flag(mut self, flag: impl Into<String>) -> ImageBuild {
        self.flags.push(flag.into());
        self
    }

    /// Writes `OUT_DIR/<name>.<ptx|cubin|fatbin>` and returns its path. A failing step's
    /// error holds nvcc's own diagnostics, as [`KernelBuild`](crate::KernelBuild)'s do; what a
    /// step that succeeds prints becomes `cargo:warning=` lines.
    pub fn compile(&self, name: &str) -> Result<PathBuf, BuildError> {
        println!("cargo:rerun-if-changed={}", self.source.display());
        for var in ["CUDA_ARCHS"].iter().chain(&crate::kernels::NVCC_ENV_VARS) {
            println!("cargo:rerun-if-env-changed={var}");
        }
        let out_dir = env::var_os("OUT_DIR").map(PathBuf::from).unwrap_or_else(env::temp_dir);
        let image = out_dir.join(format!("{name}.{}", self.kind.extension()));
        if crate::is_docs_build() {
            std::fs::write(&image, b"").map_err(|err| BuildError::Io(image.clone(), err))?;
            return Ok(image);
        }
        let toolkit = Toolkit::find()?;
        let nvcc = toolkit.require(Piece::Nvcc)?;
        if self.kind != ImageKind::Ptx {
            toolkit.require(Piece::Cudadevrt)?;
        }
        let archs = Arch::parse_list(&env::var("CUDA_ARCHS").unwrap_or_else(|_| DEFAULT_ARCHS.to_string()))
            .map_err(BuildError::Arch)?;
        let source =
            std::path::absolute(&self.source).map_err(|err| BuildError::Io(self.source.clone(), err))?;
        let work = out_dir.join(format!("cuda-graph-image-{name}"));
        crate::signature::write_headers(&work).map_err(|err| BuildError::Io(work.clone(), err))?;
        let kernels = crate::signature::kernels_of(
            self.nvcc(&nvcc, &toolkit, &work),
            &source,
            &work.join(format!("{name}.ii")),
        )?;

        let signatures = self.signatures(&nvcc, &toolkit, &work, &source, &kernels)?;
        let image_source = work.join(format!("{name}_image.cu"));
        write(&image_source, &image_source_text(&source, &kernels, &signatures))?;

        let targets: Vec<String> = match self.kind {
            ImageKind::Ptx => vec![format!("-arch=compute_{}", newest(&archs))],
            ImageKind::Cubin => vec![format!("-arch=sm_{}", newest(&archs))],
            ImageKind::Fatbin => {
                gencode_flags(&archs).into_iter().flat_map(|g| ["-gencode".to_string(), g]).collect()
            }
        };
        let compiling = format!("compiling {} into {}", source.display(), image.display());
        if self.kind == ImageKind::Ptx {
            let mut compile = self.nvcc(&nvcc, &toolkit, &work);
            compile.arg("-O3").arg("-lineinfo");
            compile.arg("-ptx").arg("-rdc=true").args(&targets).arg("-o").arg(&image).arg(&image_source);
            nvcc::run(&mut compile, &compiling, Some(&source))?;
            return Ok(image);
        }
        // Cubins and fatbins are compiled as relocatable code and device-linked with the
        // device runtime, so their kernels may set conditional handles and launch graphs.
        let object = work.join(format!("{name}_image.o"));
        let mut compile = self.nvcc(&nvcc, &toolkit, &work);
        compile.arg("-O3").arg("-lineinfo");
        compile.arg("-rdc=true").arg("-c").args(&targets).arg("-o").arg(&object).arg(&image_source);
        nvcc::run(&mut compile, &compiling, Some(&source))?;
        let mut link = self.nvcc(&nvcc, &toolkit, &work);
        link.arg("-dlink")
            .arg(if self.kind == ImageKind::Cubin { "-cubin" } else { "-fatbin" })
            .args(&targets);
        link.arg("-o").arg(&image).arg(&object).arg("-L").arg(toolkit.lib_dir()).arg("-lcudadevrt");
        nvcc::run(&mut link, &format!("device-linking {}", image.display()), None)?;
        Ok(image)
    }

    /// nvcc with the include folders and the flags every step shares (preprocessing too).
    fn nvcc(&self, nvcc: &Path, toolkit: &Toolkit, work: &Path) -> Command {
        let mut command = Command::new(nvcc);
        command.arg("-std=c++17");
        command.arg("-I").arg(toolkit.include_dir()).arg("-I").arg(work);
        command.args(&self.flags);
        command
    }

    /// Each kernel's C++ parameter list, printed by a host program built from the source.
    fn signatures(
        &self, nvcc: &Path, toolkit: &Toolkit, work: &Path, source: &Path, kernels: &[String],
    ) -> Result<Vec<String>, BuildError> {
        if kernels.is_empty() {
            return Ok(Vec::new());
        }
        let printer_source = work.join("print_signatures.cu");
        write(&printer_source, &printer_source_text(source, kernels))?;
        let printer = work.join("print_signatures");
        let mut build = self.nvcc(nvcc, toolkit, work);
        build.arg("-O3").arg("-L").arg(toolkit.lib_dir()).arg("-o").arg(&printer).arg(&printer_source);
        let building = format!("building the signature printer of {}", source.display());
        nvcc::run(&mut build, &building, Some(source))?;
        let printing = format!("running the signature printer of {}", source.display());
        let output = nvcc::run_for_output(&mut Command::new(&printer), &printing)?;
        let lines: Vec<String> = output.lines().map(str::to_owned).collect();
        if lines.len() != kernels.len() {
            return Err(BuildError::Nvcc(NvccError {
                step: printing,
                status: format!("it printed {} signatures for {} kernels", lines.len(), kernels.len()),
                output: lines.join("\n"),
                command: printer.display().to_string(),
                hint: None,
            }));
        }
        Ok(lines)
    }
}

/// The newest architecture (the last of the list).
fn newest(archs: &[Arch]) -> String {
    archs.last().map(Arch::to_string).unwrap_or_else(|| "90".to_string())
}

fn write(path: &Path, text: &str) -> Result<(), BuildError> {
    std::fs::write(path, text).map_err(|err| BuildError::Io(path.to_path_buf(), err))
}

/// The host program that prints one line per kernel: its signature function's list.
fn printer_source_text(source: &Path, kernels: &[String]) -> String {
    let mut text = format!(
        "// Generated by cuda-build: prints the parameter types of each kernel of {0}.\n\
         #include \"{SIGNATURE_HEADER_NAME}\"\n#include <cstdio>\n#include \"{0}\"\n#ifndef __CUDA_ARCH__\n",
        source.display().to_string().replace('\\', "/")
    );
    for kernel in kernels {
        let _ = writeln!(text, "CUDA_GRAPH_SIGNATURE({kernel})");
    }
    text.push_str("int main() {\n");
    for kernel in kernels {
        let _ = writeln!(text, "    std::printf(\"%s\\n\", {kernel}{SIGNATURE_SUFFIX}());");
    }
    text.push_str("    return 0;\n}\n#endif\n");
    text
}

/// The image's source: the original, then one signature global per kernel.
fn image_source_text(source: &Path, kernels: &[String], signatures: &[String]) -> String {
    let mut text = format!(
        "// Generated by cuda-build: {0} and the parameter types of each of its kernels, as device\n\
         // globals that cuda_graph::kernel::Module reads.\n#include \"{0}\"\n",
        source.display().to_string().replace('\\', "/")
    );
    for (kernel, signature) in kernels.iter().zip(signatures) {
        let escaped = signature.replace('\\', "\\\\").replace('"', "\\\"");
        let _ = writeln!(text, "extern \"C\" __device__ char {kernel}{SIGNATURE_SUFFIX}[] = \"{escaped}\";");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_image_source_defines_one_signature_global_per_kernel() {
        let text = image_source_text(
            Path::new("/pkg/kernels/scale.cu"),
            &["scale".into(), "noop".into()],
            &["*mut f32, u32".into(), String::new()],
        );
        let lines: Vec<&str> = text.lines().filter(|line| !line.starts_with("//")).collect();
        assert_eq!(
            lines,
            [
                "#include \"/pkg/kernels/scale.cu\"",
                "extern \"C\" __device__ char scale__cuda_graph_signature[] = \"*mut f32, u32\";",
                "extern \"C\" __device__ char noop__cuda_graph_signature[] = \"\";",
            ]
        );
    }

    #[test]
    fn the_printer_prints_each_kernel_in_order() {
        let text = printer_source_text(Path::new("/k.cu"), &["a".into(), "b".into()]);
        let a = text.find("a__cuda_graph_signature()").unwrap();
        let b = text.find("b__cuda_graph_signature()").unwrap();
        assert!(a < b && text.contains("CUDA_GRAPH_SIGNATURE(a)") && text.contains("int main()"));
    }

    #[test]
    fn each_kind_has_its_extension() {
        let names: Vec<_> =
            [ImageKind::Ptx, ImageKind::Cubin, ImageKind::Fatbin].map(ImageKind::extension).into();
        assert_eq!(names, ["ptx", "cubin", "fatbin"]);
    }
}
