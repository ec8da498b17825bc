//! `ranks [--count N]`: one rank of a world whose processes a launcher started
//! (`torchrun --nproc-per-node 2 ranks`, `mpirun -np 2 ranks`, `srun -n 2 ranks`, with
//! `MASTER_ADDR` and `MASTER_PORT` set): it finds the others (the environment and the TCP
//! rendezvous of `cuda_graph_nccl::bootstrap`), all-reduces `N` elements, rank `r`
//! contributing `r + 1` in each, and checks the sum on the host. Without a launcher it is a
//! world of one.
//!
//! `ranks --spawn N [--count N]`: starts `N` copies of itself as ranks 0..N on this host
//! (`MASTER_ADDR=127.0.0.1`, a free port unless `MASTER_PORT` is set), for machines without
//! `torchrun`, and fails when any of them fails or when they are not done within
//! `CUDA_GRAPH_NCCL_BOOTSTRAP_TIMEOUT` (120 s unset) plus a minute: every copy is then killed.
//!
//! Exits non-zero when a check fails.

use std::net::TcpListener;
use std::process::{Child, Command, ExitCode};
use std::time::{Duration, Instant};

use cuda_graph::{DeviceBuffer, Stream};
use cuda_graph_nccl::bootstrap::DEFAULT_BOOTSTRAP_TIMEOUT;
use cuda_graph_nccl::{Communicator, Group, ReduceOp};

const USAGE: &str = "usage: ranks [--spawn N] [--count ELEMENTS]";

fn main() -> ExitCode {
    // Before NCCL reads the environment (and inherited by the copies --spawn starts).
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
    }
    let (spawn, count) = match parse(std::env::args().skip(1)) {
        Ok(parsed) => parsed,
        Err(why) => {
            eprintln!("{why}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = match spawn {
        Some(world) => spawn_world(world, count),
        None => rank(count),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("ranks: {err}");
            ExitCode::FAILURE
        }
    }
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<(Option<usize>, usize), String> {
    let (mut spawn, mut count) = (None, 1 << 24);
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            args.next()
                .and_then(|v| v.parse().ok())
                .filter(|&n| n > 0)
                .ok_or(format!("{name} needs a number above 0"))
        };
        match arg.as_str() {
            "--spawn" => spawn = Some(number("--spawn")?),
            "--count" => count = number("--count")?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok((spawn, count))
}

/// This process's rank: join the world, all-reduce, check.
fn rank(count: usize) -> Result<(), Box<dyn std::error::Error>> {
    let start = Instant::now();
    let comm = Communicator::from_env()?;
    let joined = start.elapsed();
    let (rank, size) = (comm.rank(), comm.size());
    let stream = Stream::new_on(comm.device())?;
    let mut data = DeviceBuffer::from_slice_on(comm.device(), &vec![rank as f32 + 1.0; count])?;
    let mut group = Group::new();
    group.all_reduce_in_place(&comm, &mut data, ReduceOp::Sum, &stream)?;
    let reduce = Instant::now();
    if comm.spans_processes() {
        // SAFETY: every rank runs this function with the same `--count` (the launcher gives
        // every copy the same arguments), so each queues one all-reduce (sum) of `count` f32.
        unsafe { group.launch_unchecked()? };
    } else {
        group.launch()?;
    }
    stream.synchronize()?;
    let took = reduce.elapsed();
    let want = (size * (size + 1) / 2) as f32;
    let got = data.to_vec()?;
    if let Some(i) = got.iter().position(|&x| x != want) {
        return Err(format!("rank {rank}: element {i} is {}, not {want}", got[i]).into());
    }
    println!(
        "rank {rank} of {size} on GPU {}: joined in {:.2} s; all-reduce of {count} f32 = {want} everywhere, {:.2} ms",
        comm.device().ordinal(),
        joined.as_secs_f64(),
        took.as_secs_f64() * 1e3
    );
    Ok(())
}

/// A started copy, killed when dropped (no copy outlives a failure).
struct Copy(Child);

impl Drop for Copy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `world` copies of this program as ranks 0..world on this host and waits for them.
fn spawn_world(world: usize, count: usize) -> Result<(), Box<dyn std::error::Error>> {
    let port = match std::env::var("MASTER_PORT") {
        Ok(port) => port,
        Err(_) => TcpListener::bind("127.0.0.1:0")?.local_addr()?.port().to_string(),
    };
    let timeout = std::env::var(cuda_graph_nccl::bootstrap::BOOTSTRAP_TIMEOUT_VAR)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(DEFAULT_BOOTSTRAP_TIMEOUT, Duration::from_secs_f64);
    let limit = timeout + Duration::from_secs(60);
    let exe = std::env::current_exe()?;
    let mut copies = Vec::new();
    for rank in 0..world {
        let child = Command::new(&exe)
            .args(["--count", &count.to_string()])
            .env("RANK", rank.to_string())
            .env("WORLD_SIZE", world.to_string())
            .env("LOCAL_RANK", rank.to_string())
            .env("MASTER_ADDR", "127.0.0.1")
            .env("MASTER_PORT", &port)
            .spawn()?;
        copies.push((rank, Copy(child)));
    }
    let start = Instant::now();
    let mut failed = Vec::new();
    for (rank, copy) in &mut copies {
        loop {
            if let Some(status) = copy.0.try_wait()? {
                if !status.success() {
                    failed.push(format!("rank {rank} ({status})"));
                }
                break;
            }
            if start.elapsed() > limit {
                return Err(format!("rank {rank} still running after {limit:?}: every copy killed").into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    if failed.is_empty() {
        println!("{world} ranks, one process each: all-reduce checked on every rank");
        Ok(())
    } else {
        Err(format!("failed: {}", failed.join(", ")).into())
    }
}
