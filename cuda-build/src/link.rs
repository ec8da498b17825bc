//! Linking the CUDA runtime library.

use crate::toolkit::{MissingPiece, Piece, Toolkit};

/// How to link the CUDA runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cudart {
    /// `libcudart_static.a` (the default): the program runs wherever a driver is installed,
    /// with no toolkit, and starts without a GPU (the first call then fails with error 35).
    Static,
    /// `libcudart.so` (or the `libcudart.so.13` that the runtime wheel ships alone): the
    /// program needs the runtime library at run time.
    Dynamic,
}

/// Prints the Cargo lines that link the CUDA runtime from `toolkit`, or says which file the
/// toolkit lacks. Needs no `nvcc`: a toolkit of headers and libraries is enough.
///
/// ```no_run
/// // build.rs of a -sys crate
/// let toolkit = cuda_build::Toolkit::find().unwrap_or_else(|err| panic!("{err}"));
/// cuda_build::link_cudart(&toolkit, cuda_build::Cudart::Static).unwrap_or_else(|err| panic!("{err}"));
/// ```
pub fn link_cudart(toolkit: &Toolkit, how: Cudart) -> Result<(), MissingPiece> {
    println!("cargo:rustc-link-search=native={}", toolkit.lib_dir().display());
    match how {
        Cudart::Static => {
            toolkit.require(Piece::CudartStatic)?;
            println!("cargo:rustc-link-lib=static:-bundle=cudart_static");
            for system_lib in ["dl", "rt", "pthread"] {
                println!("cargo:rustc-link-lib=dylib={system_lib}");
            }
        }
        Cudart::Dynamic => {
            let library = toolkit.require(Piece::CudartShared)?;
            match library.file_name().and_then(|name| name.to_str()) {
                Some("libcudart.so") | None => println!("cargo:rustc-link-lib=dylib=cudart"),
                // `-lcudart` finds only the unversioned name; link the versioned file itself.
                Some(versioned) => println!("cargo:rustc-link-lib=dylib:+verbatim={versioned}"),
            }
        }
    }
    Ok(())
}
