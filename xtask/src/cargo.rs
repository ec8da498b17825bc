//! Tasks that run Cargo once the toolkit is in place: `test`, `ch12` and `bench`.

use std::process::Command;

use crate::setup_cuda::ensure_toolkit;
use crate::workspace::root;
use crate::{bindings, Fail};

/// The downstream user's crate: outside the workspace, with its own lock file.
const DOWNSTREAM_MANIFEST: &str = "tests/downstream/Cargo.toml";

/// `cargo xtask test [args]`: bindings check, `cargo test --workspace [args]`, then the tests
/// of the downstream crate (which uses the crates as a user would).
pub fn test(args: &[String]) -> Result<(), Fail> {
    ensure_toolkit()?;
    bindings::run(&["--check".to_string()])?;
    cargo(&["test", "--workspace"], args)?;
    cargo(&["test", "--manifest-path", DOWNSTREAM_MANIFEST], &[])
}

/// `cargo xtask ch12 [args]`: builds and runs the chapter runner in release mode.
pub fn ch12(args: &[String]) -> Result<(), Fail> {
    ensure_toolkit()?;
    cargo(&["run", "--release", "--package", "ch12", "--"], args)
}

/// `cargo xtask bench [args]`: the benchmarks (bench/), the Rust path against the C++ twin,
/// as `cargo run --release -p cuda-graph-bench -- [args]`.
pub fn bench(args: &[String]) -> Result<(), Fail> {
    ensure_toolkit()?;
    cargo(&["run", "--release", "-p", "cuda-graph-bench", "--"], args)
}

/// Runs `cargo <fixed> <extra>` from the workspace root, with the Cargo that runs xtask.
fn cargo(fixed: &[&str], extra: &[String]) -> Result<(), Fail> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut command = Command::new(&cargo);
    command.args(fixed).args(extra).current_dir(root());
    crate::nccl::child_env(&mut command);
    let status = command.status().map_err(|err| Fail::new(format!("cannot run {cargo}: {err}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(Fail::new(format!("`cargo {}` failed ({status})", fixed.join(" "))))
    }
}
