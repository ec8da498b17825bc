//! Where the workspace is, and what a task needs installed before it runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use cuda_build::Toolkit;

use crate::{setup_cuda, Fail};

/// The workspace root (the folder above xtask/).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one folder below the workspace root")
        .to_path_buf()
}

/// The toolkit that build scripts will find, installing one into .cuda/ when none is found.
pub fn ensure_toolkit() -> Result<Toolkit, Fail> {
    match Toolkit::find_from(&root()) {
        Ok(toolkit) => {
            println!("toolkit: CUDA {} at {}", toolkit.version(), toolkit.root().display());
            Ok(toolkit)
        }
        Err(not_found) => {
            println!("toolkit: none found, installing one into .cuda/");
            for place in &not_found.searched {
                println!("  looked in {place}");
            }
            setup_cuda::run(&[])
        }
    }
}

const LIBCLANG_PLACES: &[&str] = &[
    "/usr/lib/llvm-14/lib",
    "/usr/lib/llvm-15/lib",
    "/usr/lib/llvm-16/lib",
    "/usr/lib/llvm-17/lib",
    "/usr/lib/llvm-18/lib",
    "/usr/lib/llvm-19/lib",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
];

/// libclang for bindgen: found in `LIBCLANG_PATH` or a usual place, else installed with
/// apt-get (Debian's libclang-dev) when that is possible.
pub fn ensure_libclang() -> Result<(), Fail> {
    if libclang_found() {
        return Ok(());
    }
    println!("bindgen: libclang not found, installing Debian's libclang-dev");
    let installed = Command::new("apt-get")
        .args(["install", "-y", "-qq", "libclang-dev"])
        .status()
        .is_ok_and(|s| s.success())
        || (Command::new("apt-get").args(["update", "-qq"]).status().is_ok_and(|s| s.success())
            && Command::new("apt-get")
                .args(["install", "-y", "-qq", "libclang-dev"])
                .status()
                .is_ok_and(|s| s.success()));
    if installed && libclang_found() {
        Ok(())
    } else {
        Err(Fail::new(
            "bindgen needs libclang: install it (Debian/Ubuntu: `apt-get install libclang-dev`) \
             or set LIBCLANG_PATH to the folder holding libclang.so",
        ))
    }
}

fn libclang_found() -> bool {
    let from_env = std::env::var_os("LIBCLANG_PATH").map(PathBuf::from);
    from_env.into_iter().chain(LIBCLANG_PLACES.iter().map(PathBuf::from)).any(|dir| {
        std::fs::read_dir(&dir).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                e.file_name().to_string_lossy().starts_with("libclang")
                    && e.file_name().to_string_lossy().contains(".so")
            })
        })
    })
}
