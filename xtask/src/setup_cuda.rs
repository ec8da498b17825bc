//! `cargo xtask setup-cuda`: installs the CUDA 13.0 toolkit pieces this project needs from
//! NVIDIA's wheels on PyPI into `.cuda/`, with `pip download` and Python's zipfile (no root,
//! no system packages). Idempotent: a complete install of the pinned versions is left alone.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use cuda_build::{Toolkit, LOCAL_TOOLKIT_DIR};

use crate::workspace::root;
use crate::Fail;

/// The wheels, pinned: compiler, front end, NVVM, runtime libraries, CCCL headers.
const WHEELS: &[(&str, &str)] = &[
    ("nvidia-cuda-nvcc", "13.0.88"),
    ("nvidia-cuda-crt", "13.0.88"),
    ("nvidia-nvvm", "13.0.88"),
    ("nvidia-cuda-runtime", "13.0.96"),
    ("nvidia-cuda-cccl", "13.0.85"),
];

/// Lists what is installed, one `name==version` a line; written last, so its presence means
/// the install finished.
const MARKER: &str = "INSTALLED";

pub fn run(args: &[String]) -> Result<Toolkit, Fail> {
    if !args.is_empty() {
        return Err(Fail::usage("cargo xtask setup-cuda"));
    }
    let target = root().join(LOCAL_TOOLKIT_DIR);
    let wanted = marker_text();
    if fs::read_to_string(target.join(MARKER)).is_ok_and(|have| have == wanted) {
        if let Ok(toolkit) = Toolkit::at(&target) {
            println!("setup-cuda: CUDA {} already installed in {}", toolkit.version(), target.display());
            return Ok(toolkit);
        }
    }
    let work = root().join("target").join("setup-cuda");
    remove_if_present(&work)?;
    let wheels = work.join("wheels");
    let unpacked = work.join("unpacked");
    fs::create_dir_all(&wheels).map_err(|e| io_fail("create", &wheels, e))?;

    println!("setup-cuda: downloading {} wheels from PyPI into {}", WHEELS.len(), wheels.display());
    let mut download = Command::new("python3");
    download.args(["-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:"]);
    download.args(["--python-version", "3.12", "--implementation", "cp"]);
    for platform in platform_tags()? {
        download.args(["--platform", &platform]);
    }
    download.arg("-d").arg(&wheels);
    download.args(WHEELS.iter().map(|(name, version)| format!("{name}=={version}")));
    run_command(&mut download, "python3 -m pip download (setup-cuda needs python3 with pip)")?;

    for wheel in list_dir(&wheels)? {
        println!("setup-cuda: unpacking {}", wheel.file_name().unwrap_or_default().to_string_lossy());
        let mut unzip = Command::new("python3");
        unzip.args(["-m", "zipfile", "-e"]).arg(&wheel).arg(&unpacked);
        run_command(&mut unzip, "python3 -m zipfile")?;
    }
    let toolkit_root = unpacked.join("nvidia").join("cu13");
    restore_executable_bits(&toolkit_root.join("bin"))?;
    restore_executable_bits(&toolkit_root.join("nvvm").join("bin"))?;
    link_unversioned_cudart(&toolkit_root.join("lib"))?;
    fs::write(toolkit_root.join(MARKER), &wanted).map_err(|e| io_fail("write", &toolkit_root, e))?;

    remove_if_present(&target)?;
    fs::rename(&toolkit_root, &target).map_err(|e| io_fail("move into place", &target, e))?;
    remove_if_present(&work)?;
    let toolkit = Toolkit::at(&target).map_err(|why| {
        Fail::new(format!("the unpacked toolkit in {} is incomplete: {why}", target.display()))
    })?;
    println!("setup-cuda: installed CUDA {} into {}:", toolkit.version(), target.display());
    for line in wanted.lines() {
        println!("  {line}");
    }
    Ok(toolkit)
}

fn marker_text() -> String {
    WHEELS.iter().map(|(name, version)| format!("{name}=={version}\n")).collect()
}

/// The manylinux tags pip must accept for this machine (the wheels carry several, one each).
fn platform_tags() -> Result<Vec<String>, Fail> {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x86_64",
        "aarch64" => "aarch64",
        other => return Err(Fail::new(format!("NVIDIA publishes no CUDA wheels for {other}"))),
    };
    Ok([
        "manylinux2010",
        "manylinux_2_12",
        "manylinux2014",
        "manylinux_2_17",
        "manylinux_2_27",
        "manylinux_2_28",
    ]
    .iter()
    .map(|tag| format!("{tag}_{arch}"))
    .collect())
}

/// Zip archives made by pip keep no Unix modes through Python's zipfile: make bin/ runnable.
fn restore_executable_bits(dir: &Path) -> Result<(), Fail> {
    use std::os::unix::fs::PermissionsExt;
    for file in list_dir(dir)? {
        if file.is_file() {
            fs::set_permissions(&file, fs::Permissions::from_mode(0o755))
                .map_err(|e| io_fail("chmod", &file, e))?;
        }
    }
    Ok(())
}

/// The runtime wheel ships `libcudart.so.13` only; `-lcudart` (feature `dynamic`) needs the
/// unversioned name.
fn link_unversioned_cudart(lib: &Path) -> Result<(), Fail> {
    let versioned = list_dir(lib)?
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

fn list_dir(dir: &Path) -> Result<Vec<PathBuf>, Fail> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| io_fail("read", dir, e))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    Ok(paths)
}

fn remove_if_present(dir: &Path) -> Result<(), Fail> {
    match fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_fail("remove", dir, e)),
        _ => Ok(()),
    }
}

fn run_command(command: &mut Command, what: &str) -> Result<(), Fail> {
    let status = command.status().map_err(|e| Fail::new(format!("cannot start {what}: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(Fail::new(format!("{what} failed ({status})")))
    }
}

fn io_fail(action: &str, path: &Path, err: std::io::Error) -> Fail {
    Fail::new(format!("cannot {action} {}: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_lists_every_pinned_wheel() {
        let text = marker_text();
        assert_eq!(text.lines().count(), WHEELS.len());
        assert!(text.contains("nvidia-cuda-nvcc==13.0.88\n"));
        assert!(WHEELS.iter().all(|(_, version)| version.starts_with("13.0.")));
    }

    #[test]
    fn platform_tags_name_this_machine() {
        let tags = platform_tags().unwrap();
        assert!(tags.iter().all(|t| t.ends_with(std::env::consts::ARCH)));
    }
}
