//! `scripts/gpu-run` counts the tests that skip inside a passing test program, so that "N of N
//! passed" is never read as every test having run. Runs the script on a fake bundle (shell
//! scripts standing in for test programs); needs bash, no GPU.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The script, found from the package folder the test runs in (`cargo test` and the bundle's
/// runner both start test programs there).
fn script() -> PathBuf {
    let path = Path::new("../scripts/gpu-run");
    assert!(path.exists(), "no scripts/gpu-run above {}", std::env::current_dir().unwrap().display());
    path.canonicalize().unwrap()
}

fn write_program(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    Command::new("chmod").arg("+x").arg(path).status().unwrap();
}

#[test]
fn skipped_tests_are_counted_per_program_and_in_the_total() {
    let root = std::env::temp_dir().join(format!("gpu-run-fixture-{}", std::process::id()));
    let stage = root.join(".gpu/stage");
    std::fs::create_dir_all(stage.join("bin")).unwrap();
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    std::fs::copy(script(), root.join("scripts/gpu-run")).unwrap();
    write_program(
        &stage.join("bin/two_gpus"),
        "echo 'skipped: needs 2 GPUs: a'\necho 'skipped: needs 2 GPUs: a' >&2\necho 'test b ... skipped: needs sm_90: b'\necho 'test c ... ok'\necho 'test result: ok'",
    );
    write_program(&stage.join("bin/plain"), "echo 'test result: ok'");
    std::fs::write(
        stage.join("index.tsv"),
        "test\ttwo_gpus\tpkg\tbin/two_gpus\ntest\tplain\tpkg\tbin/plain\n",
    )
    .unwrap();
    std::fs::write(stage.join(".extracted"), "").unwrap();

    let output =
        Command::new("bash").arg(root.join("scripts/gpu-run")).env("OUT", root.join("out")).output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    std::fs::remove_dir_all(&root).unwrap();
    assert!(output.status.success(), "{text}");
    assert!(text.contains("test two_gpus rc=0 skipped=3"), "{text}");
    assert!(text.contains("skipped (x2) in two_gpus: skipped: needs 2 GPUs: a"), "{text}");
    assert!(text.contains("test plain rc=0\n"), "{text}");
    assert!(text.contains("2 of 2 test programs passed; 3 tests skipped inside them"), "{text}");
}

#[test]
fn a_failing_program_still_fails_the_run_and_its_skips_are_counted() {
    let root = std::env::temp_dir().join(format!("gpu-run-failing-{}", std::process::id()));
    let stage = root.join(".gpu/stage");
    std::fs::create_dir_all(stage.join("bin")).unwrap();
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    std::fs::copy(script(), root.join("scripts/gpu-run")).unwrap();
    write_program(
        &stage.join("bin/broken"),
        "echo 'skipped: needs 2 CUDA devices (found 1): a'\necho 'test b ... FAILED'\nexit 101",
    );
    write_program(&stage.join("bin/plain"), "echo 'test result: ok'");
    std::fs::write(stage.join("index.tsv"), "test\tbroken\tpkg\tbin/broken\ntest\tplain\tpkg\tbin/plain\n")
        .unwrap();
    std::fs::write(stage.join(".extracted"), "").unwrap();

    let output =
        Command::new("bash").arg(root.join("scripts/gpu-run")).env("OUT", root.join("out")).output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let listed = std::fs::read_to_string(root.join("out/skipped.txt")).unwrap_or_default();
    std::fs::remove_dir_all(&root).unwrap();
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("test broken rc=101 skipped=1"), "{text}");
    assert!(text.contains("---- last 30 lines of"), "{text}");
    assert!(text.contains("1 of 2 test programs passed; 1 tests skipped inside them"), "{text}");
    assert!(listed.contains("in broken: skipped: needs 2 CUDA devices (found 1): a"), "{listed}");
}
