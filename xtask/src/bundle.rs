//! `cargo xtask bundle [-p PACKAGE]... [--dev]`: builds the workspace's tests, bins and
//! examples here and packs them into `.gpu/`, so that a GPU machine with the NVIDIA driver and
//! a checkout of the same commit, but no Rust, can run them (`bash .gpu/run`, which runs
//! `scripts/gpu-run`; `scripts/gpu-sanitize` reads the same bundle).
//!
//! Programs link the CUDA runtime statically, so they need only the driver there. Test targets
//! named `ui*` or `compile_fail*` (trybuild's) are left out: they run `cargo`. A bundle of the
//! whole workspace also holds the quick start's program (`tests/quickstart`, a crate of its own
//! outside the workspace), as the bin `app`: `bash .gpu/run app`.

mod artifacts;
mod pack;
#[cfg(all(test, unix))]
mod runner_tests;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use artifacts::{program, Program};

use crate::setup_cuda::ensure_toolkit;
use crate::wheels::{io_fail, remove_if_present};
use crate::workspace::root;
use crate::Fail;

const USAGE: &str = "cargo xtask bundle [-p PACKAGE]... [--dev]";

/// The quick start's crate (cuda-graph's README), built into the workspace's target folder.
const QUICKSTART: &str = "tests/quickstart";

/// What to build.
#[derive(Debug, PartialEq, Eq)]
struct Options {
    /// Empty: the whole workspace.
    packages: Vec<String>,
    /// The dev profile instead of release.
    dev: bool,
}

fn parse(args: &[String]) -> Result<Options, Fail> {
    let mut options = Options { packages: Vec::new(), dev: false };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--dev" => options.dev = true,
            "-p" | "--package" => match args.next() {
                Some(package) if !package.starts_with('-') => options.packages.push(package.clone()),
                _ => return Err(Fail::new(format!("{arg} needs a package name\nusage: {USAGE}"))),
            },
            other => match other.strip_prefix("--package=") {
                Some(package) if !package.is_empty() => options.packages.push(package.to_string()),
                _ => return Err(Fail::new(format!("unknown argument `{other}`\nusage: {USAGE}"))),
            },
        }
    }
    Ok(options)
}

/// The Cargo arguments shared by both builds: profile, then packages.
fn selection(options: &Options) -> Vec<String> {
    let mut args = Vec::new();
    if !options.dev {
        args.push("--release".to_string());
    }
    if options.packages.is_empty() {
        args.push("--workspace".to_string());
    }
    for package in &options.packages {
        args.extend(["-p".to_string(), package.clone()]);
    }
    args
}

/// `cargo xtask bundle`: see the module docs.
pub fn run(args: &[String]) -> Result<(), Fail> {
    if matches!(args, [flag] if flag == "-h" || flag == "--help") {
        println!("usage: {USAGE}");
        return Ok(());
    }
    let options = parse(args)?;
    ensure_toolkit()?;
    let root = root();
    let root = root.canonicalize().map_err(|e| io_fail("find", &root, e))?;
    let gpu = root.join(".gpu");
    remove_if_present(&gpu)?;

    let selection = selection(&options);
    let mut programs = build(&root, &["test", "--no-run"], &selection)?;
    programs.extend(build(&root, &["build", "--bins", "--examples"], &selection)?);
    if options.packages.is_empty() {
        programs.extend(build(&root, &["build", "--bins"], &quickstart_selection(&root, &options)?)?);
    }
    let programs = distinct_sorted(programs);
    if programs.is_empty() {
        return Err(Fail::new("cargo built no test, bin or example: nothing to bundle"));
    }

    let staged = pack::stage(&gpu.join("stage"), &programs)?;
    let size = pack::pack(&gpu)?;
    pack::write_run(&gpu)?;
    let count = |kind| programs.iter().filter(|p| p.kind == kind).count();
    println!(
        "bundled {} programs (tests {}, bins {}, examples {}; {} stripped) into .gpu/{}: {:.1} MiB",
        staged.programs,
        count(artifacts::Kind::Test),
        count(artifacts::Kind::Bin),
        count(artifacts::Kind::Example),
        staged.stripped,
        pack::ARCHIVE,
        size as f64 / (1024.0 * 1024.0)
    );
    println!("next: copy .gpu/ beside a checkout of this commit on the GPU machine, then there");
    println!("  bash .gpu/run              (every test)   or   bash .gpu/run NAME [ARGS]   (one program)");
    Ok(())
}

/// The arguments that build the quick start's crate: its manifest, the workspace's target
/// folder (the workspace's toolkit and builds of the crates are found from there) and profile.
/// Its lock file (ignored by git) starts as the workspace's, so the dependencies are the same.
fn quickstart_selection(root: &Path, options: &Options) -> Result<Vec<String>, Fail> {
    let lock = root.join(QUICKSTART).join("Cargo.lock");
    if !lock.exists() {
        let from = root.join("Cargo.lock");
        std::fs::copy(&from, &lock).map_err(|e| io_fail("copy", &from, e))?;
    }
    let mut args = vec![
        "--manifest-path".to_string(),
        format!("{QUICKSTART}/Cargo.toml"),
        "--target-dir".to_string(),
        "target".to_string(),
    ];
    if !options.dev {
        args.push("--release".to_string());
    }
    Ok(args)
}

/// Runs `cargo <command> --message-format=json-render-diagnostics <selection>` in `root` with
/// the Cargo that runs xtask, its stderr (progress, errors) going to the user, and returns the
/// programs its JSON messages name.
fn build(root: &Path, command: &[&str], selection: &[String]) -> Result<Vec<Program>, Fail> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut args: Vec<String> = command.iter().map(|arg| arg.to_string()).collect();
    args.push("--message-format=json-render-diagnostics".to_string());
    args.extend_from_slice(selection);
    let shown = format!("cargo {}", args.join(" "));
    println!("bundle: {shown}");
    let mut child = Command::new(&cargo)
        .args(&args)
        .current_dir(root)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| Fail::new(format!("cannot run {cargo}: {e}")))?;
    let stdout = child.stdout.take().ok_or_else(|| Fail::new(format!("`{shown}`: no stdout to read")))?;
    let mut programs = Vec::new();
    // The first problem is kept while the rest of the output is drained, so that Cargo
    // finishes (instead of writing into a closed pipe) and its status is known.
    let mut problem = None;
    for line in BufReader::new(stdout).lines() {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                problem.get_or_insert(Fail::new(format!("cannot read the output of `{shown}`: {e}")));
                break;
            }
        };
        match serde_json::from_str(&line) {
            Ok(message) => match program(&message, root) {
                Ok(Some(found)) => programs.push(found),
                Ok(None) => {}
                Err(fail) => {
                    problem.get_or_insert(fail);
                }
            },
            // Not one of Cargo's messages: the user's to read.
            Err(_) => println!("{line}"),
        }
    }
    let status = child.wait().map_err(|e| Fail::new(format!("cannot wait for `{shown}`: {e}")))?;
    if !status.success() {
        return Err(Fail::new(format!("`{shown}` failed ({status}); Cargo's errors are above")));
    }
    match problem {
        Some(fail) => Err(fail),
        None => Ok(programs),
    }
}

/// Each executable once (both builds name the bins and examples that tests need), tests
/// first, then bins, then examples, each by name.
fn distinct_sorted(mut programs: Vec<Program>) -> Vec<Program> {
    programs.sort_by(|a, b| (a.kind, &a.name, &a.executable).cmp(&(b.kind, &b.name, &b.executable)));
    programs.dedup_by(|a, b| a.executable == b.executable && a.kind == b.kind);
    programs
}

#[cfg(test)]
mod tests {
    use super::*;
    use artifacts::Kind;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn arguments_select_packages_and_profile() {
        let none = parse(&[]).unwrap();
        assert_eq!(none, Options { packages: vec![], dev: false });
        assert_eq!(selection(&none), args(&["--release", "--workspace"]));
        let some = parse(&args(&["-p", "tests", "--dev", "--package", "ch12", "--package=bench"])).unwrap();
        assert_eq!(some, Options { packages: args(&["tests", "ch12", "bench"]), dev: true });
        assert_eq!(selection(&some), args(&["-p", "tests", "-p", "ch12", "-p", "bench"]));
    }

    #[test]
    fn bad_arguments_are_named() {
        for (bad, named) in
            [(&["-p"][..], "-p needs"), (&["-p", "--dev"], "-p needs"), (&["--relase"], "`--relase`")]
        {
            let fail = parse(&args(bad)).unwrap_err().to_string();
            assert!(fail.contains(named) && fail.contains("usage:"), "{bad:?}: {fail}");
        }
    }

    #[test]
    fn each_executable_is_bundled_once_tests_first() {
        let p = |kind, name: &str, exe: &str| Program {
            kind,
            name: name.to_string(),
            package_dir: "pkg".to_string(),
            executable: exe.into(),
        };
        let built = vec![
            p(Kind::Example, "probe", "/t/examples/probe"),
            p(Kind::Bin, "ch12", "/t/ch12"),
            p(Kind::Test, "ch12", "/t/deps/ch12-2"),
            p(Kind::Test, "ch12", "/t/deps/ch12-1"),
            p(Kind::Bin, "ch12", "/t/ch12"),
            p(Kind::Example, "probe", "/t/examples/probe"),
        ];
        let exes: Vec<_> = distinct_sorted(built).into_iter().map(|p| p.executable).collect();
        let want = ["/t/deps/ch12-1", "/t/deps/ch12-2", "/t/ch12", "/t/examples/probe"];
        assert_eq!(exes, want.map(std::path::PathBuf::from));
    }
}
