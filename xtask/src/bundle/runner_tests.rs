//! `scripts/gpu-run` on a bundle that this module's own code packs: shell scripts stand in for
//! the programs, in a scratch copy of the repository's layout (`scripts/gpu-run`, package
//! folders, `.gpu/`). No GPU needed: the runner only starts programs.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::artifacts::{Kind, Program};
use super::pack;
use crate::wheels::{remove_if_present, scratch_dir};
use crate::workspace::root;

/// The runner as committed: found above the current folder first (cargo and `.gpu/run` start
/// tests in their package's folder, on a machine where the build's paths may not exist), else
/// in the workspace this was built from.
fn runner() -> PathBuf {
    let cwd = std::env::current_dir().expect("a current folder");
    let found = cwd.ancestors().map(|dir| dir.join("scripts/gpu-run")).find(|path| path.is_file());
    found.unwrap_or_else(|| root().join("scripts/gpu-run"))
}

#[test]
fn the_runner_is_valid_bash() {
    let output = Command::new("bash").arg("-n").arg(runner()).output().expect("bash runs");
    assert!(output.status.success(), "bash -n scripts/gpu-run: {}", String::from_utf8_lossy(&output.stderr));
}

/// An executable shell script at `path`.
fn script(path: &Path, body: &str) {
    fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A scratch repository: `scripts/gpu-run`, a package folder `pkg/` with a file tests look for.
fn repository(name: &str) -> PathBuf {
    let repo = scratch_dir(name);
    fs::create_dir_all(repo.join("scripts")).unwrap();
    fs::copy(runner(), repo.join("scripts/gpu-run")).unwrap();
    fs::create_dir_all(repo.join("pkg")).unwrap();
    fs::write(repo.join("pkg/data.txt"), "found\n").unwrap();
    repo
}

/// Packs `programs` (name, kind, script body) into `repo/.gpu/` as `cargo xtask bundle` does.
fn bundle(repo: &Path, programs: &[(&str, Kind, &str)]) {
    let built = repo.join("built");
    fs::create_dir_all(&built).unwrap();
    let programs: Vec<Program> = programs
        .iter()
        .enumerate()
        .map(|(i, (name, kind, body))| {
            let executable = built.join(format!("{name}-{i}"));
            script(&executable, body);
            Program { kind: *kind, name: name.to_string(), package_dir: "pkg".to_string(), executable }
        })
        .collect();
    let gpu = repo.join(".gpu");
    pack::stage(&gpu.join("stage"), &programs).unwrap();
    pack::pack(&gpu).unwrap();
    pack::write_run(&gpu).unwrap();
}

/// `bash repo/.gpu/run ARGS` with logs in `repo/out`: exit code and stdout.
fn run(repo: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let mut command = Command::new("bash");
    command.arg(repo.join(".gpu/run")).args(args).env("OUT", repo.join("out"));
    command.env_remove("SANITIZE").env_remove("COMPUTE_SANITIZER").env_remove("REQUIRE_GPU");
    command.envs(env.iter().copied());
    // Something on the runner's stdin, which no program may read (nor the index it reads).
    let mut child =
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The runner may exit before reading: a closed pipe is fine here.
    let _ = stdin.write_all(b"typed at the terminal\n");
    drop(stdin);
    let output = child.wait_with_output().expect("bash runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    (output.status.code().expect("an exit code"), format!("{stdout}{stderr}"))
}

const PROGRAMS: &[(&str, Kind, &str)] = &[
    // Reads its stdin: the runner must hand it neither its own stdin nor the rest of the index.
    ("eater", Kind::Test, "cat; echo eaten"),
    ("good", Kind::Test, "echo \"args: $* REQUIRE_GPU=$REQUIRE_GPU\"; cat data.txt"),
    ("bad", Kind::Test, "echo bad-marker; exit 3"),
    ("hello", Kind::Test, "echo the test program, not the bin"),
    ("hello", Kind::Bin, "echo \"hello $*\"; cat data.txt"),
    ("probe", Kind::Example, "echo probe ran"),
];

#[test]
fn every_test_program_runs_from_its_package_folder_and_failures_count() {
    let repo = repository("gpu-run-all");
    bundle(&repo, PROGRAMS);
    let (code, out) = run(&repo, &[], &[]);
    assert_eq!(code, 1, "one test failed: {out}");
    for line in ["test eater rc=0", "test good rc=0", "test bad rc=3", "test hello rc=0"] {
        assert!(out.lines().any(|l| l == line), "`{line}` missing: {out}");
    }
    assert!(out.contains("bad-marker"), "a failure's log tail is shown: {out}");
    assert!(out.contains("3 of 4 test programs passed"), "{out}");
    assert!(out.contains("gpu: "), "the GPU line, or that there is none: {out}");
    assert!(!out.contains("probe ran"), "examples are not tests: {out}");
    assert_eq!(fs::read_to_string(repo.join("out/test-eater-eater-0.log")).unwrap(), "eaten\n");
    let log = fs::read_to_string(repo.join("out/test-good-good-1.log")).unwrap();
    assert_eq!(log, "args: --test-threads=1 REQUIRE_GPU=1\nfound\n");
    remove_if_present(&repo).unwrap();
}

#[test]
fn a_name_runs_its_bin_first_and_an_unknown_name_lists_the_bundle() {
    let repo = repository("gpu-run-name");
    bundle(&repo, PROGRAMS);
    let (code, out) = run(&repo, &["hello", "a", "b c"], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("hello a b c\nfound\n") && out.contains("bin hello rc=0"), "{out}");
    assert!(!out.contains("not the bin"), "{out}");
    assert_eq!(fs::read_to_string(repo.join("out/bin-hello-hello-4.log")).unwrap(), "hello a b c\nfound\n");

    let (code, out) = run(&repo, &["bad"], &[]);
    assert_eq!(code, 3, "a named program's exit code is the runner's: {out}");

    let (code, out) = run(&repo, &["nosuchname"], &[]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("no bundled program named nosuchname"), "{out}");
    for listed in ["  test good", "  bin hello", "  example probe"] {
        assert!(out.lines().any(|l| l == listed), "`{listed}` not listed: {out}");
    }
    remove_if_present(&repo).unwrap();
}

#[test]
fn sanitize_wraps_each_program_in_the_sanitizer() {
    let repo = repository("gpu-run-sanitize");
    bundle(&repo, PROGRAMS);
    let fake = repo.join("fake-sanitizer");
    script(&fake, "echo \"fake-sanitizer $1 $2 $3 $4\"; shift 4; exec \"$@\"");
    let env = [("SANITIZE", "memcheck"), ("COMPUTE_SANITIZER", fake.to_str().unwrap())];
    let (code, out) = run(&repo, &["probe"], &env);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fake-sanitizer --tool memcheck --error-exitcode 86\nprobe ran\n"), "{out}");

    let missing = [("SANITIZE", "memcheck"), ("COMPUTE_SANITIZER", "/no/such/compute-sanitizer")];
    let (code, out) = run(&repo, &["probe"], &missing);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("no compute-sanitizer at /no/such/compute-sanitizer"), "{out}");
    remove_if_present(&repo).unwrap();
}

#[test]
fn without_a_bundle_the_runner_says_how_to_make_one() {
    let repo = repository("gpu-run-none");
    fs::create_dir_all(repo.join(".gpu")).unwrap();
    pack::write_run(&repo.join(".gpu")).unwrap();
    let (code, out) = run(&repo, &[], &[]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("cargo xtask bundle"), "{out}");
    remove_if_present(&repo).unwrap();
}
