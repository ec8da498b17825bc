//! The synchronous buffer operations (`DeviceBuffer::zeroed`, `from_slice`, `copy_from_host`)
//! have landed when they return, so work queued next on a non-blocking stream sees their
//! result and is never overwritten by it later.
//!
//! CUDA runs them on the legacy default stream, which does not order with non-blocking
//! streams, and a plain `cudaMemset` of device memory returns at once. On a GPU shared by
//! several processes the zeroing then sometimes landed after the kernel launched next. So the
//! parent test here starts several copies of this binary at once (each a child test that
//! checks every round) and expects all of them to pass.

use std::process::{Command, Output};

use cuda_graph::{CudaError, DeviceBuffer};
use gpu_test_support::{require_gpu, under_sanitizer};
use test_kernels::{add_scalar, fill_pattern, pattern};

mod graph_support;

use graph_support::{per_element, stream};

const CHILD_ENV: &str = "CUDA_GRAPH_SYNC_COPIES_CHILD";
const CHILD_TEST: &str = "child_checks_each_synchronous_operation_before_the_next_launch";
const N: u32 = 1 << 16;

/// Where the first element differs: (index, got, want).
fn first_wrong(got: &[u32], want: impl Fn(u32) -> u32) -> Option<(usize, u32, u32)> {
    got.iter().enumerate().map(|(i, &v)| (i, v, want(i as u32))).find(|&(_, v, w)| v != w)
}

fn rounds_of_each_operation() -> Result<(), CudaError> {
    let worker = stream()?;
    let rounds = if under_sanitizer() { 5 } else { 60 };
    for round in 0..rounds {
        let zeroed = DeviceBuffer::<u32>::zeroed(N as usize)?;
        fill_pattern().launch(&worker, per_element(N), (zeroed.ptr(), N, round))?;
        worker.synchronize()?;
        let wrong = first_wrong(&zeroed.to_vec()?, |i| pattern(i, round));
        assert_eq!(wrong, None, "round {round}: zeroed, then filled; (index, got, want)");

        let values: Vec<u32> = (0..N).map(|i| pattern(i, round + 1)).collect();
        let mut copied = DeviceBuffer::from_slice(&values)?;
        add_scalar().launch(&worker, per_element(N), (copied.ptr(), N, 5))?;
        worker.synchronize()?;
        let wrong = first_wrong(&copied.to_vec()?, |i| pattern(i, round + 1).wrapping_add(5));
        assert_eq!(wrong, None, "round {round}: from_slice, then +5; (index, got, want)");

        copied.copy_from_host(&values)?;
        add_scalar().launch(&worker, per_element(N), (copied.ptr(), N, 3))?;
        worker.synchronize()?;
        let wrong = first_wrong(&copied.to_vec()?, |i| pattern(i, round + 1).wrapping_add(3));
        assert_eq!(wrong, None, "round {round}: copy_from_host, then +3; (index, got, want)");
    }
    Ok(())
}

#[test]
fn child_checks_each_synchronous_operation_before_the_next_launch() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return; // only as a child of the test below
    }
    rounds_of_each_operation().unwrap_or_else(|err| panic!("{err}"));
}

#[test]
fn synchronous_operations_land_before_later_launches_while_processes_share_the_gpu() {
    require_gpu!();
    let processes = if under_sanitizer() { 1 } else { 8 };
    let children: Vec<_> = (0..processes)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", CHILD_TEST, "--test-threads=1", "--nocapture"])
                .env(CHILD_ENV, "1")
                .spawn()
                .expect("start a child test process")
        })
        .collect();
    let outputs: Vec<Output> = children.into_iter().map(|child| child.wait_with_output().unwrap()).collect();
    let failed: Vec<usize> = (0..outputs.len()).filter(|&i| !outputs[i].status.success()).collect();
    assert!(
        failed.is_empty(),
        "child processes {failed:?} of {processes} found a result overwritten (output above)"
    );
}
