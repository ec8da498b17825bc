//! The program as a user runs it: `ranks --spawn 2`, two processes, a GPU each; and the same
//! over NCCL's sockets alone (`NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1`), two hosts simulated.
//! Without two GPUs the all-reduce tests skip visibly (`REQUIRE_GPUS=2` makes that a failure).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The `ranks` program: `RANKS_BIN` when set; else where Cargo built it; else beside this test
/// program (`cargo xtask bundle` puts every program in one folder, this one as
/// `bin-ranks-ranks`).
fn program() -> PathBuf {
    if let Some(path) = std::env::var_os("RANKS_BIN") {
        return path.into();
    }
    let here = std::env::current_exe().unwrap();
    let beside = here.parent().map(|dir| dir.join("bin-ranks-ranks"));
    let above = here.parent().and_then(Path::parent).map(|dir| dir.join("ranks"));
    [Some(PathBuf::from(env!("CARGO_BIN_EXE_ranks"))), beside, above]
        .into_iter()
        .flatten()
        .find(|path| path.is_file())
        .unwrap_or_else(|| {
            panic!("no `ranks` program where Cargo built it or beside {}: set RANKS_BIN", here.display())
        })
}

/// Runs `ranks` with `args` and `env`, killed after `limit`: its status and output.
fn ranks(args: &[&str], env: &[(&str, &str)], limit: Duration) -> (bool, String) {
    let mut child = Command::new(program())
        .args(args)
        .envs(env.iter().copied())
        .env("CUDA_GRAPH_NCCL_BOOTSTRAP_TIMEOUT", "30")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ranks {args:?} still running after {limit:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = child.wait_with_output().unwrap();
    let text =
        String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    (status.success(), text)
}

/// True when two GPUs and NCCL are there (else a `skipped:` line, or a failure when
/// `REQUIRE_GPUS=2` / `REQUIRE_NCCL=1` says they must be).
fn ready(test: &str) -> bool {
    if !gpu_test_support::gpus_available(2, test) {
        return false;
    }
    match cuda_graph_nccl::version() {
        Ok(_) => true,
        Err(err) => {
            assert!(std::env::var("REQUIRE_NCCL").map_or(true, |v| v != "1"), "REQUIRE_NCCL=1 but {err}");
            eprintln!("skipped: {err}: {test}");
            false
        }
    }
}

#[test]
fn two_ranks_all_reduce_and_agree() {
    if !ready("two_ranks_all_reduce_and_agree") {
        return;
    }
    let (ok, out) = ranks(&["--spawn", "2", "--count", "1000003"], &[], Duration::from_secs(120));
    assert!(ok, "{out}");
    for rank in 0..2 {
        assert!(out.contains(&format!("rank {rank} of 2 on GPU {rank}")), "{out}");
    }
}

#[test]
fn two_ranks_over_sockets_only() {
    if !ready("two_ranks_over_sockets_only") {
        return;
    }
    let env = [("NCCL_P2P_DISABLE", "1"), ("NCCL_SHM_DISABLE", "1"), ("NCCL_NET", "Socket")];
    let (ok, out) = ranks(&["--spawn", "2", "--count", "1000003"], &env, Duration::from_secs(120));
    assert!(ok, "{out}");
    assert!(out.contains("2 ranks, one process each"), "{out}");
}

#[test]
fn ranks_without_a_gpu_fail_the_spawn_in_time_and_cleanly() {
    // Needs nothing: no copy sees a GPU, so each fails at once with CUDA's reason, and the
    // spawn fails naming both ranks.
    let (ok, out) =
        ranks(&["--spawn", "2", "--count", "16"], &[("CUDA_VISIBLE_DEVICES", "")], Duration::from_secs(60));
    assert!(!ok, "{out}");
    assert!(out.contains("ranks: failed: rank 0 (exit status: 1), rank 1 (exit status: 1)"), "{out}");
    assert!(!out.contains("panicked"), "{out}");
}

#[test]
fn bad_arguments_are_refused_before_any_rank_starts() {
    let (ok, out) = ranks(&["--spawn", "2", "--count", "0"], &[], Duration::from_secs(60));
    assert!(!ok, "{out}");
    assert!(out.contains("--count needs a number above 0"), "{out}");
}
