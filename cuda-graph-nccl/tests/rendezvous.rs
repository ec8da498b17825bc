//! The TCP rendezvous between processes (no GPU, no NCCL): each test starts its ranks as
//! copies of this test binary (the `rank_process` test, selected by `RENDEZVOUS_CHILD`), each
//! reading its rank from torchrun's variables, and kills every copy still running when its
//! deadline passes: a test fails loudly, it never hangs.

mod processes;

use std::process::Stdio;
use std::time::{Duration, Instant};

use cuda_graph_nccl::bootstrap::Launch;
use processes::{free_port, rank_command, Rank};

/// Set in a copy of this binary that plays one rank.
const CHILD: &str = "RENDEZVOUS_CHILD";

/// One rank, in a copy of this binary: meets the others and prints `payload <hex>` or
/// `error <text>` on a line of its own. Does nothing in the parent.
#[test]
fn rank_process() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let result = Launch::from_env().map_err(|e| e.to_string()).and_then(|launch| {
        let start = Instant::now();
        let shared = launch.rendezvous().share(|| (0..128u8).map(|i| i ^ 0x5a).collect());
        let elapsed = start.elapsed().as_secs_f64();
        shared.map_err(|e| format!("{e} [after {elapsed:.2} s]"))
    });
    match result {
        Ok(bytes) => println!("\npayload {}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()),
        Err(err) => println!("\nerror {err}"),
    }
}

/// Starts rank `rank` of `world` (told `told_world`) meeting at 127.0.0.1:`port`.
fn start(rank: usize, told_world: usize, port: u16, timeout_s: f64) -> Rank {
    let mut command = rank_command(CHILD, "1", rank, told_world, 0, port, timeout_s);
    Rank { rank, child: command.stderr(Stdio::null()).spawn().unwrap() }
}

/// Waits for every rank up to `limit`: each one's result line (`payload …` or `error …`).
fn finish(ranks: Vec<Rank>, limit: Duration) -> Vec<(usize, String, Duration)> {
    processes::finish(ranks, limit, &["payload ", "error "])
}

#[test]
fn a_world_of_three_all_get_rank_zeros_payload() {
    let port = free_port();
    // The others first: they retry until rank 0 listens.
    let ranks = vec![start(2, 3, port, 30.0), start(1, 3, port, 30.0), start(0, 3, port, 30.0)];
    let expected: String = (0..128u8).map(|i| format!("{:02x}", i ^ 0x5a)).collect();
    for (rank, line, _) in finish(ranks, Duration::from_secs(60)) {
        assert_eq!(line, format!("payload {expected}"), "rank {rank}");
    }
}

#[test]
fn a_missing_rank_makes_rank_zero_fail_in_time_naming_it() {
    let port = free_port();
    let ranks = vec![start(0, 3, port, 2.0), start(1, 3, port, 2.0)];
    let results = finish(ranks, Duration::from_secs(30));
    let (_, line, took) = &results[0];
    assert!(line.starts_with("error rank 0 waited"), "{line}");
    assert!(line.contains("rank(s) 2 of 3 never came"), "{line}");
    assert!(*took < Duration::from_secs(15), "rank 0 took {took:?} for a 2 s timeout");
    // Rank 1, there in time, hears why from rank 0 rather than waiting out its own timeout.
    let (_, line, _) = &results[1];
    assert!(line.starts_with("error rank 0 at 127.0.0.1:") && line.contains("never came"), "{line}");
}

#[test]
fn without_rank_zero_the_others_fail_in_time_naming_the_address() {
    let port = free_port();
    let ranks = vec![start(1, 3, port, 1.5), start(2, 3, port, 1.5)];
    for (rank, line, took) in finish(ranks, Duration::from_secs(30)) {
        assert!(
            line.starts_with(&format!("error could not reach rank 0 at 127.0.0.1:{port} in ")),
            "rank {rank}: {line}"
        );
        assert!(took < Duration::from_secs(15), "rank {rank} took {took:?} for a 1.5 s timeout");
    }
}

#[test]
fn a_rank_told_another_world_size_is_named_by_rank_zero() {
    let port = free_port();
    let ranks = vec![start(0, 2, port, 20.0), start(1, 3, port, 20.0)];
    let results = finish(ranks, Duration::from_secs(40));
    assert!(
        results[0].1.starts_with("error rank 1 was told the world has 3 ranks, rank 0 was told 2 [after"),
        "{}",
        results[0].1
    );
    assert!(
        results[1].1.starts_with("error rank 0 at") && results[1].1.contains("refused"),
        "{}",
        results[1].1
    );
}

#[test]
fn two_processes_with_one_rank_are_refused() {
    let port = free_port();
    let ranks = vec![start(0, 3, port, 20.0), start(1, 3, port, 20.0), start(1, 3, port, 20.0)];
    let results = finish(ranks, Duration::from_secs(40));
    assert!(results[0].1.starts_with("error rank 1 said hello twice"), "{}", results[0].1);
}
