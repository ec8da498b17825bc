//! Installing pinned wheels from PyPI into a folder of the project, with `python3 -m pip
//! download` and Python's zipfile (no root, no system packages, no virtual environment).
//!
//! An install is complete when its marker file, written last, lists exactly the pinned
//! `name==version`s: that is what makes every installer here idempotent.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Fail;

/// The file that lists what an install holds, one `name==version` a line.
pub const MARKER: &str = "INSTALLED";

/// A pinned wheel: PyPI project name and exact version.
pub type Pin = (&'static str, &'static str);

/// The marker's text for these pins.
pub fn marker_text(pins: &[Pin]) -> String {
    pins.iter().map(|(name, version)| format!("{name}=={version}\n")).collect()
}

/// True when `dir` holds a finished install of exactly these pins.
pub fn is_installed(dir: &Path, pins: &[Pin]) -> bool {
    fs::read_to_string(dir.join(MARKER)).is_ok_and(|have| have == marker_text(pins))
}

/// Downloads the pinned wheels for this machine into `work/wheels` and unpacks each into
/// `work/unpacked`, which it returns. `work` is emptied first. `who` prefixes the progress lines.
pub fn download_and_unpack(who: &str, pins: &[Pin], work: &Path) -> Result<PathBuf, Fail> {
    remove_if_present(work)?;
    let wheels = work.join("wheels");
    let unpacked = work.join("unpacked");
    fs::create_dir_all(&wheels).map_err(|e| io_fail("create", &wheels, e))?;

    let count = pins.len();
    let plural = if count == 1 { "" } else { "s" };
    println!("{who}: downloading {count} wheel{plural} from PyPI into {}", wheels.display());
    let mut download = Command::new("python3");
    download.args(["-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:"]);
    download.args(["--python-version", "3.12", "--implementation", "cp"]);
    for platform in platform_tags()? {
        download.args(["--platform", &platform]);
    }
    download.arg("-d").arg(&wheels);
    download.args(pins.iter().map(|(name, version)| format!("{name}=={version}")));
    run_command(&mut download, "python3 -m pip download (this needs python3 with pip)")?;

    for wheel in list_dir(&wheels)? {
        println!("{who}: unpacking {}", wheel.file_name().unwrap_or_default().to_string_lossy());
        let mut unzip = Command::new("python3");
        unzip.args(["-m", "zipfile", "-e"]).arg(&wheel).arg(&unpacked);
        run_command(&mut unzip, "python3 -m zipfile")?;
    }
    Ok(unpacked)
}

/// The manylinux tags pip must accept for this machine (wheels carry one or several).
pub fn platform_tags() -> Result<Vec<String>, Fail> {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x86_64",
        "aarch64" => "aarch64",
        other => {
            return Err(Fail::new(format!(
                "the pinned wheels are published for x86_64 and aarch64, not {other}"
            )))
        }
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

/// Zip archives keep no Unix modes through Python's zipfile: make every file in `dir` runnable.
pub fn restore_executable_bits(dir: &Path) -> Result<(), Fail> {
    use std::os::unix::fs::PermissionsExt;
    for file in list_dir(dir)? {
        if file.is_file() {
            fs::set_permissions(&file, fs::Permissions::from_mode(0o755))
                .map_err(|e| io_fail("chmod", &file, e))?;
        }
    }
    Ok(())
}

/// The entries of `dir`, sorted.
pub fn list_dir(dir: &Path) -> Result<Vec<PathBuf>, Fail> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| io_fail("read", dir, e))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    Ok(paths)
}

/// Removes `dir` and everything in it; a missing `dir` is fine.
pub fn remove_if_present(dir: &Path) -> Result<(), Fail> {
    match fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_fail("remove", dir, e)),
        _ => Ok(()),
    }
}

/// Replaces `target` with the finished install in `staged`: the marker is written into
/// `staged` first, so a `target` with a marker is always complete.
pub fn move_into_place(pins: &[Pin], staged: &Path, target: &Path) -> Result<(), Fail> {
    fs::write(staged.join(MARKER), marker_text(pins)).map_err(|e| io_fail("write", staged, e))?;
    remove_if_present(target)?;
    fs::rename(staged, target).map_err(|e| io_fail("move into place", target, e))
}

fn run_command(command: &mut Command, what: &str) -> Result<(), Fail> {
    let status = command.status().map_err(|e| Fail::new(format!("cannot start {what}: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(Fail::new(format!("{what} failed ({status})")))
    }
}

/// `cannot <action> <path>: <err>`.
pub fn io_fail(action: &str, path: &Path, err: std::io::Error) -> Fail {
    Fail::new(format!("cannot {action} {}: {err}", path.display()))
}

/// A fresh, empty folder for a test: `xtask-<name>-<process id>` in the temporary folder.
#[cfg(test)]
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xtask-{name}-{}", std::process::id()));
    remove_if_present(&dir).unwrap();
    fs::create_dir_all(&dir).unwrap();
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_lists_every_pin_once() {
        let text = marker_text(&[("a", "1.0"), ("b", "2.1")]);
        assert_eq!(text, "a==1.0\nb==2.1\n");
    }

    #[test]
    fn an_install_counts_only_with_the_exact_marker() {
        let dir = scratch_dir("wheels-test");
        let pins = [("a", "1.0")];
        assert!(!is_installed(&dir, &pins), "no marker yet");
        fs::write(dir.join(MARKER), "a==0.9\n").unwrap();
        assert!(!is_installed(&dir, &pins), "another version");
        fs::write(dir.join(MARKER), marker_text(&pins)).unwrap();
        assert!(is_installed(&dir, &pins));
        remove_if_present(&dir).unwrap();
    }

    #[test]
    fn platform_tags_name_this_machine() {
        let tags = platform_tags().unwrap();
        assert!(tags.iter().all(|t| t.ends_with(std::env::consts::ARCH)));
    }
}
