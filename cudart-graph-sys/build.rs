//! Links the CUDA runtime (static by default, `dynamic` feature for libcudart.so) and
//! publishes the toolkit's folders to dependents as `DEP_CUDART_GRAPH_{ROOT,INCLUDE,VERSION}`.
//!
//! The toolkit is the one `cuda_build::Toolkit::find` finds, the search every build script of
//! the crates shares (`CUDA_PATH`, `CUDA_HOME`, a project-local `.cuda/`, `nvcc` on `PATH`,
//! `/usr/local/cuda`); it refuses a toolkit older than CUDA 13.0, naming its version and
//! place. Only headers and the runtime library are needed here, no `bin/nvcc`.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if cuda_build::is_docs_build() {
        return;
    }
    let toolkit = cuda_build::Toolkit::find().unwrap_or_else(|err| panic!("\n{err}\n"));
    let how = if std::env::var_os("CARGO_FEATURE_DYNAMIC").is_some() {
        cuda_build::Cudart::Dynamic
    } else {
        cuda_build::Cudart::Static
    };
    cuda_build::link_cudart(&toolkit, how).unwrap_or_else(|err| panic!("\n{err}\n"));
    println!("cargo:root={}", toolkit.root().display());
    println!("cargo:include={}", toolkit.include_dir().display());
    println!("cargo:version={}", toolkit.version().0);
    println!("cargo:rustc-env=CUDART_GRAPH_SYS_TOOLKIT_VERSION={}", toolkit.version().0);
}
