//! What the NCCL tests share: skip visibly without a GPU or without NCCL (fail under
//! `REQUIRE_NCCL=1`), NVLink multicast off, and one test at a time (collectives of two tests'
//! communicators on the same GPUs could wait for each other).

use std::io::Write;
use std::sync::{Mutex, MutexGuard, Once, PoisonError};

/// Turns NCCL's NVLink multicast off (`NCCL_NVLS_ENABLE=0`) unless the environment already
/// says, before any NCCL call of this process (every test calls this first).
fn nvls_off() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            std::env::set_var("NCCL_NVLS_ENABLE", "0");
        }
    });
}

/// Turns off NCCL's support for graph and eager collectives outstanding at once
/// (`NCCL_GRAPH_MIXING_SUPPORT=0`) unless the environment already says, before any NCCL call
/// of this process: with it on, NCCL 2.28 records an event wait node into each captured
/// collective, which CUDA refuses inside a conditional node's body.
#[allow(dead_code)] // used by some of the test binaries sharing this module
pub fn graph_mixing_off() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("NCCL_GRAPH_MIXING_SUPPORT").is_none() {
            std::env::set_var("NCCL_GRAPH_MIXING_SUPPORT", "0");
        }
    });
}

/// The lock that keeps this binary's NCCL tests one at a time, when a GPU and NCCL are
/// there; `None` (after a `skipped:` line) otherwise. `REQUIRE_NCCL=1` makes a missing NCCL
/// fail instead.
pub fn nccl_ready(test: &str) -> Option<MutexGuard<'static, ()>> {
    static SERIAL: Mutex<()> = Mutex::new(());
    if !gpu_test_support::gpu_available(test) {
        return None;
    }
    nvls_off();
    match cuda_graph_nccl::version() {
        Ok(_) => Some(SERIAL.lock().unwrap_or_else(PoisonError::into_inner)),
        Err(err) if std::env::var("REQUIRE_NCCL").is_ok_and(|v| v == "1") => {
            panic!("REQUIRE_NCCL=1 but {err}; {test} cannot pass by skipping")
        }
        Err(err) => {
            let _ = std::io::stderr().write_all(format!("skipped: {err}: {test}\n").as_bytes());
            None
        }
    }
}

/// One stream per communicator, on its device.
#[allow(dead_code)] // used by some of the test binaries sharing this module
pub fn streams_for(comms: &[cuda_graph_nccl::Communicator]) -> Vec<cuda_graph::Stream> {
    comms.iter().map(|comm| cuda_graph::Stream::new_on(comm.device()).unwrap()).collect()
}

/// Waits for every stream.
#[allow(dead_code)] // used by some of the test binaries sharing this module
pub fn sync_all(streams: &[cuda_graph::Stream]) {
    for stream in streams {
        stream.synchronize().unwrap();
    }
}

/// Says so when `comms` has one rank: the test then runs, but its collectives are trivially
/// right (a sum over one rank is the input), so it prints `skipped: … needs 2 CUDA devices …`
/// for the cross-rank part, and fails instead under `REQUIRE_GPUS=2`.
#[allow(dead_code)] // used by some of the test binaries sharing this module
pub fn note_one_rank(comms: &[cuda_graph_nccl::Communicator], test: &str) {
    if comms.len() < 2 {
        let _ = gpu_test_support::gpus_available(2, &format!("{test} (across ranks; ran with one rank)"));
    }
}
