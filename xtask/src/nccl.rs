//! NCCL for `cuda-graph-nccl`: installed where asked (`cargo xtask setup-cuda --nccl`) from
//! the pinned `nvidia-nccl-cu13` wheel into the project's `.nccl/`, and put on the loader's
//! path of the processes the tasks start.
//!
//! `cuda-graph-nccl` loads NCCL at run time, through the dynamic loader, by the name
//! `libnccl.so` (cudarc's loader; see that crate's docs, "Finding NCCL"). The loader looks in
//! `LD_LIBRARY_PATH` first, then its cache (a system install), then its default folders. The
//! wheel ships `libnccl.so.2` only, so the install adds the `libnccl.so` link, and
//! [`library_path`] puts `.nccl/lib` first on `LD_LIBRARY_PATH` for `cargo xtask test` and
//! `bench`. Without `--nccl` nothing is installed: a system NCCL (or none: the NCCL tests
//! then skip, visibly) is used.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::wheels::{self, io_fail, Pin};
use crate::workspace::root;
use crate::Fail;

/// The NCCL wheel, pinned: 2.27.7 is the first `nvidia-nccl-cu13` release, built for CUDA
/// 13.0 (newer ones target later 13.x toolkits).
const WHEEL: &[Pin] = &[("nvidia-nccl-cu13", "2.27.7")];
/// Where `setup-cuda --nccl` puts it, below the workspace root.
pub const LOCAL_DIR: &str = ".nccl";

/// Installs the pinned NCCL wheel into `.nccl/` (`lib/libnccl.so.2` and its `libnccl.so`
/// link, `include/nccl.h`), or finds it there already.
pub fn install() -> Result<PathBuf, Fail> {
    let target = root().join(LOCAL_DIR);
    if wheels::is_installed(&target, WHEEL) && target.join("lib").join("libnccl.so").exists() {
        println!("setup-cuda: NCCL already installed in {}", target.display());
        return Ok(target);
    }
    let work = root().join("target").join("setup-nccl");
    let unpacked = wheels::download_and_unpack("setup-cuda", WHEEL, &work)?;
    let library = find_file(&unpacked, "libnccl.so.2")?.ok_or_else(|| {
        Fail::new(format!("the NCCL wheel unpacked in {} holds no libnccl.so.2", unpacked.display()))
    })?;
    // The wheel's folder holding lib/ (and include/).
    let staged = library
        .parent()
        .and_then(Path::parent)
        .ok_or_else(|| Fail::new(format!("unexpected layout: {}", library.display())))?
        .to_path_buf();
    let link = staged.join("lib").join("libnccl.so");
    if !link.exists() {
        std::os::unix::fs::symlink("libnccl.so.2", &link).map_err(|e| io_fail("link", &link, e))?;
    }
    wheels::move_into_place(WHEEL, &staged, &target)?;
    wheels::remove_if_present(&work)?;
    println!("setup-cuda: installed {} into {}", wheels::marker_text(WHEEL).trim(), target.display());
    Ok(target)
}

/// `LD_LIBRARY_PATH` for the processes a task starts: the project's `.nccl/lib` first when
/// it is installed, then what the environment had.
pub fn library_path() -> Option<OsString> {
    let ours = root().join(LOCAL_DIR).join("lib");
    prepend(ours.join("libnccl.so").exists().then_some(ours), std::env::var_os("LD_LIBRARY_PATH"))
}

fn prepend(first: Option<PathBuf>, rest: Option<OsString>) -> Option<OsString> {
    let mut parts: Vec<PathBuf> = first.into_iter().collect();
    parts.extend(rest.iter().flat_map(std::env::split_paths));
    std::env::join_paths(parts).ok().filter(|joined| !joined.is_empty())
}

/// The environment every task gives the processes it starts for NCCL: the library path, and
/// NVLink multicast off (`NCCL_NVLS_ENABLE=0`, unless set), since NVLS can put a host's
/// GPUs out of service for others.
pub fn child_env(command: &mut std::process::Command) {
    if let Some(path) = library_path() {
        command.env("LD_LIBRARY_PATH", path);
    }
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        command.env("NCCL_NVLS_ENABLE", "0");
    }
}

/// The first file named `name` below `dir` (depth first, sorted).
fn find_file(dir: &Path, name: &str) -> Result<Option<PathBuf>, Fail> {
    for entry in wheels::list_dir(dir)? {
        if entry.is_dir() {
            if let Some(found) = find_file(&entry, name)? {
                return Ok(Some(found));
            }
        } else if entry.file_name().is_some_and(|n| n == name) {
            return Ok(Some(entry));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_library_comes_first_and_the_rest_is_kept() {
        let joined = prepend(Some(PathBuf::from("/p/.nccl/lib")), Some(OsString::from("/a:/b"))).unwrap();
        assert_eq!(joined, OsString::from("/p/.nccl/lib:/a:/b"));
        assert_eq!(prepend(None, Some(OsString::from("/a"))).unwrap(), OsString::from("/a"));
        assert_eq!(prepend(None, None), None);
    }

    #[test]
    fn the_wheel_is_pinned_to_a_cu13_release() {
        assert_eq!(wheels::marker_text(WHEEL), "nvidia-nccl-cu13==2.27.7\n");
    }

    #[test]
    fn finds_a_file_below_a_folder() {
        let dir = std::env::temp_dir().join(format!("xtask-nccl-test-{}", std::process::id()));
        wheels::remove_if_present(&dir).unwrap();
        std::fs::create_dir_all(dir.join("nvidia/nccl/lib")).unwrap();
        std::fs::write(dir.join("nvidia/nccl/lib/libnccl.so.2"), b"").unwrap();
        let found = find_file(&dir, "libnccl.so.2").unwrap().unwrap();
        assert!(found.ends_with("nvidia/nccl/lib/libnccl.so.2"));
        assert_eq!(find_file(&dir, "missing").unwrap(), None);
        wheels::remove_if_present(&dir).unwrap();
    }
}
