//! `cargo xtask <task>`: the project's tasks, in Rust so they run wherever Cargo does.
//!
//! This crate installs the CUDA toolkit, so it builds without one: it depends on no crate
//! that compiles kernels, and runs those through `cargo` once the toolkit is in place.

mod bindings;
mod bundle;
mod cargo;
mod libclang;
mod nccl;
mod panics;
mod setup_cuda;
mod wheels;
mod workspace;

use std::fmt;
use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <task> [args]

tasks:
  setup-cuda [--nccl]  install what is missing from PyPI wheels (idempotent): the CUDA 13.0
                   toolkit into .cuda/, libclang for the bindings check into .libclang/;
                   with --nccl also NCCL (nvidia-nccl-cu13) into .nccl/ for cuda-graph-nccl
  ch12 [args]      build and run every chapter program, then print the summary table
  bench [args]     Rust path vs the C++ twin on the GPU: table, CSV, PNG (`bench --help`)
  test [args]      check the bindings, then run every test (`cargo test --workspace [args]`)
  bindgen [--check]  regenerate cudart-graph-sys's bindings (or check they are current)
  bundle [-p PACKAGE]... [--dev]  build every test, bin and example (release unless --dev) into
                   .gpu/bundle.tar.xz for a GPU machine without Rust: `bash .gpu/run` there

ch12, test, bench and bundle install the toolkit first when none is found; test and bindgen
install libclang first when none is found (LIBCLANG_PATH, the system's, .libclang/).
test and bench put .nccl/lib first on LD_LIBRARY_PATH when it is installed, and run with
NCCL_NVLS_ENABLE=0 (NVLink multicast off) unless it is set.";

/// Why a task failed: printed once, then the process exits non-zero.
#[derive(Debug)]
pub struct Fail(String);

impl Fail {
    pub fn new(message: impl Into<String>) -> Fail {
        Fail(message.into())
    }
    pub fn usage(usage: &str) -> Fail {
        Fail(format!("usage: {usage}"))
    }
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn main() -> ExitCode {
    panics::report_as_one_line();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((task, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let result = match task.as_str() {
        "setup-cuda" => setup_cuda::run(rest),
        "bindgen" => bindings::run(rest),
        "test" => cargo::test(rest),
        "ch12" => cargo::ch12(rest),
        "bench" => cargo::bench(rest),
        "bundle" => bundle::run(rest),
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(Fail::new(format!("unknown task `{other}`\n{USAGE}"))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(fail) => {
            eprintln!("xtask {task}: {fail}");
            ExitCode::FAILURE
        }
    }
}
