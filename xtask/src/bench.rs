//! `cargo xtask bench [args]`: the benchmarks (bench/), the Rust path against the C++ twin.

use std::process::Command;

use crate::workspace::{ensure_toolkit, root};
use crate::Fail;

/// Installs the toolkit when none is found, then runs
/// `cargo run --release -p cuda-graph-bench -- [args]` from the workspace root.
pub fn run(args: &[String]) -> Result<(), Fail> {
    ensure_toolkit()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut command = Command::new(&cargo);
    command.args(["run", "--release", "-p", "cuda-graph-bench", "--"]).args(args).current_dir(root());
    crate::nccl::child_env(&mut command);
    let status = command.status().map_err(|err| Fail::new(format!("cannot run {cargo}: {err}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(Fail::new(format!("the benchmark failed ({status})")))
    }
}
