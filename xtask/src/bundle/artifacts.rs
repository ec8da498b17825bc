//! The programs of a build, read from Cargo's JSON messages (`--message-format=json-*`): each
//! `compiler-artifact` message with an `executable` is one program to bundle.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::Fail;

/// What a bundled program is; the runner runs every `Test`, and a `Bin` or `Example` by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Test,
    Bin,
    Example,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Test => "test",
            Kind::Bin => "bin",
            Kind::Example => "example",
        })
    }
}

/// One executable Cargo built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub kind: Kind,
    /// The target's name (a test's file stem, a bin's or example's name).
    pub name: String,
    /// The package's folder relative to the workspace root, with `/` between parts (`.` for the
    /// root itself): the runner starts the program there, where tests find their files.
    pub package_dir: String,
    /// Where Cargo wrote it.
    pub executable: PathBuf,
}

/// Test targets the bundle leaves out: trybuild's, which run `cargo` and so need a toolchain.
const NEEDS_CARGO: [&str; 2] = ["ui", "compile_fail"];

/// The program in one of Cargo's JSON messages, or `None` for every other message (other
/// reasons, libraries, build scripts, and trybuild tests). `root` is the workspace root as
/// Cargo names it (the folder Cargo ran in).
pub fn program(message: &Value, root: &Path) -> Result<Option<Program>, Fail> {
    if message["reason"] != "compiler-artifact" {
        return Ok(None);
    }
    let executable = match &message["executable"] {
        Value::Null => return Ok(None),
        Value::String(path) => PathBuf::from(path),
        other => return Err(malformed("executable", other)),
    };
    let name = string_field(message, &["target", "name"])?;
    let kinds = message["target"]["kind"].as_array().ok_or_else(|| malformed("target.kind", message))?;
    let is_test = message["profile"]["test"].as_bool().ok_or_else(|| malformed("profile.test", message))?;
    let kind = if is_test {
        Kind::Test
    } else if kinds.iter().any(|kind| kind == "example") {
        Kind::Example
    } else {
        Kind::Bin
    };
    if kind == Kind::Test && NEEDS_CARGO.iter().any(|prefix| name.starts_with(prefix)) {
        return Ok(None);
    }
    let manifest = PathBuf::from(string_field(message, &["manifest_path"])?);
    let package_dir = relative_package_dir(&manifest, root)?;
    Ok(Some(Program { kind, name, package_dir, executable }))
}

/// The folder of `manifest` relative to `root`, or a `Fail` for a package outside the root.
fn relative_package_dir(manifest: &Path, root: &Path) -> Result<String, Fail> {
    let dir = manifest.parent().ok_or_else(|| {
        Fail::new(format!("cargo named a manifest without a folder: {}", manifest.display()))
    })?;
    let canonical = || dir.canonicalize().ok().and_then(|d| d.strip_prefix(root).ok().map(Path::to_path_buf));
    let relative =
        dir.strip_prefix(root).ok().map(Path::to_path_buf).or_else(canonical).ok_or_else(|| {
            Fail::new(format!(
                "the package at {} is outside the workspace {}: the runner could not start it there",
                dir.display(),
                root.display()
            ))
        })?;
    let parts: Vec<&str> = relative
        .components()
        .map(|part| {
            part.as_os_str()
                .to_str()
                .ok_or_else(|| Fail::new(format!("the package folder {} is not UTF-8", relative.display())))
        })
        .collect::<Result<_, _>>()?;
    Ok(if parts.is_empty() { ".".to_string() } else { parts.join("/") })
}

fn string_field(message: &Value, path: &[&str]) -> Result<String, Fail> {
    let value = path.iter().fold(message, |value, key| &value[key]);
    value.as_str().map(str::to_string).ok_or_else(|| malformed(&path.join("."), message))
}

fn malformed(field: &str, seen: &Value) -> Fail {
    let mut text = seen.to_string();
    if text.len() > 300 {
        let cut = (0..=300).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        text.truncate(cut);
        text.push('…');
    }
    Fail::new(format!("cargo's compiler-artifact message has no usable `{field}`: {text}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str = "/work/repo";

    /// `program` of one literal line of Cargo's output.
    fn classify(line: &str) -> Result<Option<Program>, Fail> {
        program(&serde_json::from_str(line).unwrap(), Path::new(ROOT))
    }

    fn expect(line: &str, kind: Kind, name: &str, dir: &str, exe: &str) {
        let found = classify(line).unwrap().expect("a program");
        let want = Program {
            kind,
            name: name.to_string(),
            package_dir: dir.to_string(),
            executable: PathBuf::from(exe),
        };
        assert_eq!(found, want);
    }

    #[test]
    fn integration_and_unit_tests_are_tests() {
        expect(
            r#"{"reason":"compiler-artifact","package_id":"path+file:///work/repo/tests#0.1.0","manifest_path":"/work/repo/tests/Cargo.toml","target":{"kind":["test"],"crate_types":["bin"],"name":"cuda_graphs","src_path":"/work/repo/tests/tests/cuda_graphs.rs","edition":"2021","doc":false,"doctest":false,"test":true},"profile":{"opt_level":"3","debuginfo":0,"debug_assertions":false,"overflow_checks":false,"test":true},"features":[],"filenames":["/work/repo/target/release/deps/cuda_graphs-0f1e2d3c4b5a6978"],"executable":"/work/repo/target/release/deps/cuda_graphs-0f1e2d3c4b5a6978","fresh":false}"#,
            Kind::Test,
            "cuda_graphs",
            "tests",
            "/work/repo/target/release/deps/cuda_graphs-0f1e2d3c4b5a6978",
        );
        // A library's unit tests: target kind `lib`, but built as a test.
        expect(
            r#"{"reason":"compiler-artifact","package_id":"path+file:///work/repo/tests/gpu-test-support#0.1.0","manifest_path":"/work/repo/tests/gpu-test-support/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"gpu_test_support","src_path":"/work/repo/tests/gpu-test-support/src/lib.rs","edition":"2021","doc":true,"doctest":true,"test":true},"profile":{"opt_level":"0","debuginfo":1,"debug_assertions":true,"overflow_checks":true,"test":true},"features":[],"filenames":["/work/repo/target/debug/deps/gpu_test_support-d28a16be976acfad"],"executable":"/work/repo/target/debug/deps/gpu_test_support-d28a16be976acfad","fresh":true}"#,
            Kind::Test,
            "gpu_test_support",
            "tests/gpu-test-support",
            "/work/repo/target/debug/deps/gpu_test_support-d28a16be976acfad",
        );
    }

    #[test]
    fn bins_and_examples_are_told_apart() {
        expect(
            r#"{"reason":"compiler-artifact","package_id":"path+file:///work/repo/examples/ch12#0.1.0","manifest_path":"/work/repo/examples/ch12/Cargo.toml","target":{"kind":["bin"],"crate_types":["bin"],"name":"ch12","src_path":"/work/repo/examples/ch12/src/main.rs","edition":"2021","doc":true,"doctest":false,"test":true},"profile":{"opt_level":"3","debuginfo":0,"debug_assertions":false,"overflow_checks":false,"test":false},"features":[],"filenames":["/work/repo/target/release/ch12"],"executable":"/work/repo/target/release/ch12","fresh":false}"#,
            Kind::Bin,
            "ch12",
            "examples/ch12",
            "/work/repo/target/release/ch12",
        );
        expect(
            r#"{"reason":"compiler-artifact","package_id":"path+file:///work/repo/bench#0.1.0","manifest_path":"/work/repo/bench/Cargo.toml","target":{"kind":["example"],"crate_types":["bin"],"name":"process_probe","src_path":"/work/repo/bench/examples/process_probe.rs","edition":"2021","doc":false,"doctest":false,"test":false},"profile":{"opt_level":"3","debuginfo":0,"debug_assertions":false,"overflow_checks":false,"test":false},"features":[],"filenames":["/work/repo/target/release/examples/process_probe"],"executable":"/work/repo/target/release/examples/process_probe","fresh":false}"#,
            Kind::Example,
            "process_probe",
            "bench",
            "/work/repo/target/release/examples/process_probe",
        );
        // An example built as a test (`test = true` in its [[example]]) runs as a test.
        expect(
            r#"{"reason":"compiler-artifact","manifest_path":"/work/repo/bench/Cargo.toml","target":{"kind":["example"],"name":"probe"},"profile":{"test":true},"executable":"/work/repo/target/release/examples/probe-1a2b3c4d5e6f7a8b"}"#,
            Kind::Test,
            "probe",
            "bench",
            "/work/repo/target/release/examples/probe-1a2b3c4d5e6f7a8b",
        );
    }

    #[test]
    fn trybuild_tests_are_left_out_and_only_tests_by_that_rule() {
        for name in ["ui", "ui_cases", "compile_fail", "compile_fail_exec"] {
            let line = format!(
                r#"{{"reason":"compiler-artifact","manifest_path":"/work/repo/cuda-graph/Cargo.toml","target":{{"kind":["test"],"crate_types":["bin"],"name":"{name}"}},"profile":{{"test":true}},"executable":"/work/repo/target/release/deps/{name}-00112233"}}"#
            );
            assert_eq!(classify(&line).unwrap(), None, "{name}");
        }
        // A bin named ui* is not trybuild's and stays.
        let bin = r#"{"reason":"compiler-artifact","manifest_path":"/work/repo/tools/Cargo.toml","target":{"kind":["bin"],"name":"ui_server"},"profile":{"test":false},"executable":"/work/repo/target/release/ui_server"}"#;
        expect(bin, Kind::Bin, "ui_server", "tools", "/work/repo/target/release/ui_server");
    }

    #[test]
    fn libraries_build_scripts_and_other_messages_are_not_programs() {
        let lines = [
            r#"{"reason":"compiler-artifact","package_id":"registry+https://github.com/rust-lang/crates.io-index#cc@1.2.0","manifest_path":"/home/u/.cargo/registry/src/cc-1.2.0/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"cc"},"profile":{"test":false},"features":[],"filenames":["/work/repo/target/release/deps/libcc-1234.rlib"],"executable":null,"fresh":true}"#,
            r#"{"reason":"compiler-artifact","manifest_path":"/work/repo/cudart-graph-sys/Cargo.toml","target":{"kind":["custom-build"],"crate_types":["bin"],"name":"build-script-build"},"profile":{"test":false},"filenames":["/work/repo/target/release/build/cudart-graph-sys-5678/build-script-build"],"executable":null,"fresh":true}"#,
            r#"{"reason":"build-script-executed","package_id":"path+file:///work/repo/cudart-graph-sys#0.1.0","linked_libs":[],"linked_paths":[],"cfgs":[],"env":[],"out_dir":"/work/repo/target/release/build/cudart-graph-sys-9abc/out"}"#,
            r#"{"reason":"build-finished","success":true}"#,
        ];
        for line in lines {
            assert_eq!(classify(line).unwrap(), None, "{line}");
        }
    }

    #[test]
    fn a_package_folder_is_relative_to_the_root() {
        let root = Path::new(ROOT);
        assert_eq!(relative_package_dir(Path::new("/work/repo/Cargo.toml"), root).unwrap(), ".");
        assert_eq!(
            relative_package_dir(Path::new("/work/repo/examples/ch12/Cargo.toml"), root).unwrap(),
            "examples/ch12"
        );
        let outside = relative_package_dir(Path::new("/elsewhere/pkg/Cargo.toml"), root).unwrap_err();
        assert!(outside.to_string().contains("outside the workspace /work/repo"), "{outside}");
    }

    #[test]
    fn a_malformed_artifact_is_a_clear_failure() {
        let no_profile = r#"{"reason":"compiler-artifact","manifest_path":"/work/repo/a/Cargo.toml","target":{"kind":["bin"],"name":"a"},"executable":"/work/repo/target/release/a"}"#;
        let fail = classify(no_profile).unwrap_err().to_string();
        assert!(fail.contains("no usable `profile.test`"), "{fail}");
        let no_name = r#"{"reason":"compiler-artifact","manifest_path":"/work/repo/a/Cargo.toml","target":{"kind":["bin"]},"profile":{"test":false},"executable":"/work/repo/target/release/a"}"#;
        let fail = classify(no_name).unwrap_err().to_string();
        assert!(fail.contains("no usable `target.name`"), "{fail}");
        let bad_exe = r#"{"reason":"compiler-artifact","executable":7}"#;
        assert!(classify(bad_exe).unwrap_err().to_string().contains("`executable`"));
    }
}
