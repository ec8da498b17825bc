//! The plain CUDA C++ programs kept beside the crates: the reproducers of CUDA and tool
//! failures (`*/repro/*.cu`) and the profiles (`bench/profile/*.cu`). One runner,
//! `scripts/run-standalone NAME`, builds and runs them on a GPU machine from one table of
//! names, sources and nvcc flags; cargo never builds them. These tests check that the table
//! has exactly one line for each `.cu` file, and compile each program with the toolkit's nvcc
//! and the table's flags, with warnings as errors, so none of them breaks or is orphaned
//! unnoticed. They need no GPU (bash runs `run-standalone --list`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The folders that hold the standalone programs, relative to the workspace root. (The NCCL
/// reproducers load NCCL at run time, with their own declarations of its calls: they compile
/// without NCCL's header, like every other program here.)
const FOLDERS: [&str; 4] =
    ["device-launch/repro", "cuda-graph/repro", "cuda-graph-nccl/repro", "bench/profile"];

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

/// One line of `scripts/run-standalone --list`: the name, the source (relative to the root)
/// and the nvcc flags the runner builds it with.
struct Entry {
    name: String,
    source: String,
    flags: Vec<String>,
}

/// The runner's table, as the runner itself prints it.
fn runner_table(root: &Path) -> Vec<Entry> {
    let output = Command::new("bash")
        .arg(root.join("scripts/run-standalone"))
        .arg("--list")
        .output()
        .unwrap_or_else(|err| panic!("cannot run bash scripts/run-standalone --list: {err}"));
    assert!(output.status.success(), "run-standalone --list: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout)
        .expect("UTF-8 from --list")
        .lines()
        .map(|line| {
            let mut words = line.split_whitespace().map(str::to_owned);
            let (Some(name), Some(source)) = (words.next(), words.next()) else {
                panic!("run-standalone --list: `{line}` is not NAME SOURCE FLAGS")
            };
            Entry { name, source, flags: words.collect() }
        })
        .collect()
}

#[test]
fn every_standalone_program_compiles_without_warnings() {
    let root = workspace_root();
    let toolkit =
        cuda_build::Toolkit::find_from(&root).unwrap_or_else(|err| panic!("no CUDA toolkit: {err}"));
    let programs = runner_table(&root);
    assert!(programs.len() >= 6, "expected the reproducers and the 3 profiles, found {}", programs.len());
    let out = std::env::temp_dir().join(format!("standalone-cuda-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("a temporary folder");
    let failures: Vec<String> = std::thread::scope(|scope| {
        let jobs: Vec<_> = programs
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                let (root, out, nvcc) = (&root, &out, toolkit.nvcc());
                scope.spawn(move || {
                    // With the runner's flags, for the runner's default sm_90; compiling
                    // without linking needs no GPU.
                    let program = &entry.source;
                    let result = Command::new(&nvcc)
                        .arg("-arch=sm_90")
                        .args(&entry.flags)
                        .args(["-Werror", "all-warnings", "-Xcompiler", "-Wall,-Werror", "-c"])
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
fn the_runner_has_one_line_for_each_standalone_program_and_no_other() {
    let root = workspace_root();
    let table = runner_table(&root);
    let mut listed: Vec<String> = table.iter().map(|entry| entry.source.clone()).collect();
    listed.sort();
    assert_eq!(listed, standalone_programs(&root), "scripts/run-standalone's table against the .cu files");
    let mut names: Vec<&str> = table.iter().map(|entry| entry.name.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), table.len(), "a name is in run-standalone's table twice");
    let runner =
        std::fs::read_to_string(root.join("scripts/run-standalone")).expect("scripts/run-standalone");
    for entry in &table {
        assert!(
            runner.contains(&format!("run_{}()", entry.name)),
            "run-standalone does not say how to run {}",
            entry.name
        );
    }
}
