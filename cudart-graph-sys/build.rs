//! Links the CUDA runtime (static by default, `dynamic` feature for libcudart.so) and
//! publishes the toolkit's folders to dependents as `DEP_CUDART_GRAPH_{ROOT,INCLUDE}`.

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
    cuda_build::link_cudart(&toolkit, how);
    println!("cargo:root={}", toolkit.root().display());
    println!("cargo:include={}", toolkit.include_dir().display());
    println!("cargo:rustc-env=CUDART_GRAPH_SYS_TOOLKIT_VERSION={}", toolkit.version().0);
}
