//! What the tests that start ranks as processes share: a free port, a rank's command line (the
//! test binary itself, running its `rank_process` test in a role), a rank killed when dropped,
//! and waiting for all of them with a limit (never hangs).

use std::io::Read;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cuda_graph_nccl::bootstrap::BOOTSTRAP_TIMEOUT_VAR;

/// A port that was free a moment ago, on the loopback interface.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A running rank, killed when dropped (a test that fails never leaves one behind).
pub struct Rank {
    pub rank: usize,
    pub child: Child,
}

impl Drop for Rank {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// This test binary running its `rank_process` test as rank `rank` of `world` (torchrun's
/// variables, rank 0 at 127.0.0.1:`port`), with `child_var` set to `role`; stdout piped.
pub fn rank_command(
    child_var: &str, role: &str, rank: usize, world: usize, local_rank: usize, port: u16, timeout_s: f64,
) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "rank_process", "--nocapture", "--test-threads=1"])
        .env(child_var, role)
        .env("RANK", rank.to_string())
        .env("WORLD_SIZE", world.to_string())
        .env("LOCAL_RANK", local_rank.to_string())
        .env("MASTER_ADDR", "127.0.0.1")
        .env("MASTER_PORT", port.to_string())
        .env(BOOTSTRAP_TIMEOUT_VAR, timeout_s.to_string())
        .stdout(Stdio::piped());
    command
}

/// Waits for every rank up to `limit` (killing all and failing past it): each one's first
/// output line that starts with one of `results`, and when it ended.
pub fn finish(ranks: Vec<Rank>, limit: Duration, results: &[&str]) -> Vec<(usize, String, Duration)> {
    let start = Instant::now();
    let mut lines = Vec::new();
    for mut rank in ranks {
        while rank.child.try_wait().unwrap().is_none() {
            assert!(
                start.elapsed() < limit,
                "rank {} still running after {limit:?}: hangs (every rank killed)",
                rank.rank
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut out = String::new();
        rank.child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
        let line = out
            .lines()
            .find(|line| results.iter().any(|prefix| line.starts_with(prefix)))
            .unwrap_or_else(|| panic!("rank {} printed no result: {out}", rank.rank))
            .to_owned();
        lines.push((rank.rank, line, start.elapsed()));
    }
    lines
}
