//! Linking the CUDA runtime library.

use crate::toolkit::Toolkit;

/// How to link the CUDA runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cudart {
    /// `libcudart_static.a` (the default): the program runs wherever a driver is installed,
    /// with no toolkit, and starts without a GPU (the first call then fails with error 35).
    Static,
    /// `libcudart.so`: the program needs the runtime library at run time.
    Dynamic,
}

/// Prints the Cargo lines that link the CUDA runtime from `toolkit`.
///
/// ```no_run
/// // build.rs of a -sys crate
/// let toolkit = cuda_build::Toolkit::find().unwrap_or_else(|err| panic!("{err}"));
/// cuda_build::link_cudart(&toolkit, cuda_build::Cudart::Static);
/// ```
pub fn link_cudart(toolkit: &Toolkit, how: Cudart) {
    println!("cargo:rustc-link-search=native={}", toolkit.lib_dir().display());
    match how {
        Cudart::Static => {
            println!("cargo:rustc-link-lib=static:-bundle=cudart_static");
            for system_lib in ["dl", "rt", "pthread"] {
                println!("cargo:rustc-link-lib=dylib={system_lib}");
            }
        }
        Cudart::Dynamic => println!("cargo:rustc-link-lib=dylib=cudart"),
    }
}
