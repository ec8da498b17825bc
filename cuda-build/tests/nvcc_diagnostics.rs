//! Kernel and image builds with the real nvcc (no GPU needed): a broken kernel's error carries
//! nvcc's own diagnostic with its file and line; the signature scan sees the source as the
//! compiler does (`#if 0`, macros); a missing `#include <cuda_graph.cuh>` is named.
//!
//! Needs a CUDA toolkit with nvcc (`cargo xtask setup-cuda` installs one); without one the
//! tests say so and pass.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cuda_build::{BuildError, Compiled, ImageBuild, ImageKind, KernelBuild, Piece, Toolkit};

/// The builds read `OUT_DIR`, `CUDA_PATH` and `CUDA_ARCHS` from the process environment: one
/// build at a time.
static ENV: Mutex<()> = Mutex::new(());

/// A fresh folder for one case, with `kernels/` holding `files`.
fn case(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cuda-build-nvcc-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("kernels")).unwrap();
    std::fs::create_dir_all(dir.join("out")).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join("kernels").join(file), text).unwrap();
    }
    dir
}

/// The workspace's toolkit root, when there is one with nvcc.
fn toolkit_root() -> Option<PathBuf> {
    match Toolkit::find_from(Path::new(env!("CARGO_MANIFEST_DIR"))) {
        Ok(toolkit) if toolkit.require(Piece::Nvcc).is_ok() => Some(toolkit.root().to_path_buf()),
        Ok(toolkit) => {
            eprintln!("SKIPPED: {toolkit} has no nvcc");
            None
        }
        Err(err) => {
            eprintln!("SKIPPED: no CUDA toolkit ({err})");
            None
        }
    }
}

/// Runs `build` as a build script would, with `OUT_DIR` = `dir/out` and the toolkit in
/// `CUDA_PATH` (the search from `OUT_DIR`, a temporary folder, would not find the workspace's).
fn as_build_script<T>(dir: &Path, root: &Path, build: impl FnOnce() -> T) -> T {
    let _guard = ENV.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    std::env::set_var("OUT_DIR", dir.join("out"));
    std::env::set_var("CUDA_PATH", root);
    std::env::set_var("CUDA_ARCHS", "90");
    std::env::remove_var("CUDA_HOME");
    std::env::remove_var("DOCS_RS");
    build()
}

fn nvcc_error(result: Result<impl std::fmt::Debug, BuildError>) -> (cuda_build::NvccError, String) {
    match result {
        Err(BuildError::Nvcc(err)) => {
            let text = BuildError::Nvcc(err.clone()).to_string();
            (err, text)
        }
        other => panic!("expected an nvcc failure, got {other:?}"),
    }
}

const TYPO: &str = "#include <cstdint>
extern \"C\" __global__ void fill(uint32_t* out, uint32_t n, uint32_t value) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = valu;
}
";

#[test]
fn a_kernel_typo_shows_nvccs_error_with_file_and_line() {
    let Some(root) = toolkit_root() else { return };
    let dir = case("typo", &[("fill.cu", TYPO)]);
    let source = dir.join("kernels").join("fill.cu");
    let result =
        as_build_script(&dir, &root, || KernelBuild::new().kernel_dir(dir.join("kernels")).compile("typo"));
    let (err, text) = nvcc_error(result);
    let diagnostic = format!("{}(4): error: identifier \"valu\" is undefined", source.display());
    assert!(err.output.contains(&diagnostic), "{text}");
    assert!(text.contains(&diagnostic), "{text}");
    assert!(text.starts_with(&format!("compiling {} failed (exit status:", source.display())), "{text}");
    assert!(text.contains("command: \"") && text.contains("nvcc\""), "{text}");
    assert_eq!(err.hint, None);

    // The same source as a loadable image fails the same way.
    let image = as_build_script(&dir, &root, || ImageBuild::new(&source, ImageKind::Ptx).compile("typo"));
    let (_, text) = nvcc_error(image);
    assert!(text.contains(&diagnostic), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn kernels_are_found_as_the_compiler_sees_them() {
    let Some(root) = toolkit_root() else { return };
    let source = "#include <cstdint>
#include <cuda_graph.cuh>
#define KERNEL(name) extern \"C\" __global__ void name(cuda_graph::slice<uint32_t> out)
extern \"C\" __global__ void __launch_bounds__(128) fill(uint32_t* out) { out[threadIdx.x] = 1; }
#if 0
extern \"C\" __global__ void disabled(uint32_t* out) { out[0] = 2; }
#endif
KERNEL(from_macro) { if (threadIdx.x < out.len) out.ptr[threadIdx.x] = 3; }
";
    let dir = case("scan", &[("scan.cu", source)]);
    let compiled =
        as_build_script(&dir, &root, || KernelBuild::new().kernel_dir(dir.join("kernels")).compile("scan"));
    assert!(matches!(compiled, Ok(Compiled::Library { .. })), "{compiled:?}");
    let wrapper = std::fs::read_to_string(dir.join("out/cuda-graph-signatures/scan.cu")).unwrap();
    let signatures: Vec<&str> =
        wrapper.lines().filter(|line| line.starts_with("CUDA_GRAPH_SIGNATURE")).collect();
    assert_eq!(signatures, ["CUDA_GRAPH_SIGNATURE(fill)", "CUDA_GRAPH_SIGNATURE(from_macro)"]);
    assert!(dir.join("out/libscan.a").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_slice_without_its_include_names_the_include() {
    let Some(root) = toolkit_root() else { return };
    let source = "extern \"C\" __global__ void scale(cuda_graph::slice<float> data, float by) { }\n";
    let dir = case("slice", &[("scale.cu", source)]);
    let result =
        as_build_script(&dir, &root, || KernelBuild::new().kernel_dir(dir.join("kernels")).compile("slice"));
    let (err, text) = nvcc_error(result);
    let file = dir.join("kernels").join("scale.cu");
    assert!(err.output.contains(&format!("{}(1): error:", file.display())), "{text}");
    let hint = err.hint.unwrap_or_default();
    assert!(
        hint.contains("#include <cuda_graph.cuh>") && hint.contains(&file.display().to_string()),
        "{text}"
    );
    assert!(text.contains(&format!("hint: {hint}")), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
