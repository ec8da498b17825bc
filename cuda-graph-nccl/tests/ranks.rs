//! Ranks in separate processes: each test starts its ranks as copies of this test binary
//! (the `rank_process` test, its role chosen by `RANKS_CHILD`), each reading its rank from
//! torchrun's variables (`LOCAL_RANK` picks its GPU), and kills every copy still running when
//! its deadline passes: a test fails loudly, it never hangs. Two GPUs are needed for the
//! all-reduce (`skipped: needs 2 CUDA devices`, a failure under `REQUIRE_GPUS=2`); no NCCL
//! skips (a failure under `REQUIRE_NCCL=1`).

mod processes;
mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cuda_graph::{CudaError, DeviceBuffer, Refusal, Stream};
use cuda_graph_nccl::bootstrap::Launch;
use cuda_graph_nccl::{Communicator, Group, ReduceOp};
use processes::{free_port, rank_command, Rank};
use support::nccl_ready;

/// Set in a copy of this binary that plays one rank: `all-reduce`, or `no-init` (meets the
/// others, then exits without initializing NCCL).
const CHILD: &str = "RANKS_CHILD";
/// Elements all-reduced: more than one NCCL chunk, not a multiple of one.
const COUNT: usize = 1 << 20 | 37;

/// One rank, in a copy of this binary; prints `result ok` or `result error <text>`. Does
/// nothing in the parent.
#[test]
fn rank_process() {
    let Ok(role) = std::env::var(CHILD) else { return };
    let result = match role.as_str() {
        "all-reduce" => all_reduce_rank(),
        "no-init" => Launch::from_env()
            .and_then(|launch| launch.rendezvous().join().map(drop))
            .map_err(|err| err.to_string()),
        other => Err(format!("unknown role {other}")),
    };
    match result {
        Ok(()) => println!("\nresult ok"),
        Err(err) => println!("\nresult error {err}"),
    }
}

/// Rank `r` all-reduces `r + 1` in every element and checks the sum over the world.
fn all_reduce_rank() -> Result<(), String> {
    let start = Instant::now();
    let comm = Communicator::from_env().map_err(|err| err.to_string())?;
    let run = || -> Result<(), Box<dyn std::error::Error>> {
        assert!(comm.spans_processes());
        let stream = Stream::new_on(comm.device())?;
        let mut data = DeviceBuffer::from_slice_on(comm.device(), &vec![comm.rank() as f64 + 1.0; COUNT])?;
        // The checked launch cannot compare this rank with its peers: refused, nothing queued.
        let mut refused = Group::new();
        refused.all_reduce_in_place(&comm, &mut data, ReduceOp::Sum, &stream)?;
        match refused.launch() {
            Err(CudaError::InvalidArgument {
                reason: Refusal::RanksOutOfStep { why, queued: None }, ..
            }) if why.contains("launch_unchecked") => {}
            other => {
                return Err(format!("Group::launch of a rank of another process's world: {other:?}").into())
            }
        }
        let mut group = Group::new();
        group.all_reduce_in_place(&comm, &mut data, ReduceOp::Sum, &stream)?;
        // SAFETY: every rank of this test runs this function: one all-reduce (sum) of COUNT f64.
        unsafe { group.launch_unchecked()? };
        stream.synchronize()?;
        let n = comm.size() as f64;
        let want = n * (n + 1.0) / 2.0;
        let got = data.to_vec()?;
        if let Some(i) = got.iter().position(|&x| x != want) {
            return Err(format!("rank {}: element {i} is {}, not {want}", comm.rank(), got[i]).into());
        }
        Ok(())
    };
    run().map_err(|err| format!("{err} [after {:.1} s]", start.elapsed().as_secs_f64()))
}

/// Starts rank `rank` of `world` in role `role`, with `extra` variables set.
fn start(role: &str, rank: usize, world: usize, port: u16, timeout_s: f64, extra: &[(&str, &str)]) -> Rank {
    let mut command = rank_command(CHILD, role, rank, world, rank, port, timeout_s);
    command.stderr(Stdio::inherit());
    for (name, value) in extra {
        command.env(name, value);
    }
    Rank { rank, child: command.spawn().unwrap() }
}

/// Waits for every rank up to `limit`: each one's result line (`result ok` or `result error …`).
fn finish(ranks: Vec<Rank>, limit: Duration) -> Vec<(usize, String, Duration)> {
    processes::finish(ranks, limit, &["result "])
}

/// Two processes, a GPU each, all-reduce and check the sum; `extra` variables for both.
fn two_process_all_reduce(test: &str, extra: &[(&str, &str)]) {
    let Some(_serial) = nccl_ready(test) else { return };
    if !gpu_test_support::gpus_available(2, test) {
        return;
    }
    let port = free_port();
    let ranks =
        vec![start("all-reduce", 0, 2, port, 60.0, extra), start("all-reduce", 1, 2, port, 60.0, extra)];
    for (rank, line, _) in finish(ranks, Duration::from_secs(150)) {
        assert_eq!(line, "result ok", "rank {rank}");
    }
}

#[test]
fn two_processes_all_reduce_across_their_gpus() {
    two_process_all_reduce("two_processes_all_reduce_across_their_gpus", &[]);
}

/// Two hosts, simulated: NCCL may not use peer-to-peer or shared memory, so its network
/// transport (sockets) carries the all-reduce.
#[test]
fn two_processes_all_reduce_over_sockets_only() {
    two_process_all_reduce(
        "two_processes_all_reduce_over_sockets_only",
        &[("NCCL_P2P_DISABLE", "1"), ("NCCL_SHM_DISABLE", "1"), ("NCCL_NET", "Socket")],
    );
}

/// Rank 1 meets rank 0 but never initializes NCCL: rank 0's nonblocking initialization
/// times out, is aborted, and says so (one GPU is enough: rank 1 uses none).
#[test]
fn a_rank_that_never_initializes_makes_the_other_time_out() {
    let Some(_serial) = nccl_ready("a_rank_that_never_initializes_makes_the_other_time_out") else { return };
    let port = free_port();
    let ranks = vec![start("all-reduce", 0, 2, port, 5.0, &[]), start("no-init", 1, 2, port, 5.0, &[])];
    let results = finish(ranks, Duration::from_secs(90));
    let (_, line, took) = &results[0];
    assert!(line.starts_with("result error ncclCommInitRankConfig: rank 0 of 2 waited"), "{line}");
    assert!(line.contains("aborted"), "{line}");
    assert!(*took < Duration::from_secs(60), "rank 0 took {took:?} for a 5 s timeout");
    assert_eq!(results[1].1, "result ok", "rank 1 met rank 0");
}

#[test]
fn a_world_of_one_without_a_launcher_is_checked_as_before() {
    let Some(_serial) = nccl_ready("a_world_of_one_without_a_launcher_is_checked_as_before") else { return };
    if std::env::var_os("RANK").is_some() || std::env::var_os(CHILD).is_some() {
        return; // run under a launcher: not this test's world
    }
    let comm = Communicator::from_env().unwrap();
    assert_eq!((comm.rank(), comm.size(), comm.spans_processes()), (0, 1, false));
    let stream = Stream::new_on(comm.device()).unwrap();
    let mut data = DeviceBuffer::from_slice_on(comm.device(), &[2.5f32; 64]).unwrap();
    let mut unchecked = Group::new();
    unchecked.all_reduce_in_place(&comm, &mut data, ReduceOp::Sum, &stream).unwrap();
    // SAFETY: refused before NCCL sees it (a rank of a one-process world), as asserted.
    let err = unsafe { unchecked.launch_unchecked() }.unwrap_err();
    assert!(
        matches!(&err, CudaError::InvalidArgument { reason: Refusal::RanksOutOfStep { .. }, .. }),
        "{err}"
    );
    let mut group = Group::new();
    group.all_reduce_in_place(&comm, &mut data, ReduceOp::Sum, &stream).unwrap();
    group.launch().unwrap();
    stream.synchronize().unwrap();
    assert_eq!(data.to_vec().unwrap(), vec![2.5f32; 64]);
}

#[test]
fn bad_launch_variables_are_a_bootstrap_error() {
    // Pure Rust: needs no GPU. A copy of this binary with a rank beyond its world.
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "rank_process", "--nocapture", "--test-threads=1"])
        .env(CHILD, "all-reduce")
        .env("RANK", "2")
        .env("WORLD_SIZE", "2")
        .env("LOCAL_RANK", "0")
        .env("MASTER_ADDR", "127.0.0.1")
        .env("MASTER_PORT", "29500")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let results = finish(vec![Rank { rank: 2, child: command.spawn().unwrap() }], Duration::from_secs(60));
    let line = &results[0].1;
    // Without NCCL or a GPU the bootstrap is still read first.
    assert_eq!(line, "result error bootstrap: RANK 2 is not below the world size 2");
}
