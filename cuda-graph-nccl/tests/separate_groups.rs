//! Ranks of one clique driven from a thread each, every thread launching its own `Group`
//! (SOUNDNESS.md, "NCCL ranks agree across groups and threads"). Ranks that broadcast
//! different counts this way hung NCCL on two H200; now every launch involved is `Err` at once,
//! a rank that never comes makes the others' launches `Err` after the agreement timeout, and
//! ranks that agree run as before.
//!
//! Each scenario runs in a child process (this test binary again, with the scenario named by
//! `SEPARATE_GROUPS_SCENARIO`) that the parent kills after [`BOUND`]: a hang fails the test
//! instead of hanging it, and the child's output (what each rank's launch returned, and when)
//! is printed either way. The scenarios use no API beyond what the crate had before the
//! agreement log (the timeout comes from the environment), so that they also run, and fail,
//! on the code before it. Two GPUs: they skip visibly with fewer, and fail under
//! `REQUIRE_GPUS=2`.

mod support;

use std::io::Read;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use cuda_graph::{Device, DeviceBuffer, Refusal, Stream};
use cuda_graph_nccl::{Communicator, Group, ReduceOp};
use support::nccl_ready;

/// Names the scenario a child process runs.
const SCENARIO_VAR: &str = "SEPARATE_GROUPS_SCENARIO";
/// How long a child may take before it counts as hung and is killed.
const BOUND: Duration = Duration::from_secs(60);
/// How quickly a refusal must come where no rank is missing: well below the default
/// agreement timeout (60 s), so that a pass cannot come from the timeout.
const PROMPT: Duration = Duration::from_secs(30);
/// The line a child prints once its scenario passed.
const PASSED: &str = "separate_groups scenario passed: ";
/// The agreement timeout's environment variable (`cuda_graph_nccl::AGREEMENT_TIMEOUT_VAR`,
/// spelled out so that this file builds against the crate before it).
const TIMEOUT_VAR: &str = "CUDA_GRAPH_NCCL_AGREEMENT_TIMEOUT";

/// True in the child process that is to run `test`'s scenario. In the test itself: runs
/// this binary again for `test` alone (with `env` set), kills it after [`BOUND`], fails unless
/// it passed, and returns false; also false (after a `skipped:` line) without two GPUs or
/// NCCL.
fn run_here(test: &str, env: &[(&str, Option<&str>)]) -> bool {
    if std::env::var(SCENARIO_VAR).is_ok_and(|scenario| scenario == test) {
        return true;
    }
    if !gpu_test_support::gpus_available(2, test) {
        return false;
    }
    let Some(_serial) = nccl_ready(test) else { return false };
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(SCENARIO_VAR, test)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    let started = Instant::now();
    let mut child = command.spawn().unwrap();
    let read = |mut pipe: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > BOUND {
            // Our own child, by its id.
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(100));
    };
    let output = format!("{}{}", stdout.join().unwrap(), stderr.join().unwrap());
    eprintln!(
        "--- the child process of {test} ({:.1} s) ---\n{output}--- end ---",
        started.elapsed().as_secs_f64()
    );
    let Some(status) = status else {
        panic!("{test}: the scenario hung: killed after {} s (see the child's output above)", BOUND.as_secs())
    };
    assert!(
        status.success() && output.contains(&format!("{PASSED}{test}")),
        "{test}: the scenario failed ({status}); see the child's output above"
    );
    false
}

/// Runs `body` on a thread per communicator (each thread owning its rank), and returns what
/// each returned with the communicators, which are dropped only once every thread is done.
fn per_rank<R: Send>(
    comms: Vec<Communicator>, body: &(dyn Fn(&Communicator) -> R + Sync),
) -> (Vec<R>, Vec<Communicator>) {
    thread::scope(|scope| {
        let threads: Vec<_> = comms
            .into_iter()
            .map(|comm| {
                scope.spawn(move || {
                    let result = body(&comm);
                    (result, comm)
                })
            })
            .collect();
        threads.into_iter().map(|thread| thread.join().unwrap()).unzip()
    })
}

fn two_ranks() -> Vec<Communicator> {
    Communicator::init_on(&[Device::get(0).unwrap(), Device::get(1).unwrap()]).unwrap()
}

/// What one rank's launch returned, and how long it took; printed by the child.
struct Outcome {
    rank: usize,
    launched: cuda_graph::Result<()>,
    took: Duration,
}

impl Outcome {
    fn of(comm: &Communicator, what: &str, launch: impl FnOnce() -> cuda_graph::Result<()>) -> Outcome {
        let started = Instant::now();
        let launched = launch();
        let took = started.elapsed();
        println!("rank {} ({what}): {launched:?} after {:.3} s", comm.rank(), took.as_secs_f64());
        Outcome { rank: comm.rank(), launched, took }
    }

    /// The launch's refusal, which must be of ranks out of step; its text.
    fn refusal(&self) -> String {
        match &self.launched {
            Ok(()) => panic!("rank {}'s launch returned Ok: it must be refused", self.rank),
            Err(err) => {
                assert!(matches!(err.refusal(), Some(Refusal::RanksOutOfStep { .. })), "{err}");
                err.to_string()
            }
        }
    }
}

/// A broadcast from rank 0 of `count` elements on `comm`'s own stream, in a group of its own;
/// waits for it when the launch returned Ok (a hang there is NCCL's, on the old code).
fn broadcast(comm: &Communicator, count: usize) -> Outcome {
    let stream = Stream::new_on(comm.device()).unwrap();
    let mut data =
        DeviceBuffer::from_slice_on(comm.device(), &vec![comm.rank() as f32 + 1.0; count]).unwrap();
    let outcome = Outcome::of(comm, &format!("broadcast of {count} f32 from root 0, its own group"), || {
        let mut group = Group::new();
        group.broadcast_in_place(comm, &mut data, 0, &stream)?;
        group.launch()
    });
    if outcome.launched.is_ok() {
        println!("rank {}: waiting for the broadcast", comm.rank());
        stream.synchronize().unwrap();
    }
    outcome
}

/// An all-reduce of 16 f32 in a group of its own, on a fresh stream.
fn all_reduce(comm: &Communicator) -> Outcome {
    let stream = Stream::new_on(comm.device()).unwrap();
    let mut data = DeviceBuffer::<f32>::zeroed_on(comm.device(), 16).unwrap();
    let outcome = Outcome::of(comm, "all-reduce of 16 f32, its own group", || {
        let mut group = Group::new();
        group.all_reduce_in_place(comm, &mut data, ReduceOp::Sum, &stream)?;
        group.launch()
    });
    if outcome.launched.is_ok() {
        stream.synchronize().unwrap();
    }
    outcome
}

#[test]
fn ranks_in_separate_groups_that_disagree_get_err_instead_of_a_hang() {
    const TEST: &str = "ranks_in_separate_groups_that_disagree_get_err_instead_of_a_hang";
    if !run_here(TEST, &[(TIMEOUT_VAR, None)]) {
        return;
    }
    let Some(_serial) = nccl_ready(TEST) else { return };
    let (outcomes, comms) = per_rank(two_ranks(), &|comm| {
        let count = if comm.rank() == 0 { 1024 } else { 2048 };
        let first = broadcast(comm, count);
        // The clique is out of step now: a later collective, even a matching one, is refused
        // at once.
        let later = all_reduce(comm);
        (first, later)
    });
    for (first, later) in &outcomes {
        let text = first.refusal();
        assert!(text.contains("ranks 0 and 1 of one clique issue different collectives"), "{text}");
        assert!(text.contains("broadcast of 1024 f32 from root 0 on rank 0"), "{text}");
        assert!(text.contains("broadcast of 2048 f32 from root 0 on rank 1"), "{text}");
        assert!(text.contains("0 of this group's 1 collectives reached NCCL"), "{text}");
        assert!(first.took < PROMPT, "rank {}: refused only after {:?}", first.rank, first.took);
        let text = later.refusal();
        assert!(text.contains("refuses every later collective"), "{text}");
        assert!(
            later.took < Duration::from_secs(1),
            "a poisoned clique refuses at once, not {:?}",
            later.took
        );
    }
    drop(comms);
    assert!(cuda_graph::take_unreported_errors().is_empty());
    println!("{PASSED}{TEST}");
}

#[test]
fn a_rank_that_never_launches_makes_the_others_launch_time_out() {
    const TEST: &str = "a_rank_that_never_launches_makes_the_others_launch_time_out";
    if !run_here(TEST, &[(TIMEOUT_VAR, Some("2"))]) {
        return;
    }
    let Some(_serial) = nccl_ready(TEST) else { return };
    let mut comms = two_ranks();
    let idle = comms.pop().unwrap();
    // Rank 1 stays on this thread and launches nothing until rank 0's launch has returned.
    let (outcomes, early) = per_rank(comms, &|comm| broadcast(comm, 4096));
    let text = outcomes[0].refusal();
    assert!(text.contains("rank 1 of the clique did not issue collective #0"), "{text}");
    assert!(text.contains("within the agreement timeout of 2s"), "{text}");
    assert!(text.contains("rank 0 issued broadcast of 4096 f32 from root 0"), "{text}");
    assert!(text.contains("waited 2."), "{text}");
    let took = outcomes[0].took;
    assert!(took >= Duration::from_secs(2) && took < PROMPT, "rank 0 waited {took:?}");
    // Too late: rank 1's matching broadcast is refused at once, saying why.
    let late = broadcast(&idle, 4096);
    let text = late.refusal();
    assert!(
        text.contains("refuses every later collective") && text.contains("did not issue collective #0"),
        "{text}"
    );
    assert!(late.took < Duration::from_secs(1), "{:?}", late.took);
    drop((early, idle));
    assert!(cuda_graph::take_unreported_errors().is_empty());
    println!("{PASSED}{TEST}");
}

#[test]
fn ranks_in_separate_groups_that_agree_run_their_collectives() {
    const TEST: &str = "ranks_in_separate_groups_that_agree_run_their_collectives";
    if !run_here(TEST, &[(TIMEOUT_VAR, None)]) {
        return;
    }
    let Some(_serial) = nccl_ready(TEST) else { return };
    let count = 4099;
    let (results, comms) = per_rank(two_ranks(), &|comm| {
        let stream = Stream::new_on(comm.device()).unwrap();
        let mut shared =
            DeviceBuffer::from_slice_on(comm.device(), &vec![comm.rank() as u32 * 7 + 1; count]).unwrap();
        let mut sums =
            DeviceBuffer::from_slice_on(comm.device(), &vec![comm.rank() as f64 + 0.5; count]).unwrap();
        for round in 0..3 {
            let broadcast = Outcome::of(comm, &format!("round {round}: broadcast from root 1"), || {
                let mut group = Group::new();
                group.broadcast_in_place(comm, &mut shared, 1, &stream)?;
                group.launch()
            });
            broadcast.launched.unwrap();
            let reduce = Outcome::of(comm, &format!("round {round}: all-reduce"), || {
                let mut group = Group::new();
                group.all_reduce_in_place(comm, &mut sums, ReduceOp::Sum, &stream)?;
                group.launch()
            });
            reduce.launched.unwrap();
        }
        stream.synchronize().unwrap();
        (shared.to_vec().unwrap(), sums.to_vec().unwrap())
    });
    // Each round doubles the sum of the ranks' values (0.5 + 1.5 = 2 after the first).
    for (shared, sums) in &results {
        assert_eq!(shared, &vec![8u32; count]);
        assert_eq!(sums, &vec![8.0; count]);
    }
    drop(comms);
    assert!(cuda_graph::take_unreported_errors().is_empty());
    println!("{PASSED}{TEST}");
}

#[test]
fn ranks_that_group_the_same_collectives_differently_agree() {
    const TEST: &str = "ranks_that_group_the_same_collectives_differently_agree";
    if !run_here(TEST, &[(TIMEOUT_VAR, None)]) {
        return;
    }
    let Some(_serial) = nccl_ready(TEST) else { return };
    let count = 1024;
    // Rank 0 launches both all-reduces in one group; rank 1 one group each. Only the order
    // is compared, and it is the same.
    let (results, comms) = per_rank(two_ranks(), &|comm| {
        let stream = Stream::new_on(comm.device()).unwrap();
        let mut a = DeviceBuffer::from_slice_on(comm.device(), &vec![comm.rank() as i64 + 1; count]).unwrap();
        let mut b =
            DeviceBuffer::from_slice_on(comm.device(), &vec![10 * (comm.rank() as i64 + 1); 2 * count])
                .unwrap();
        if comm.rank() == 0 {
            Outcome::of(comm, "two all-reduces in one group", || {
                let mut group = Group::new();
                group.all_reduce_in_place(comm, &mut a, ReduceOp::Sum, &stream)?;
                group.all_reduce_in_place(comm, &mut b, ReduceOp::Max, &stream)?;
                group.launch()
            })
            .launched
            .unwrap();
        } else {
            for (what, data, op) in [("first", &mut a, ReduceOp::Sum), ("second", &mut b, ReduceOp::Max)] {
                Outcome::of(comm, &format!("the {what} all-reduce, its own group"), || {
                    let mut group = Group::new();
                    group.all_reduce_in_place(comm, data, op, &stream)?;
                    group.launch()
                })
                .launched
                .unwrap();
            }
        }
        stream.synchronize().unwrap();
        (a.to_vec().unwrap(), b.to_vec().unwrap())
    });
    for (a, b) in &results {
        assert_eq!(a, &vec![3i64; count]);
        assert_eq!(b, &vec![20i64; 2 * count]);
    }
    drop(comms);
    println!("{PASSED}{TEST}");
}
