//! Red-team probes of the paths that call the driver or skip the runtime's device binding
//! (SOUNDNESS.md, "Batch memory operation nodes" and "Stream launches through the driver"; the
//! cheaper current device of `GraphExec::update`). Safe code
//! only, plus cudarc's safe API (the `cudarc` feature the dev-dependency turns on); the one
//! `unsafe` call outside an API contract reads the runtime's last-error slot to observe it.
//! Each probe FAILS when the hole it aims at is there and PASSES when the crate holds.
//!
//! Batch memory operations run on the GPU's front end, not on its SMs: compute-sanitizer's
//! memcheck does not see their writes. The probes that aim at a write into freed or foreign
//! memory therefore look for it themselves, with a sentinel-filled buffer allocated after the
//! victim's drop (the same size, so that the allocator likely hands out the same memory); they
//! are marked *memcheck* where their kernels (spinning, filling) should also run clean there.
//!
//! Probes that may crash the process or hang (a context destroyed under a node, a wait that
//! never ends, a dangling kernel handle) run in a child process (this binary again, selected by
//! an environment variable) with a time limit, as `red_team_probes.rs` does. The child ends
//! with one `VERDICT` line: 0 held, 3 hole shown, 4 CUDA refused a step of the attack here
//! (counted as held, printed). Anything else (a crash, no verdict in time) fails the probe.
#![cfg(feature = "cudarc")]

mod graph_support;

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier, Mutex, PoisonError};
use std::time::{Duration, Instant};

use cuda_graph::graph::{
    CaptureMode, DeviceLaunch, Graph, HostLaunch, InstantiateOptions, MemOp, WaitCondition,
};
use cuda_graph::kernel::{Kernel, LaunchConfig, Module};
use cuda_graph::refusal::{Refusal, Unsupported};
use cuda_graph::{take_unreported_errors, Device, DeviceBuffer, DevicePtr, Stream, StreamOptions};
use cudarc::driver::CudaContext;
use gpu_test_support::{require_gpu, require_gpus};
use graph_support::{run, stream};
use test_kernels::{add_scalar, fill_pattern, noop, pattern, spin_then_fill};

const HELD: i32 = 0;
const DAMAGE: i32 = 3;
const UNAVAILABLE: i32 = 4;
const SCENARIO: &str = "CUDA_GRAPH_RED_TEAM_38_SCENARIO";
const LIMIT: Duration = Duration::from_secs(60);
/// Elements of victim buffers (4 MiB of `u32`): large enough that a fresh buffer of the same
/// size is likely handed the victim's memory.
const N: usize = 1 << 20;
/// About 150 ms on an H200: far longer than a drop and an allocation take on the host.
const SPIN_CYCLES: u64 = 300_000_000;
const FRESH: u32 = 0x5A5A_5A5A;
const WRITTEN: u32 = 7;

fn non_blocking() -> cuda_graph::Result<Stream> {
    Stream::with_options(StreamOptions { non_blocking: true, priority: None })
}

fn n_config(n: usize) -> LaunchConfig {
    LaunchConfig::for_elements(n as u32, 256)
}

// ---------------------------------------------------------------------------------------
// Child-process harness (as in red_team_probes.rs)
// ---------------------------------------------------------------------------------------

fn is_child(name: &str) -> bool {
    std::env::var(SCENARIO).is_ok_and(|scenario| scenario == name)
}

fn finish(code: i32, line: impl std::fmt::Display) -> ! {
    println!("VERDICT {code}: {line}");
    let _ = std::io::stdout().flush();
    std::process::exit(code)
}

fn step<T, E: std::fmt::Debug>(result: Result<T, E>, what: &str) -> T {
    match result {
        Ok(value) => value,
        Err(err) => finish(UNAVAILABLE, format!("{what} was refused: {err:?}")),
    }
}

fn after_crux<T, E: std::fmt::Debug>(result: Result<T, E>, what: &str) -> T {
    match result {
        Ok(value) => value,
        Err(err) => finish(DAMAGE, format!("{what} failed after the crux: {err:?}")),
    }
}

fn back_to_primary(ordinal: i32) {
    step(Device::get(ordinal).and_then(Device::set_current), "making the primary context current again");
}

fn run_scenario(name: &str) {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let mut child = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(SCENARIO, name)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test binary as a child");
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("child status") {
            break Some(status);
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = format!(
        "--- stdout ---\n{}\n--- stderr ---\n{}",
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default()
    );
    match status.map(|status| (status.code(), status)) {
        None => panic!("{name}: no verdict within {LIMIT:?}: the scenario hung\n{output}"),
        Some((Some(HELD), _)) => {}
        Some((Some(UNAVAILABLE), _)) => {
            eprintln!("{name}: CUDA refused a step of the attack here; counted as held\n{output}");
        }
        Some((Some(DAMAGE), _)) => panic!("{name}: the hole is there\n{output}"),
        Some((_, status)) => panic!("{name}: the scenario crashed or failed ({status})\n{output}"),
    }
}

/// Waits up to `limit` for `stream` to be idle; `false` if it is still busy then.
fn idle_within(stream: &Stream, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if matches!(stream.is_idle(), Ok(true)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Fresh buffers of `N` elements filled with `FRESH`, allocated after a victim's drop: how many
/// of them the victim's late write (`WRITTEN` at element 0) reached.
fn fresh_buffers_hit(fresh: &[DeviceBuffer<u32>]) -> cuda_graph::Result<usize> {
    let mut hit = 0;
    for buffer in fresh {
        if buffer.to_vec()?[0] == WRITTEN {
            hit += 1;
        }
    }
    Ok(hit)
}

fn allocate_fresh(count: usize) -> cuda_graph::Result<Vec<DeviceBuffer<u32>>> {
    (0..count).map(|_| DeviceBuffer::from_slice(&vec![FRESH; N])).collect()
}

// =======================================================================================
// 1. The current context: `GraphExec::update`'s cheaper current device, and the batch node's
//    `cuCtxGetCurrent` (the driver calls are not the runtime's, which binds the primary context)
// =======================================================================================

/// Attacks `GraphExec::update`'s new `CurrentFor` (the remembered current device, "a
/// thread-local read when it is current already") in place of `Device::with_current` (which
/// asked CUDA and bound the primary context). An earlier review fixed "adding, setting and
/// updating kernel nodes bind the primary context first" after a kernel node made while
/// cudarc's non-primary context was current crashed once cudarc destroyed it. Here the update
/// runs with cudarc's non-primary context current while the crate remembers device 0 as
/// current, then cudarc destroys the context and the exec is launched.
///
/// Break: a crash (SIGSEGV) or a CUDA error at the launch after the context's destruction, or
/// the exec running the old kernel arguments after an `Ok` update. Held: the update is `Err`,
/// or the exec runs the new arguments.
#[test]
fn an_update_while_a_non_primary_context_is_current_outlives_that_context() {
    const NAME: &str = "an_update_while_a_non_primary_context_is_current_outlives_that_context";
    if is_child(NAME) {
        update_under_other_context();
    }
    require_gpu!();
    run_scenario(NAME);
}

fn update_under_other_context() -> ! {
    step(Device::get(0).and_then(Device::set_current), "making device 0 current");
    let stream = step(Stream::new(), "a stream");
    let out = step(DeviceBuffer::<u32>::zeroed(N), "the buffer");
    let flag = step(DeviceBuffer::<u32>::zeroed(1), "the flag");
    let build = |seed: u32, value: u32| -> cuda_graph::Result<Graph> {
        let graph = Graph::new()?;
        let fill = graph.add_kernel(fill_pattern(), n_config(N), (out.ptr(), N as u32, seed), &[])?;
        graph.add_batch_mem_op(&[MemOp::write_u32(&flag.ptr(), value)?], &[&fill])?;
        Ok(graph)
    };
    let first = step(build(1, 1), "the first graph");
    let second = step(build(5, 2), "the second graph");
    let mut exec = step(first.instantiate_default(), "instantiating the first graph");
    step(exec.launch(&stream), "a first launch");
    step(stream.synchronize(), "waiting for it");
    let other = step(CudaContext::new_non_primary(0, 0), "cudarc's non-primary context of device 0");
    step(other.bind_to_thread(), "making cudarc's non-primary context current");
    let updated = exec.update(&second);
    drop(other); // cudarc destroys its context
    back_to_primary(0);
    if let Err(err) = updated {
        finish(HELD, format!("the update was refused while the other context was current: {err}"));
    }
    after_crux(exec.launch(&stream), "launching the updated exec");
    after_crux(stream.synchronize(), "waiting for it");
    let values = after_crux(out.to_vec(), "reading the buffer");
    let wrong = values.iter().enumerate().filter(|&(i, &v)| v != pattern(i as u32, 5)).count();
    let flag = after_crux(flag.to_vec(), "reading the flag")[0];
    if wrong > 0 || flag != 2 {
        finish(
            DAMAGE,
            format!(
                "after an Ok update {wrong} of {N} elements are not the new pattern; flag {flag} (want 2)"
            ),
        );
    }
    finish(HELD, "the updated exec ran the new graph in the primary context")
}

/// Attacks `add_batch_mem_op`'s context: the node's `ctx` is whatever `cuCtxGetCurrent`
/// answers, and `insert_with` makes the graph's device current through `CurrentFor` (the
/// remembered device), which skips the switch when the crate believes device 0 is current.
/// With cudarc's non-primary context current the node would belong to that context, which
/// cudarc then destroys before the graph is instantiated and launched.
///
/// Break: a crash or a CUDA error at instantiation or launch, or the write not landing. Held:
/// the add is `Err`, or the write lands.
#[test]
fn a_batch_node_added_while_a_non_primary_context_is_current_outlives_that_context() {
    const NAME: &str = "a_batch_node_added_while_a_non_primary_context_is_current_outlives_that_context";
    if is_child(NAME) {
        batch_node_under_other_context(false);
    }
    require_gpu!();
    run_scenario(NAME);
}

/// The same for `GraphExec::set_batch_mem_op`, whose parameters also carry `cuCtxGetCurrent`'s
/// answer: set while cudarc's non-primary context is current, then the context is destroyed
/// and the exec launched.
///
/// Break: a crash or a CUDA error at launch, or the new write not landing after an `Ok` set.
/// Held: the set is `Err`, or the new write lands.
#[test]
fn a_batch_node_set_while_a_non_primary_context_is_current_outlives_that_context() {
    const NAME: &str = "a_batch_node_set_while_a_non_primary_context_is_current_outlives_that_context";
    if is_child(NAME) {
        batch_node_under_other_context(true);
    }
    require_gpu!();
    run_scenario(NAME);
}

fn batch_node_under_other_context(set: bool) -> ! {
    step(Device::get(0).and_then(Device::set_current), "making device 0 current");
    let stream = step(Stream::new(), "a stream");
    let first = step(DeviceBuffer::<u32>::zeroed(1), "the first flag");
    let second = step(DeviceBuffer::<u32>::zeroed(1), "the second flag");
    let graph = step(Graph::new(), "a graph");
    let first_op = step(MemOp::write_u32(&first.ptr(), 3), "the first write");
    let second_op = step(MemOp::write_u32(&second.ptr(), 4), "the second write");
    // Warm up the entry points and the primary context on this thread.
    let warm = step(graph.add_batch_mem_op(std::slice::from_ref(&first_op), &[]), "a first batch node");
    let other = step(CudaContext::new_non_primary(0, 0), "cudarc's non-primary context of device 0");
    let (exec, want) = if set {
        let mut exec = step(graph.instantiate_default(), "instantiating");
        step(exec.launch(&stream), "a first launch");
        step(stream.synchronize(), "waiting for it");
        step(other.bind_to_thread(), "making cudarc's non-primary context current");
        let changed = exec.set_batch_mem_op(&warm, &[second_op]);
        drop(other);
        back_to_primary(0);
        if let Err(err) = changed {
            finish(HELD, format!("the set was refused while the other context was current: {err}"));
        }
        (exec, "the second flag 4")
    } else {
        step(other.bind_to_thread(), "making cudarc's non-primary context current");
        let added = graph.add_batch_mem_op(&[second_op], &[&warm]);
        drop(other);
        back_to_primary(0);
        if let Err(err) = added {
            finish(HELD, format!("the add was refused while the other context was current: {err}"));
        }
        (
            after_crux(graph.instantiate_default(), "instantiating after the context was destroyed"),
            "the second flag 4",
        )
    };
    after_crux(exec.launch(&stream), "launching");
    after_crux(stream.synchronize(), "waiting for the launch");
    let got = after_crux(second.to_vec(), "reading the second flag")[0];
    if got != 4 {
        finish(
            DAMAGE,
            format!(
                "the node made or set in the destroyed context did not write: {want} expected, got {got}"
            ),
        );
    }
    finish(HELD, "the batch node ran in the primary context")
}

/// Two GPUs. cudarc's safe `CudaContext::new(1).bind_to_thread()` makes device 1's primary
/// context current while the crate remembers device 0 (a raw `cudaSetDevice` by other code,
/// done safely). A batch node added then to a graph of device 0 takes device 1's context
/// (`CurrentFor` skips the switch): its write of device 0 memory would run on device 1, to
/// which device 0's memory was never made reachable.
///
/// Break: a fault (illegal address) or crash at launch, or the write not landing. Held: `Err`,
/// or the write lands.
#[test]
fn a_batch_node_added_while_cudarc_made_another_device_current_runs_on_the_graphs_device() {
    const NAME: &str =
        "a_batch_node_added_while_cudarc_made_another_device_current_runs_on_the_graphs_device";
    if is_child(NAME) {
        batch_node_under_other_device();
    }
    require_gpu!();
    {
        require_gpus!(2);
    }
    run_scenario(NAME);
}

fn batch_node_under_other_device() -> ! {
    step(Device::get(0).and_then(Device::set_current), "making device 0 current");
    let stream = step(Stream::new(), "a stream of device 0");
    let flag = step(DeviceBuffer::<u32>::zeroed(1), "a flag of device 0");
    let graph = step(Graph::new(), "a graph of device 0");
    let warm = step(graph.add_empty(&[]), "a first node");
    let op = step(MemOp::write_u32(&flag.ptr(), 9), "the write");
    let ctx1 = step(CudaContext::new(1), "cudarc's primary context of device 1");
    step(ctx1.bind_to_thread(), "making device 1's context current through cudarc");
    let added = graph.add_batch_mem_op(&[op], &[&warm]);
    drop(ctx1);
    back_to_primary(0);
    if let Err(err) = added {
        finish(HELD, format!("the add was refused: {err}"));
    }
    let exec = after_crux(graph.instantiate_default(), "instantiating");
    after_crux(exec.launch(&stream), "launching");
    after_crux(stream.synchronize(), "waiting for the launch");
    let got = after_crux(flag.to_vec(), "reading the flag")[0];
    if got != 9 {
        finish(DAMAGE, format!("the write did not land: {got}"));
    }
    finish(HELD, "the node ran on the graph's device")
}

/// Two GPUs, in a child process. Attacks `set_batch_mem_op`'s context on an exec of device 1
/// set while device 0 is current (no other code involved): the parameters carry
/// `cuCtxGetCurrent`'s answer, device 0's primary context, unless the setter makes the exec's
/// device current first. CUDA says the context "may not be modified"; if it takes it, the write
/// of device 1 memory runs on device 0, which was not given access to it.
///
/// Break: a fault, a crash, an error at launch, or the write not landing after an `Ok` set.
/// Held: `Err`, or the write lands.
#[test]
fn a_batch_node_set_on_an_exec_of_another_device_than_the_current_one_runs_on_its_device() {
    const NAME: &str =
        "a_batch_node_set_on_an_exec_of_another_device_than_the_current_one_runs_on_its_device";
    if is_child(NAME) {
        set_on_other_device_exec();
    }
    require_gpu!();
    {
        require_gpus!(2);
    }
    run_scenario(NAME);
}

fn set_on_other_device_exec() -> ! {
    let d0 = step(Device::get(0), "device 0");
    let d1 = step(Device::get(1), "device 1");
    step(d0.set_current(), "making device 0 current");
    let stream = step(Stream::new_on(d1), "a stream of device 1");
    let first = step(DeviceBuffer::<u32>::zeroed_on(d1, 1), "a flag of device 1");
    let second = step(DeviceBuffer::<u32>::zeroed_on(d1, 1), "another flag of device 1");
    let graph = step(Graph::new_on(d1), "a graph of device 1");
    let node =
        step(graph.add_batch_mem_op(&[step(MemOp::write_u32(&first.ptr(), 1), "op")], &[]), "the node");
    let mut exec = step(graph.instantiate_default(), "instantiating");
    step(d0.set_current(), "making device 0 current again");
    let op = step(MemOp::write_u32(&second.ptr(), 2), "the new write");
    if let Err(err) = exec.set_batch_mem_op(&node, &[op]) {
        finish(HELD, format!("the set was refused: {err}"));
    }
    after_crux(exec.launch(&stream), "launching");
    after_crux(stream.synchronize(), "waiting");
    let got = (after_crux(first.to_vec(), "reading")[0], after_crux(second.to_vec(), "reading")[0]);
    if got != (0, 2) {
        finish(DAMAGE, format!("after an Ok set from device 0 the device 1 exec wrote (first, second) = {got:?}, want (0, 2)"));
    }
    finish(HELD, "the set node ran on the exec's device")
}

/// Two GPUs. `GraphExec::update` of a device 0 exec while cudarc made device 1's primary
/// context current (the crate remembering device 0): `CurrentFor` does not switch, and the
/// kernel nodes of the new graph may be resolved in device 1's context.
///
/// Break: a crash or an error at launch, or the old arguments running after an `Ok` update.
/// Held: `Err`, or the new arguments run on device 0.
#[test]
fn an_update_while_cudarc_made_another_device_current_keeps_the_exec_on_its_device() {
    const NAME: &str = "an_update_while_cudarc_made_another_device_current_keeps_the_exec_on_its_device";
    if is_child(NAME) {
        update_under_other_device();
    }
    require_gpu!();
    {
        require_gpus!(2);
    }
    run_scenario(NAME);
}

fn update_under_other_device() -> ! {
    step(Device::get(0).and_then(Device::set_current), "making device 0 current");
    let stream = step(Stream::new(), "a stream of device 0");
    let out = step(DeviceBuffer::<u32>::zeroed(N), "a buffer of device 0");
    let build = |seed: u32| -> cuda_graph::Result<Graph> {
        let graph = Graph::new()?;
        graph.add_kernel(fill_pattern(), n_config(N), (out.ptr(), N as u32, seed), &[])?;
        Ok(graph)
    };
    let first = step(build(1), "the first graph");
    let second = step(build(6), "the second graph");
    let mut exec = step(first.instantiate_default(), "instantiating");
    step(exec.launch(&stream), "a first launch");
    step(stream.synchronize(), "waiting for it");
    let ctx1 = step(CudaContext::new(1), "cudarc's primary context of device 1");
    step(ctx1.bind_to_thread(), "making device 1's context current through cudarc");
    let updated = exec.update(&second);
    back_to_primary(0);
    drop(ctx1);
    if let Err(err) = updated {
        finish(HELD, format!("the update was refused: {err}"));
    }
    after_crux(exec.launch(&stream), "launching the updated exec");
    after_crux(stream.synchronize(), "waiting for it");
    let values = after_crux(out.to_vec(), "reading the buffer");
    let wrong = values.iter().enumerate().filter(|&(i, &v)| v != pattern(i as u32, 6)).count();
    if wrong > 0 {
        finish(DAMAGE, format!("{wrong} of {N} elements are not the new pattern after an Ok update"));
    }
    finish(HELD, "the updated exec ran on device 0 with the new arguments")
}

// =======================================================================================
// 2. `set_batch_mem_op` and `update` changing what CUDA says "may not be modified"
//    (count, kind): the crate's docs say CUDA refuses; if CUDA ignores the change instead,
//    the exec keeps writing through operations whose buffers the crate retired
// =======================================================================================

/// Attacks `set_batch_mem_op` with fewer operations than the node has. The crate says "CUDA
/// refuses a change of their number" and retires what the node kept before. If CUDA instead
/// keeps the node's second operation (or reads a second one past the crate's one-element
/// array), the exec still writes buffer B after the crate let go of it: with B dropped that is a
/// write into freed memory (here B is kept by the test to see it; memcheck cannot).
///
/// Break: `Ok` and after the launch B (or A) written, or C not written. Held: `Err`, or exactly
/// C written.
#[test]
fn a_set_with_fewer_operations_is_refused_or_stops_the_dropped_ones() {
    require_gpu!();
    run(|| {
        let (a, b, c) = (
            DeviceBuffer::<u32>::zeroed(1)?,
            DeviceBuffer::<u32>::zeroed(1)?,
            DeviceBuffer::<u32>::zeroed(1)?,
        );
        let graph = Graph::new()?;
        let node =
            graph.add_batch_mem_op(&[MemOp::write_u32(&a.ptr(), 1)?, MemOp::write_u32(&b.ptr(), 2)?], &[])?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        if let Err(err) = exec.set_batch_mem_op(&node, &[MemOp::write_u32(&c.ptr(), 3)?]) {
            eprintln!("held: refused: {err}");
            return Ok(());
        }
        let stream = stream()?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        let got = (a.to_vec()?[0], b.to_vec()?[0], c.to_vec()?[0]);
        assert_eq!(got, (0, 0, 3), "Ok set of 1 operation on a 2-operation node: (a, b, c) after the launch");
        Ok(())
    });
}

/// Attacks `set_batch_mem_op` with more operations than the node has: if CUDA keeps the
/// node's count, the second operation is silently dropped (a wrong result: the caller's write
/// never happens although the set said `Ok`).
///
/// Break: `Ok` and B or C unwritten, or A written. Held: `Err`, or B and C written.
#[test]
fn a_set_with_more_operations_is_refused_or_runs_them_all() {
    require_gpu!();
    run(|| {
        let (a, b, c) = (
            DeviceBuffer::<u32>::zeroed(1)?,
            DeviceBuffer::<u32>::zeroed(1)?,
            DeviceBuffer::<u32>::zeroed(1)?,
        );
        let graph = Graph::new()?;
        let node = graph.add_batch_mem_op(&[MemOp::write_u32(&a.ptr(), 1)?], &[])?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let ops = [MemOp::write_u32(&b.ptr(), 2)?, MemOp::write_u32(&c.ptr(), 3)?];
        if let Err(err) = exec.set_batch_mem_op(&node, &ops) {
            eprintln!("held: refused: {err}");
            return Ok(());
        }
        let stream = stream()?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        let got = (a.to_vec()?[0], b.to_vec()?[0], c.to_vec()?[0]);
        assert_eq!(
            got,
            (0, 2, 3),
            "Ok set of 2 operations on a 1-operation node: (a, b, c) after the launch"
        );
        Ok(())
    });
}

/// Attacks `set_batch_mem_op` changing a 32-bit write into a 64-bit one. If CUDA keeps the
/// node's 32-bit kind, only the low half of the new value lands (a wrong result after `Ok`).
///
/// Break: `Ok` and the u64 not equal to the value written. Held: `Err`, or the full value.
#[test]
fn a_set_from_a_32_bit_to_a_64_bit_write_is_refused_or_writes_all_64_bits() {
    require_gpu!();
    run(|| {
        let small = DeviceBuffer::<u32>::zeroed(1)?;
        let wide = DeviceBuffer::<u64>::zeroed(1)?;
        let graph = Graph::new()?;
        let node = graph.add_batch_mem_op(&[MemOp::write_u32(&small.ptr(), 1)?], &[])?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        const VALUE: u64 = 0x1122_3344_5566_7788;
        if let Err(err) = exec.set_batch_mem_op(&node, &[MemOp::write_u64(&wide.ptr(), VALUE)?]) {
            eprintln!("held: refused: {err}");
            return Ok(());
        }
        let stream = stream()?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(
            (small.to_vec()?[0], wide.to_vec()?[0]),
            (0, VALUE),
            "(old target, new target) after an Ok set"
        );
        Ok(())
    });
}

/// Attacks `set_batch_mem_op` changing a 64-bit write into a 32-bit one aimed at element 2 of
/// a 4-element `u32` buffer (8-byte aligned). If CUDA keeps the node's 64-bit kind, it writes
/// 8 bytes: element 3 too, which the operation never named (with the pointer at the last
/// element of an allocation, those 4 bytes lie past its end; with the 32-bit value union's
/// upper half uninitialized, they are whatever the host's stack held).
///
/// Break: `Ok` and any element but element 2 changed. Held: `Err`, or only element 2 = 5.
#[test]
fn a_set_from_a_64_bit_to_a_32_bit_write_writes_only_4_bytes() {
    require_gpu!();
    run(|| {
        const S: u32 = 0xA5A5_A5A5;
        let wide = DeviceBuffer::<u64>::zeroed(1)?;
        let words = DeviceBuffer::from_slice(&[S, S, S, S])?;
        let graph = Graph::new()?;
        let node = graph.add_batch_mem_op(&[MemOp::write_u64(&wide.ptr(), 1)?], &[])?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let target = words.ptr().offset(2)?;
        assert_eq!(target.addr() % 8, 0, "cudaMalloc memory is 256-byte aligned");
        if let Err(err) = exec.set_batch_mem_op(&node, &[MemOp::write_u32(&target, 5)?]) {
            eprintln!("held: refused: {err}");
            return Ok(());
        }
        let stream = stream()?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(
            words.to_vec()?,
            [S, S, 5, S],
            "a 32-bit write set on a 64-bit node wrote beyond its 4 bytes"
        );
        assert_eq!(wide.to_vec()?, [0], "the old target was written after the set");
        Ok(())
    });
}

/// The same kind and count changes through `GraphExec::update` (`cudaGraphExecUpdate`) instead
/// of the setter: the exec from a graph with one 64-bit write, updated to a graph of the same
/// topology whose node is a 32-bit write to element 2 of a sentinel buffer; then to a graph
/// whose node has two operations.
///
/// Break: an `Ok` update after which the exec writes beyond element 2, misses a write, or
/// writes the first graph's target. Held: `Err`, or exactly the new graph's writes.
#[test]
fn an_update_changing_batch_operation_kinds_or_count_is_refused_or_applied() {
    require_gpu!();
    run(|| {
        const S: u32 = 0xA5A5_A5A5;
        let wide = DeviceBuffer::<u64>::zeroed(1)?;
        let words = DeviceBuffer::from_slice(&[S, S, S, S])?;
        let extra = DeviceBuffer::<u32>::zeroed(1)?;
        let first = Graph::new()?;
        first.add_batch_mem_op(&[MemOp::write_u64(&wide.ptr(), 1)?], &[])?;
        let mut exec = first.instantiate::<HostLaunch>(Default::default())?;
        let stream = stream()?;
        let narrow = Graph::new()?;
        narrow.add_batch_mem_op(&[MemOp::write_u32(&words.ptr().offset(2)?, 5)?], &[])?;
        match exec.update(&narrow) {
            Err(err) => eprintln!("held: kind change refused: {err}"),
            Ok(()) => {
                exec.launch(&stream)?;
                stream.synchronize()?;
                assert_eq!(
                    words.to_vec()?,
                    [S, S, 5, S],
                    "kind changed by update: bytes beyond the 32-bit write"
                );
                assert_eq!(wide.to_vec()?, [0], "kind changed by update: the first graph's target written");
            }
        }
        let mut exec = first.instantiate::<HostLaunch>(Default::default())?;
        let two = Graph::new()?;
        let (p, q) = (DeviceBuffer::<u64>::zeroed(1)?, DeviceBuffer::<u64>::zeroed(1)?);
        two.add_batch_mem_op(&[MemOp::write_u64(&p.ptr(), 11)?, MemOp::write_u64(&q.ptr(), 12)?], &[])?;
        drop(extra);
        match exec.update(&two) {
            Err(err) => eprintln!("held: count change refused: {err}"),
            Ok(()) => {
                exec.launch(&stream)?;
                stream.synchronize()?;
                assert_eq!(
                    (p.to_vec()?[0], q.to_vec()?[0]),
                    (11, 12),
                    "count changed by update: writes missing"
                );
                assert_eq!(wide.to_vec()?, [0], "count changed by update: the first graph's target written");
            }
        }
        Ok(())
    });
}

/// Attacks the setter with a node made as a wait. The wait is `unsafe`, and its promise is
/// kept: `>= 0` against a zeroed buffer holds at once, in every launch. The exec's node is then
/// set, safely, to a *write* of 5 to another zeroed buffer. If CUDA ignores the kind change (it
/// "may not be modified") and takes the new address and value for the wait, the node waits for
/// `(int)(0 - 5) >= 0`, forever: a hang from safe code (the launch never completes; the
/// stream's synchronize and the exec's drop never return).
///
/// Break: the launch still busy after 10 s (or no verdict in time), or `Ok` and no write.
/// Held: the set is `Err`, or the write lands.
#[test]
fn a_write_set_on_a_node_made_as_a_wait_never_hangs() {
    const NAME: &str = "a_write_set_on_a_node_made_as_a_wait_never_hangs";
    if is_child(NAME) {
        write_set_on_a_wait();
    }
    require_gpu!();
    run_scenario(NAME);
}

fn write_set_on_a_wait() -> ! {
    step(Device::get(0).and_then(Device::set_current), "making device 0 current");
    let stream = step(non_blocking(), "a stream");
    let waited = step(DeviceBuffer::<u32>::zeroed(1), "the waited buffer");
    let target = step(DeviceBuffer::<u32>::zeroed(1), "the written buffer");
    let graph = step(Graph::new(), "a graph");
    // SAFETY: `waited` is zeroed and nothing writes it: `(int)(0 - 0) >= 0` holds as soon as
    // the node starts, in every launch of every exec of this graph.
    let wait = step(unsafe { MemOp::wait_u32(&waited.ptr(), 0, WaitCondition::GreaterOrEqual) }, "the wait");
    let node = step(graph.add_batch_mem_op(&[wait], &[]), "the wait node");
    let mut exec = step(graph.instantiate_default(), "instantiating");
    step(exec.launch(&stream), "a first launch");
    if !idle_within(&stream, Duration::from_secs(10)) {
        finish(UNAVAILABLE, "the kept wait itself did not complete");
    }
    let write = step(MemOp::write_u32(&target.ptr(), 5), "the write");
    if let Err(err) = exec.set_batch_mem_op(&node, &[write]) {
        finish(HELD, format!("the set of a write on a wait node was refused: {err}"));
    }
    after_crux(exec.launch(&stream), "launching after the set");
    if !idle_within(&stream, Duration::from_secs(10)) {
        finish(DAMAGE, "the launch after a safe set never completed: the node still waits (a hang)");
    }
    let got = after_crux(target.to_vec(), "reading the target")[0];
    if got != 5 {
        finish(DAMAGE, format!("the write set on the node did not land (got {got})"));
    }
    finish(HELD, "the node wrote after the set")
}

// =======================================================================================
// 3. Lifetimes: writes after the buffer's owner let go
// =======================================================================================

/// *memcheck*. Attacks "what it kept before lives until the launches queued before have
/// completed" (`set_batch_mem_op`) and the diff's early return in `ensure_fence` (no fence
/// made when "not needed"): a launch is in flight (a spinning kernel, then the batch write of
/// `WRITTEN` to A), the node is set to write B, A is dropped, and fresh sentinel buffers of A's
/// size are allocated. The in-flight launch still writes A's address. (`cudaFree` may itself
/// wait for the device; the stream-ordered variant below has no such implicit wait.)
///
/// Break: a fresh buffer's element 0 becomes `WRITTEN` (A freed before the launch that writes
/// it ran). Held: none written.
#[test]
fn a_write_set_while_a_launch_is_in_flight_keeps_the_old_buffer_until_that_launch_ran() {
    require_gpu!();
    run(|| set_while_in_flight(false));
}

/// *memcheck*. As the probe above, with A stream-ordered (`alloc_async` on the launch's
/// non-blocking stream), whose free is queued (`cudaFreeAsync`) rather than waited for, and the
/// fresh buffers `alloc_async` on another non-blocking stream: the crate's pool must not hand
/// out A's memory before the in-flight launch that writes it completed.
///
/// Break: a fresh buffer's element 0 becomes `WRITTEN`. Held: none written.
#[test]
fn a_write_set_while_a_launch_is_in_flight_keeps_the_old_stream_ordered_buffer_until_that_launch_ran() {
    require_gpu!();
    run(|| set_while_in_flight(true));
}

/// The operation, or `None` where it is refused for targeting pool (stream-ordered) memory,
/// which CUDA 13.0 does not launch (added after the first GPU run of these probes, where such
/// nodes made the graph's launch fail with `cudaErrorInvalidValue`): the attack ends there,
/// refused before CUDA, which holds.
fn unless_pool_refused(op: cuda_graph::Result<MemOp>) -> cuda_graph::Result<Option<MemOp>> {
    match op {
        Err(err) if matches!(err.refusal(), Some(Refusal::Unsupported(Unsupported::MemOpOnPoolMemory))) => {
            Ok(None)
        }
        other => other.map(Some),
    }
}

fn set_while_in_flight(stream_ordered: bool) -> cuda_graph::Result<()> {
    let stream = non_blocking()?;
    let other = non_blocking()?;
    let scratch = DeviceBuffer::<u32>::zeroed(1)?;
    let a = if stream_ordered {
        let a = DeviceBuffer::<u32>::alloc_async(N, &stream)?;
        stream.synchronize()?;
        a
    } else {
        DeviceBuffer::<u32>::zeroed(N)?
    };
    let b = DeviceBuffer::<u32>::zeroed(1)?;
    let graph = Graph::new()?;
    let spin = graph.add_kernel(
        spin_then_fill(),
        LaunchConfig::new(1, 1),
        (scratch.ptr(), 1, SPIN_CYCLES, 1),
        &[],
    )?;
    let Some(op) = unless_pool_refused(MemOp::write_u32(&a.ptr(), WRITTEN))? else {
        return Ok(());
    };
    let node = graph.add_batch_mem_op(&[op], &[&spin])?;
    let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
    drop(graph);
    exec.launch(&stream)?;
    exec.set_batch_mem_op(&node, &[MemOp::write_u32(&b.ptr(), 8)?])?;
    drop(a);
    let busy = matches!(stream.is_idle(), Ok(false));
    let fresh = if stream_ordered {
        let mut fresh = Vec::new();
        for _ in 0..4 {
            let mut buffer = DeviceBuffer::<u32>::alloc_async(N, &other)?;
            buffer.memset_async(0x5A, &other)?;
            fresh.push(buffer);
        }
        other.synchronize()?;
        fresh
    } else {
        allocate_fresh(4)?
    };
    stream.synchronize()?;
    let hit = fresh_buffers_hit(&fresh)?;
    assert_eq!(
        hit, 0,
        "the in-flight launch wrote {hit} buffers allocated after the set retired its target (busy at the drop: {busy})"
    );
    exec.launch(&stream)?;
    stream.synchronize()?;
    assert_eq!(b.to_vec()?, [8]);
    assert_eq!(take_unreported_errors(), []);
    Ok(())
}

/// Attacks the setter's and the reader's node checks with batch nodes: a node of another graph,
/// and a node removed from its graph (its handle copied before the removal), given to
/// `set_batch_mem_op` and `batch_mem_op_params`.
///
/// Break: any `Ok`. Held: `Err` each time.
#[test]
fn batch_nodes_of_other_graphs_or_removed_ones_are_refused() {
    require_gpu!();
    run(|| {
        let flag = DeviceBuffer::<u32>::zeroed(2)?;
        let mine = Graph::new()?;
        let node = mine.add_batch_mem_op(&[MemOp::write_u32(&flag.ptr(), 1)?], &[])?;
        let theirs = Graph::new()?;
        let foreign = theirs.add_batch_mem_op(&[MemOp::write_u32(&flag.ptr(), 2)?], &[])?;
        let removed = theirs.add_batch_mem_op(&[MemOp::write_u32(&flag.ptr().offset(1)?, 3)?], &[])?;
        let copy = removed;
        theirs.remove_node(removed)?;
        assert!(theirs.batch_mem_op_params(&copy).is_err(), "a removed node read back");
        assert!(mine.batch_mem_op_params(&foreign).is_err(), "another graph's node read back");
        assert!(
            mine.add_batch_mem_op(&[MemOp::write_u32(&flag.ptr(), 4)?], &[&foreign]).is_err(),
            "another graph's node as a dependency"
        );
        let mut exec = mine.instantiate::<HostLaunch>(Default::default())?;
        assert!(
            exec.set_batch_mem_op(&foreign, &[MemOp::write_u32(&flag.ptr(), 5)?]).is_err(),
            "another graph's node set"
        );
        assert!(
            exec.set_batch_mem_op(&copy, &[MemOp::write_u32(&flag.ptr(), 6)?]).is_err(),
            "a removed node set"
        );
        let stream = stream()?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(flag.to_vec()?, [1, 0]);
        let _ = node;
        Ok(())
    });
}

/// *memcheck*. Attacks the exec's drop with stream-ordered memory (`alloc_async`) as the batch
/// write's target, launched on a non-blocking stream: the exec, its graph and the buffer are
/// dropped while the launch (a spinning kernel, then the write) is in flight; a fresh
/// `alloc_async` of the same size on another stream, filled with a sentinel, must not receive
/// the late write (the pool reuses only frees completed on the device).
///
/// Break: the fresh buffer's element 0 becomes `WRITTEN`. Held: it keeps the sentinel.
#[test]
fn an_exec_dropped_under_its_launch_keeps_its_stream_ordered_batch_target() {
    require_gpu!();
    run(|| {
        let launch_stream = non_blocking()?;
        let other = non_blocking()?;
        let scratch = DeviceBuffer::<u32>::zeroed(1)?;
        let target = DeviceBuffer::<u32>::alloc_async(N, &launch_stream)?;
        launch_stream.synchronize()?;
        let graph = Graph::new()?;
        let spin = graph.add_kernel(
            spin_then_fill(),
            LaunchConfig::new(1, 1),
            (scratch.ptr(), 1, SPIN_CYCLES, 1),
            &[],
        )?;
        let Some(op) = unless_pool_refused(MemOp::write_u32(&target.ptr(), WRITTEN))? else {
            return Ok(());
        };
        graph.add_batch_mem_op(&[op], &[&spin])?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        exec.launch(&launch_stream)?;
        drop((exec, graph, target));
        let mut fresh = DeviceBuffer::<u32>::alloc_async(N, &other)?;
        fresh.memset_async(0x5A, &other)?;
        other.synchronize()?;
        launch_stream.synchronize()?;
        let first = fresh.to_vec()?[0];
        assert_eq!(first, FRESH, "the dropped exec's in-flight batch write landed in a later allocation");
        Ok(())
    });
}

/// Attacks `clone_graph` with batch nodes: the clone must keep the original's batch targets
/// (the original and the buffer are dropped before the clone runs). Fresh sentinel buffers of
/// the target's size are allocated in between.
///
/// Break: a fresh buffer written, or instantiation/launch failing. Held: none written (or the
/// clone refused with `Err`).
#[test]
fn a_cloned_graph_keeps_its_batch_targets() {
    require_gpu!();
    run(|| {
        let graph = Graph::new()?;
        {
            let target = DeviceBuffer::<u32>::zeroed(N)?;
            graph.add_batch_mem_op(&[MemOp::write_u32(&target.ptr(), WRITTEN)?], &[])?;
        }
        let clone = match graph.clone_graph() {
            Ok(clone) => clone,
            Err(err) => {
                eprintln!("held: clone refused: {err}");
                return Ok(());
            }
        };
        drop(graph);
        let fresh = allocate_fresh(4)?;
        let exec = clone.instantiate::<HostLaunch>(Default::default())?;
        let stream = stream()?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(
            fresh_buffers_hit(&fresh)?,
            0,
            "the clone's batch node wrote memory its original let go of"
        );
        Ok(())
    });
}

/// Attacks child graphs holding batch nodes: CUDA copies the child into the parent; the
/// parent must keep the child's batch targets. The child and the target are dropped before the
/// parent is instantiated; fresh sentinel buffers are allocated in between.
///
/// Break: a fresh buffer written. Held: `Err` at the add or instantiation, or none written.
#[test]
fn a_child_graph_with_a_batch_node_keeps_its_target_in_the_parent() {
    require_gpu!();
    run(|| {
        let parent = Graph::new()?;
        {
            let child = Graph::new()?;
            let target = DeviceBuffer::<u32>::zeroed(N)?;
            child.add_batch_mem_op(&[MemOp::write_u32(&target.ptr(), WRITTEN)?], &[])?;
            if let Err(err) = parent.add_child_graph(&child, &[]) {
                eprintln!("held: child refused: {err}");
                return Ok(());
            }
        }
        let fresh = allocate_fresh(4)?;
        let exec = match parent.instantiate::<HostLaunch>(Default::default()) {
            Ok(exec) => exec,
            Err(err) => {
                eprintln!("held: instantiation refused: {err}");
                return Ok(());
            }
        };
        let stream = stream()?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(fresh_buffers_hit(&fresh)?, 0, "the child's batch node wrote memory nobody keeps");
        Ok(())
    });
}

// =======================================================================================
// 4. Where CUDA may refuse: conditional bodies, device-launched graphs
// =======================================================================================

/// Attacks "CUDA refuses these nodes in conditional bodies" (the crate adds them and lets CUDA
/// decide): a batch write in an IF body whose condition is 0, and in one whose condition is 1,
/// and in a WHILE body that runs three times.
///
/// Break: an add, instantiation and launch that all succeed with the wrong effect (the write in
/// a body that did not run, or missing from one that did), or a crash. Held: `Err` anywhere
/// on the way, or exactly the bodies' writes.
#[test]
fn batch_nodes_in_conditional_bodies_are_refused_or_run_with_their_body() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        for condition in [0u32, 1] {
            let target = DeviceBuffer::<u32>::zeroed(1)?;
            let graph = Graph::new()?;
            let handle = graph.conditional_handle(Some(condition))?;
            let (_node, body) = graph.add_if(&handle, &[])?;
            if let Err(err) = body.add_batch_mem_op(&[MemOp::write_u32(&target.ptr(), 1)?], &[]) {
                eprintln!("held: refused in an IF body: {err}");
                continue;
            }
            let exec = match graph.instantiate::<HostLaunch>(Default::default()) {
                Ok(exec) => exec,
                Err(err) => {
                    eprintln!("held: IF body with a batch node refused at instantiation: {err}");
                    continue;
                }
            };
            exec.launch(&stream)?;
            stream.synchronize()?;
            assert_eq!(
                target.to_vec()?,
                [condition],
                "a batch write in an IF body with condition {condition}"
            );
        }
        let target = DeviceBuffer::<u64>::zeroed(1)?;
        let counter = DeviceBuffer::<u32>::zeroed(1)?;
        let graph = Graph::new()?;
        let handle = graph.conditional_handle(Some(1))?;
        let (_node, body) = graph.add_while(&handle, &[])?;
        match body.add_batch_mem_op(&[MemOp::write_u64(&target.ptr(), 42)?], &[]) {
            Err(err) => eprintln!("held: refused in a WHILE body: {err}"),
            Ok(write) => {
                body.add_kernel(
                    test_kernels::while_step(),
                    LaunchConfig::new(1, 1),
                    (handle, counter.ptr(), 3),
                    &[&write],
                )?;
                match graph.instantiate::<HostLaunch>(Default::default()) {
                    Err(err) => {
                        eprintln!("held: WHILE body with a batch node refused at instantiation: {err}")
                    }
                    Ok(exec) => {
                        exec.launch(&stream)?;
                        stream.synchronize()?;
                        assert_eq!((target.to_vec()?[0], counter.to_vec()?[0]), (42, 3));
                    }
                }
            }
        }
        Ok(())
    });
}

/// Attacks `DeviceLaunchRule::Refused` for batch nodes: a graph holding one, directly or in a
/// child graph, instantiated for device launch.
///
/// Break: an `Ok` exec of either. Held: `Err` both times.
#[test]
fn batch_nodes_are_refused_in_device_launch_graphs_also_inside_child_graphs() {
    require_gpu!();
    run(|| {
        let target = DeviceBuffer::<u32>::zeroed(1)?;
        let stream = stream()?;
        let direct = Graph::new()?;
        direct.add_batch_mem_op(&[MemOp::write_u32(&target.ptr(), 1)?], &[])?;
        let options = || InstantiateOptions { upload_stream: Some(&stream), ..Default::default() };
        assert!(
            direct.instantiate::<DeviceLaunch>(options()).is_err(),
            "a device-launch exec with a batch node"
        );
        let child = Graph::new()?;
        child.add_batch_mem_op(&[MemOp::write_u32(&target.ptr(), 2)?], &[])?;
        let parent = Graph::new()?;
        parent.add_kernel(noop(), LaunchConfig::new(1, 1), (), &[])?;
        if parent.add_child_graph(&child, &[]).is_ok() {
            assert!(
                parent.instantiate::<DeviceLaunch>(options()).is_err(),
                "a device-launch exec with a batch node inside a child graph"
            );
        }
        Ok(())
    });
}

// =======================================================================================
// 5. Memory of another device (two GPUs)
// =======================================================================================

/// Two GPUs. Attacks `set_batch_mem_op`, which (unlike `add_batch_mem_op`, whose
/// `check_owners_on` refuses memory the graph's device cannot reach) builds its operations
/// with `BatchParams::new` alone. A device 0 exec's node set to write device 1's memory,
/// without peer access enabled.
///
/// Break: the set is `Ok` (the launch would make device 0's front end write memory it was
/// never given access to: a fault, or with access enabled by other code, memory whose free is
/// not ordered after this device). Held: both the add and the set are `Err`.
#[test]
fn set_batch_mem_op_refuses_memory_the_execs_device_cannot_reach() {
    require_gpu!();
    {
        require_gpus!(2);
    }
    run(|| {
        let (d0, d1) = (Device::get(0)?, Device::get(1)?);
        d0.set_current()?;
        let local = DeviceBuffer::<u32>::zeroed_on(d0, 1)?;
        let remote = DeviceBuffer::<u32>::zeroed_on(d1, 1)?;
        if d0.peer_access_enabled(d1) {
            eprintln!("skipped: peer access 0 -> 1 already enabled in this process");
            return Ok(());
        }
        let graph = Graph::new_on(d0)?;
        assert!(
            graph.add_batch_mem_op(&[MemOp::write_u32(&remote.ptr(), 1)?], &[]).is_err(),
            "the add of device 1 memory"
        );
        let node = graph.add_batch_mem_op(&[MemOp::write_u32(&local.ptr(), 1)?], &[])?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let set = exec.set_batch_mem_op(&node, &[MemOp::write_u32(&remote.ptr(), 2)?]);
        assert!(
            set.is_err(),
            "set_batch_mem_op accepted device 1 memory for a device 0 exec without peer access"
        );
        Ok(())
    });
}

/// Two GPUs, in a child process (a fault would break the context). Peer access 0 -> 1 is
/// enabled, so the memory is reachable; a device 0 exec (a spinning kernel, then the batch
/// write) has its node *set* to write `WRITTEN` into device 1 buffer Y. The exec is launched,
/// then dropped, and Y dropped: Y's free is ordered on device 1 only, unless the exec's use of
/// Y was recorded (peer uses mark the allocation; execs holding another device's memory fence
/// their launches). Fresh sentinel buffers on device 1 follow.
///
/// Break: a fresh device 1 buffer receives the late write. Held: none does (or the set is
/// `Err`).
#[test]
fn a_peer_buffer_set_on_an_exec_is_freed_only_after_the_exec_ran() {
    const NAME: &str = "a_peer_buffer_set_on_an_exec_is_freed_only_after_the_exec_ran";
    if is_child(NAME) {
        peer_buffer_set_on_exec();
    }
    require_gpu!();
    {
        require_gpus!(2);
    }
    run_scenario(NAME);
}

fn peer_buffer_set_on_exec() -> ! {
    let d0 = step(Device::get(0), "device 0");
    let d1 = step(Device::get(1), "device 1");
    step(d0.set_current(), "making device 0 current");
    if !step(d0.can_access_peer(d1), "asking for peer access") {
        finish(UNAVAILABLE, "device 0 cannot access device 1");
    }
    step(d0.enable_peer_access(d1), "enabling peer access 0 -> 1");
    let stream = step(
        Stream::with_options_on(d0, StreamOptions { non_blocking: true, priority: None }),
        "a stream of device 0",
    );
    let scratch = step(DeviceBuffer::<u32>::zeroed_on(d0, 1), "scratch");
    let local = step(DeviceBuffer::<u32>::zeroed_on(d0, 1), "a local flag");
    let remote = step(DeviceBuffer::<u32>::zeroed_on(d1, N), "the device 1 victim");
    let graph = step(Graph::new_on(d0), "a graph of device 0");
    let spin = step(
        graph.add_kernel(spin_then_fill(), LaunchConfig::new(1, 1), (scratch.ptr(), 1, SPIN_CYCLES, 1), &[]),
        "the spinning kernel",
    );
    let node = step(
        graph.add_batch_mem_op(&[step(MemOp::write_u32(&local.ptr(), 1), "op")], &[&spin]),
        "the batch node",
    );
    let mut exec = step(graph.instantiate_default(), "instantiating");
    drop(graph);
    let op = step(MemOp::write_u32(&remote.ptr(), WRITTEN), "the peer write");
    if let Err(err) = exec.set_batch_mem_op(&node, &[op]) {
        finish(HELD, format!("the set of peer memory was refused: {err}"));
    }
    step(exec.launch(&stream), "launching");
    drop(exec);
    drop(remote);
    let busy = matches!(stream.is_idle(), Ok(false));
    let fresh: Vec<DeviceBuffer<u32>> = (0..4)
        .map(|_| step(DeviceBuffer::from_slice_on(d1, &vec![FRESH; N]), "a fresh device 1 buffer"))
        .collect();
    after_crux(stream.synchronize(), "waiting for device 0");
    let hit = after_crux(fresh_buffers_hit(&fresh), "reading the fresh buffers");
    if hit > 0 {
        finish(DAMAGE, format!("the exec's late peer write landed in {hit} device 1 buffers allocated after the victim's drop (busy then: {busy})"));
    }
    finish(HELD, format!("the free waited for device 0 (busy after the drops: {busy})"))
}

// =======================================================================================
// 6. Stream launches through the driver (`cuLaunchKernelEx`)
// =======================================================================================

/// Two GPUs, in a child process. Attacks the driver path's choice after other code switched
/// the device: cudarc makes device 1's primary context current while the crate remembers
/// device 0; a launch on a device 0 stream (the stream's `make_current` trusts the memory)
/// must not run on device 1 nor with device 1's kernel resolved for device 0's stream. Then the
/// same with launches alternating between streams of both devices, each checked.
///
/// Break: `Ok` with a wrong result, a crash, or a sticky error afterwards. Held: `Err`, or the
/// right result.
#[test]
fn driver_path_launches_after_cudarc_switched_devices_run_on_their_streams_device() {
    const NAME: &str = "driver_path_launches_after_cudarc_switched_devices_run_on_their_streams_device";
    if is_child(NAME) {
        launches_after_device_switch();
    }
    require_gpu!();
    {
        require_gpus!(2);
    }
    run_scenario(NAME);
}

fn launches_after_device_switch() -> ! {
    let d0 = step(Device::get(0), "device 0");
    let d1 = step(Device::get(1), "device 1");
    step(d0.set_current(), "making device 0 current");
    let s0 = step(Stream::new_on(d0), "a stream of device 0");
    let s1 = step(Stream::new_on(d1), "a stream of device 1");
    let b0 = step(DeviceBuffer::<u32>::zeroed_on(d0, N), "a buffer of device 0");
    let b1 = step(DeviceBuffer::<u32>::zeroed_on(d1, N), "a buffer of device 1");
    step(d0.set_current(), "making device 0 current");
    step(fill_pattern().launch(&s0, n_config(N), (b0.ptr(), N as u32, 1)), "a warm-up launch");
    step(s0.synchronize(), "waiting");
    let ctx1 = step(CudaContext::new(1), "cudarc's primary context of device 1");
    step(ctx1.bind_to_thread(), "making device 1 current through cudarc");
    let launched = fill_pattern().launch(&s0, n_config(N), (b0.ptr(), N as u32, 2));
    back_to_primary(0);
    drop(ctx1);
    after_crux(s0.synchronize(), "waiting for device 0");
    let v0 = after_crux(b0.to_vec(), "reading device 0's buffer");
    let seed = if launched.is_ok() { 2 } else { 1 };
    let wrong = v0.iter().enumerate().filter(|&(i, &v)| v != pattern(i as u32, seed)).count();
    if wrong > 0 {
        finish(DAMAGE, format!("a launch on device 0's stream after cudarc switched devices (Ok: {}) left {wrong} wrong elements", launched.is_ok()));
    }
    for round in 0..20u32 {
        after_crux(
            fill_pattern().launch(&s0, n_config(N), (b0.ptr(), N as u32, 100 + round)),
            "device 0 launch",
        );
        after_crux(
            fill_pattern().launch(&s1, n_config(N), (b1.ptr(), N as u32, 200 + round)),
            "device 1 launch",
        );
    }
    after_crux(s0.synchronize(), "waiting for device 0");
    after_crux(s1.synchronize(), "waiting for device 1");
    let w0 = after_crux(b0.to_vec(), "reading 0")
        .iter()
        .enumerate()
        .filter(|&(i, &v)| v != pattern(i as u32, 119))
        .count();
    let w1 = after_crux(b1.to_vec(), "reading 1")
        .iter()
        .enumerate()
        .filter(|&(i, &v)| v != pattern(i as u32, 219))
        .count();
    if w0 + w1 > 0 {
        finish(
            DAMAGE,
            format!("alternating launches on two devices: {w0} wrong on device 0, {w1} on device 1"),
        );
    }
    finish(
        HELD,
        format!("launches ran on their streams' devices (the launch under device 1: {:?})", launched.err()),
    )
}

/// Attacks the driver path from several threads at once (a new thread has no context current
/// until the crate makes one; the stream's context is read once, from whichever thread
/// launches first): four threads each queue 200 `add_scalar` launches on their own stream and
/// 50 on one shared stream (launches on one stream from several threads are ordered by CUDA
/// only as queued; `add_scalar` commutes, so the sum is exact either way).
///
/// Break: a wrong count (a launch lost, doubled, or run in another context), or an `Err`.
#[test]
fn driver_path_launches_from_many_threads_all_land() {
    require_gpu!();
    run(|| {
        Device::get(0)?.set_current()?;
        let shared_stream = Arc::new(non_blocking()?);
        let shared = Arc::new(DeviceBuffer::<u32>::zeroed(1024)?);
        let barrier = Arc::new(Barrier::new(4));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (shared_stream, shared, barrier) =
                    (shared_stream.clone(), shared.clone(), barrier.clone());
                std::thread::spawn(move || -> cuda_graph::Result<Vec<u32>> {
                    let own_stream = non_blocking()?;
                    let own = DeviceBuffer::<u32>::zeroed(1024)?;
                    barrier.wait();
                    for i in 0..200 {
                        add_scalar().launch(&own_stream, n_config(1024), (own.ptr(), 1024, 1))?;
                        if i % 4 == 0 {
                            add_scalar().launch(&shared_stream, n_config(1024), (shared.ptr(), 1024, 1))?;
                        }
                    }
                    own_stream.synchronize()?;
                    own.to_vec()
                })
            })
            .collect();
        for thread in threads {
            let own = thread.join().expect("a launching thread panicked")?;
            assert!(own.iter().all(|&v| v == 200), "a thread's own stream lost launches");
        }
        shared_stream.synchronize()?;
        assert!(shared.to_vec()?.iter().all(|&v| v == 200), "the shared stream lost launches");
        Ok(())
    });
}

/// Attacks the driver path against captures begun by other threads: thread A launches
/// `fill_pattern` on its own stream (the driver path while no capture of the crate runs) with a
/// fresh buffer each time, dropped at once; thread B repeatedly captures a `noop` on its own
/// stream (thread-local mode). A's launches must never be recorded into B's graphs (which
/// would keep none of A's buffers).
///
/// Break: a captured graph with more than B's one node, or an `Err` of A's launches, or a
/// wrong result. Held: every captured graph has exactly one node and every fill is right.
#[test]
fn driver_path_launches_racing_captures_on_other_threads_are_never_recorded() {
    // In a process of its own: the captures make the device-wide waits of the other tests'
    // drops fail (cudaErrorStreamCaptureUnsupported, recorded for `take_unreported_errors`,
    // the memory leaked rather than freed), which those tests would read as theirs.
    const NAME: &str = "driver_path_launches_racing_captures_on_other_threads_are_never_recorded";
    if is_child(NAME) {
        match racing_captures() {
            Ok(()) => finish(HELD, "no capture recorded another thread's launch"),
            Err(err) => finish(UNAVAILABLE, format!("a step was refused: {err}")),
        }
    }
    require_gpu!();
    run_scenario(NAME);
}

fn racing_captures() -> cuda_graph::Result<()> {
    {
        Device::get(0)?.set_current()?;
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let capturer = {
            let stop = stop.clone();
            std::thread::spawn(move || -> cuda_graph::Result<Vec<usize>> {
                let stream = non_blocking()?;
                let mut counts = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
                    noop().launch(&stream, LaunchConfig::new(1, 1), ())?;
                    // A device-wide wait of the other thread (a `cudaMalloc` buffer's drop waits
                    // for the device) may invalidate this capture: CUDA then ends it with
                    // cudaErrorStreamCaptureInvalidated (901), an error, never a wrong graph
                    // (seen on the H200 in the suite's run, 2026-11-29). Not what is attacked.
                    let graph = match capture.end() {
                        Ok(graph) => graph,
                        Err(err) if err.code() == Some(901) => continue,
                        Err(err) => return Err(err),
                    };
                    counts.push(graph.node_count()?);
                }
                Ok(counts)
            })
        };
        let stream = non_blocking()?;
        for seed in 0..300u32 {
            let out = DeviceBuffer::<u32>::zeroed(256)?;
            fill_pattern().launch(&stream, n_config(256), (out.ptr(), 256, seed))?;
            if seed % 50 == 0 {
                stream.synchronize()?;
                let values = out.to_vec()?;
                assert!(
                    values.iter().enumerate().all(|(i, &v)| v == pattern(i as u32, seed)),
                    "a wrong fill"
                );
            }
        }
        stream.synchronize()?;
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let counts = capturer.join().expect("the capturing thread panicked")?;
        assert!(
            counts.iter().all(|&n| n == 1),
            "a capture recorded another thread's launches: node counts {counts:?}"
        );
        Ok(())
    }
}

/// Attacks the runtime's last-error slot around the driver path: a launch that passes the
/// crate's checks but that CUDA refuses (100 KiB of dynamic shared memory for a kernel not
/// opted in beyond 48 KiB) fails in `cuLaunchKernelEx`, then in the runtime's launch; the
/// crate must report `Err` and leave no error behind in the thread's last-error slot for other
/// code (read here with the raw `cudaGetLastError`, the only `unsafe` call: it has no
/// precondition and only observes). A later good launch must work.
///
/// Break: the refused launch `Ok` with no effect, a stale error in the slot, or the next launch
/// failing.
#[test]
fn a_refused_launch_leaves_no_error_in_the_runtimes_last_error_slot() {
    require_gpu!();
    run(|| {
        Device::get(0)?.set_current()?;
        let stream = non_blocking()?;
        let out = DeviceBuffer::<u32>::zeroed(256)?;
        fill_pattern().launch(&stream, n_config(256), (out.ptr(), 256, 1))?;
        stream.synchronize()?;
        let mut config = n_config(256);
        config.shared_mem_bytes = 100 * 1024;
        let refused = fill_pattern().launch(&stream, config, (out.ptr(), 256, 2));
        // SAFETY: cudaGetLastError has no precondition; it reads (and clears) this thread's
        // last-error slot, which is what this probe observes.
        let last = unsafe { cuda_graph::sys::cudaGetLastError() };
        assert_eq!(
            last,
            cuda_graph::sys::cudaError::cudaSuccess,
            "the launch (Ok: {}) left an error in the slot",
            refused.is_ok()
        );
        stream.synchronize()?;
        let seed = if refused.is_ok() { 2 } else { 1 };
        assert!(
            out.to_vec()?.iter().enumerate().all(|(i, &v)| v == pattern(i as u32, seed)),
            "the result does not match the launch's answer"
        );
        fill_pattern().launch(&stream, n_config(256), (out.ptr(), 256, 3))?;
        stream.synchronize()?;
        assert!(
            out.to_vec()?.iter().enumerate().all(|(i, &v)| v == pattern(i as u32, 3)),
            "the next launch did not run"
        );
        Ok(())
    });
}

/// In a child process (a dangling handle may crash). Attacks the kernel handles the driver
/// path launches (`launch_handle`, a `CUkernel` looked up once): kernels of run-time modules
/// (NVRTC) with the same name and different code, loaded and dropped in turn (each library
/// unloaded when its last kernel goes). A handle cached by name or stub across modules would
/// launch the unloaded library's kernel.
///
/// Break: a launch running another module's code, an error, or a crash. Held: each module's
/// kernel writes its own value.
#[test]
fn kernels_of_reloaded_modules_run_their_own_code() {
    const NAME: &str = "kernels_of_reloaded_modules_run_their_own_code";
    if is_child(NAME) {
        reloaded_modules();
    }
    require_gpu!();
    if cuda_graph::kernel::nvrtc::version().is_err() {
        eprintln!("skipped: no NVRTC");
        return;
    }
    run_scenario(NAME);
}

fn reloaded_modules() -> ! {
    step(Device::get(0).and_then(Device::set_current), "making device 0 current");
    let stream = step(Stream::new(), "a stream");
    let out = step(DeviceBuffer::<u32>::zeroed(256), "the buffer");
    for round in 0..12u32 {
        let source = format!(
            "extern \"C\" __global__ void stamp(unsigned* out, unsigned n) {{ unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = {} + i; }}",
            1000 * (round + 1)
        );
        let module = step(Module::from_cuda_source(&source), "compiling and loading");
        // SAFETY: `stamp(unsigned* out, unsigned n)` writes out[i] only for i < n, and n is the
        // buffer's length below; the parameters are exactly these Rust types.
        let kernel: Kernel<(DevicePtr<u32>, u32)> =
            step(unsafe { module.kernel_unchecked_types("stamp") }, "the kernel");
        drop(module);
        after_crux(kernel.launch(&stream, n_config(256), (out.ptr(), 256)), "launching");
        after_crux(stream.synchronize(), "waiting");
        let values = after_crux(out.to_vec(), "reading");
        let want = 1000 * (round + 1);
        let wrong = values.iter().enumerate().filter(|&(i, &v)| v != want + i as u32).count();
        if wrong > 0 {
            finish(
                DAMAGE,
                format!("round {round}: {wrong} elements not this module's (first {})", values[0]),
            );
        }
        drop(kernel); // the library unloads
    }
    finish(HELD, "each module's kernel ran its own code")
}
