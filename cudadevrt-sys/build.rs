//! Links libcudadevrt.a and publishes, to crates that list this one in [dependencies]:
//! `DEP_CUDADEVRT_INCLUDE` (this crate's include/ folder, with `cudadevrt_limits.cuh`),
//! `DEP_CUDADEVRT_CUDA_INCLUDE` (the toolkit's headers) and `DEP_CUDADEVRT_ROOT`.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=include");
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    println!("cargo:include={}", include.display());
    if cuda_build::is_docs_build() {
        return;
    }
    let toolkit = cuda_build::Toolkit::find().unwrap_or_else(|err| panic!("\n{err}\n"));
    cuda_build::emit_device_runtime_link(&toolkit);
    println!("cargo:root={}", toolkit.root().display());
    println!("cargo:cuda_include={}", toolkit.include_dir().display());
    println!("cargo:rustc-env=CUDADEVRT_SYS_CUDA_INCLUDE={}", toolkit.include_dir().display());
}
