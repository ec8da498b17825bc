//! The plain CUDA C++ programs kept beside the crates: the reproducers of CUDA and tool
//! failures (`*/repro/*.cu`) and the profiles (`bench/profile/*.cu`). Scripts
//! build and run them on a GPU machine; cargo never builds them. These tests compile each one
//! with the toolkit's nvcc, with warnings as errors, and check that a script runs it, so none
//! of them breaks or is orphaned unnoticed. They need no GPU.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The folders that hold the standalone programs, relative to the workspace root.
const FOLDERS: [&str; 3] = ["device-launch/repro", "cuda-graph/repro", "bench/profile"];

/// The workspace root: found from the current folder (cargo and `.gpu/run` start tests in
/// their package's folder, on a machine where the build's paths may not exist), else from
/// where this package was built.
fn workspace_root() -> PathBuf {
    let built_at = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    let cwd = std::env::current_dir().unwrap_or_else(|_| built_at.clone());
    [cwd, built_at]
        .iter()
        .flat_map(|start| start.ancestors())
        .find(|dir| FOLDERS.iter().all(|folder| dir.join(folder).is_dir()) && dir.join("scripts").is_dir())
        .unwrap_or_else(|| {
            panic!("no workspace root (a folder holding scripts/ and {FOLDERS:?}) above the current folder")
        })
        .to_path_buf()
}

/// Every `.cu` file in [`FOLDERS`], as paths relative to the workspace root.
fn standalone_programs(root: &Path) -> Vec<String> {
    let mut programs = Vec::new();
    for folder in FOLDERS {
        let entries = std::fs::read_dir(root.join(folder)).unwrap_or_else(|err| panic!("{folder}: {err}"));
        for entry in entries {
            let name = entry.expect("a readable folder entry").file_name().to_string_lossy().into_owned();
            if name.ends_with(".cu") {
                programs.push(format!("{folder}/{name}"));
            }
        }
    }
    programs.sort();
    programs
}

#[test]
fn every_standalone_program_compiles_without_warnings() {
    let root = workspace_root();
    let toolkit =
        cuda_build::Toolkit::find_from(&root).unwrap_or_else(|err| panic!("no CUDA toolkit: {err}"));
    let programs = standalone_programs(&root);
    assert!(programs.len() >= 6, "expected the 3 reproducers and the 3 profiles, found {programs:?}");
    let out = std::env::temp_dir().join(format!("standalone-cuda-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("a temporary folder");
    let failures: Vec<String> = std::thread::scope(|scope| {
        let jobs: Vec<_> = programs
            .iter()
            .enumerate()
            .map(|(i, program)| {
                let (root, out, nvcc) = (&root, &out, toolkit.nvcc());
                scope.spawn(move || {
                    // The scripts build with -rdc=true for sm_90 (the device runtime needs
                    // relocatable device code); compiling without linking needs no GPU.
                    let result = Command::new(&nvcc)
                        .args([
                            "-arch=sm_90",
                            "-rdc=true",
                            "-Werror",
                            "all-warnings",
                            "-Xcompiler",
                            "-Wall,-Werror",
                            "-c",
                        ])
                        .arg("-o")
                        .arg(out.join(format!("{i}.o")))
                        .arg(root.join(program))
                        .output();
                    match result {
                        Ok(output) if output.status.success() => None,
                        Ok(output) => Some(format!(
                            "{program}: nvcc {}\n{}",
                            output.status,
                            String::from_utf8_lossy(&output.stderr)
                        )),
                        Err(err) => Some(format!("{program}: cannot run {}: {err}", nvcc.display())),
                    }
                })
            })
            .collect();
        jobs.into_iter().filter_map(|job| job.join().expect("an nvcc job")).collect()
    });
    let _ = std::fs::remove_dir_all(&out);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_standalone_program_has_a_script() {
    let root = workspace_root();
    let scripts: Vec<String> = std::fs::read_dir(root.join("scripts"))
        .expect("scripts/")
        .map(|entry| std::fs::read_to_string(entry.expect("a readable entry").path()).unwrap_or_default())
        .collect();
    for program in standalone_programs(&root) {
        assert!(
            scripts.iter().any(|script| script.contains(program.as_str())),
            "no script in scripts/ builds {program}"
        );
    }
}
