//! `cargo xtask setup-cuda`: installs what the project's builds and checks need and the
//! machine lacks, from PyPI wheels into the project (no root, no system packages):
//! - the CUDA 13.0 toolkit pieces into `.cuda/`, unless a toolkit is found elsewhere by the
//!   tasks that build (they call [`ensure_toolkit`](crate::workspace::ensure_toolkit));
//! - libclang (for the bindings check) into `.libclang/`, unless one is found
//!   ([`crate::libclang`]);
//! - with `--nccl`, NCCL for `cuda-graph-nccl` into `.nccl/` ([`crate::nccl`]).
//!
//! Idempotent: a complete install of the pinned versions is left alone.

use std::path::Path;

use cuda_build::{Toolkit, LOCAL_TOOLKIT_DIR};

use crate::wheels::{self, io_fail, Pin};
use crate::workspace::root;
use crate::{libclang, nccl, Fail};

/// NVRTC, for cuda-graph's `nvrtc` feature (loaded at run time from `.cuda/lib`).
const NVRTC_WHEEL: Pin = ("nvidia-cuda-nvrtc", "13.0.88");

/// The wheels, pinned: the toolkit that cuda-build's documented `pip install` names
/// (compiler, front end, NVVM, runtime libraries, CCCL headers: [`cuda_build::TOOLKIT_WHEELS`],
/// one list for both), then NVRTC.
fn pins() -> Vec<Pin> {
    cuda_build::TOOLKIT_WHEELS.iter().copied().chain([NVRTC_WHEEL]).collect()
}

/// `cargo xtask setup-cuda`: the toolkit into `.cuda/`, then libclang where none is found.
pub fn run(args: &[String]) -> Result<(), Fail> {
    let with_nccl = match args {
        [] => false,
        [flag] if flag == "--nccl" => true,
        _ => return Err(Fail::usage("cargo xtask setup-cuda [--nccl]")),
    };
    install_toolkit()?;
    let found = libclang::ensure()?;
    println!("setup-cuda: {found}");
    if with_nccl {
        nccl::install()?;
    }
    Ok(())
}

/// Installs the pinned toolkit wheels into `.cuda/` (or finds them already there).
pub fn install_toolkit() -> Result<Toolkit, Fail> {
    let target = root().join(LOCAL_TOOLKIT_DIR);
    let pins = pins();
    if wheels::is_installed(&target, &pins) {
        if let Ok(toolkit) = Toolkit::at(&target) {
            println!("setup-cuda: CUDA {} already installed in {}", toolkit.version(), target.display());
            return Ok(toolkit);
        }
    }
    let work = root().join("target").join("setup-cuda");
    let unpacked = wheels::download_and_unpack("setup-cuda", &pins, &work)?;
    let toolkit_root = unpacked.join("nvidia").join("cu13");
    wheels::restore_executable_bits(&toolkit_root.join("bin"))?;
    wheels::restore_executable_bits(&toolkit_root.join("nvvm").join("bin"))?;
    link_unversioned_cudart(&toolkit_root.join("lib"))?;
    wheels::move_into_place(&pins, &toolkit_root, &target)?;
    wheels::remove_if_present(&work)?;
    let toolkit = Toolkit::at(&target).map_err(|why| {
        Fail::new(format!("the unpacked toolkit in {} is incomplete: {why}", target.display()))
    })?;
    println!("setup-cuda: installed CUDA {} into {}:", toolkit.version(), target.display());
    for line in wheels::marker_text(&pins).lines() {
        println!("  {line}");
    }
    Ok(toolkit)
}

/// The runtime wheel ships `libcudart.so.13` only; `-lcudart` (feature `dynamic`) needs the
/// unversioned name.
fn link_unversioned_cudart(lib: &Path) -> Result<(), Fail> {
    let versioned = wheels::list_dir(lib)?
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("libcudart.so.")));
    if let Some(versioned) = versioned {
        let link = lib.join("libcudart.so");
        if !link.exists() {
            let name = versioned.file_name().unwrap_or_default();
            std::os::unix::fs::symlink(name, &link).map_err(|e| io_fail("link", &link, e))?;
        }
    }
    Ok(())
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
            install_toolkit()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_toolkit_wheel_is_pinned_to_13_0() {
        let pins = pins();
        let text = wheels::marker_text(&pins);
        assert_eq!(text.lines().count(), pins.len());
        assert!(text.contains("nvidia-cuda-nvcc==13.0.88\n"));
        assert!(text.contains("nvidia-cuda-nvrtc==13.0.88\n"));
        assert!(pins.iter().all(|(_, version)| version.starts_with("13.0.")));
    }
}
