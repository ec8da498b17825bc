//! Red-team probes of the boundaries in SOUNDNESS.md, "Things of other code": safe
//! code, `cuda-graph` and cudarc's safe API only. Each probe FAILS when the hole it aims at
//! is there and PASSES when the crate holds.
//!
//! Every scenario runs in a child process (this test binary again, selected by an
//! environment variable) with a time limit: a scenario may hang (the capture gate probe), or
//! make a kernel fault on freed memory, which would break the CUDA context of every other
//! test in the binary. The child ends with one `VERDICT` line and an exit code:
//! - 0: the crate held;
//! - 3: the hole was shown (damage counted: a buffer allocated after the victim was dropped
//!   and written by the victim's work, a read that saw a later owner's data, memory freed
//!   while the work using it still ran, a graph node that dangled);
//! - 4: CUDA itself refused a step of the attack here (the path is not open on this driver):
//!   counted as held, and printed.
//!
//! Anything else (no verdict in time, a crash, a panic) fails the probe.
#![cfg(feature = "cudarc")]

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use cuda_graph::graph::{CaptureMode, Graph};
use cuda_graph::interop::cudarc::CudarcSlice;
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{
    take_unreported_errors, Device, DeviceBuffer, MappedBuffer, PinnedBuffer, Stream, StreamOptions,
};
use cudarc::driver::CudaContext;
use gpu_test_support::require_gpu;
use test_kernels::{fill_pattern, pattern, spin_then_fill};

/// The environment variable naming the scenario the child runs.
const SCENARIO: &str = "CUDA_GRAPH_RED_TEAM_SCENARIO";
const HELD: i32 = 0;
const DAMAGE: i32 = 3;
const UNAVAILABLE: i32 = 4;
/// How long a scenario may take before it counts as hung (they take seconds).
const LIMIT: Duration = Duration::from_secs(60);

/// Elements of the victim buffers (4 MiB of `u32`).
const N: u32 = 1 << 20;
/// Clock cycles `spin_then_fill` spins: about 150 ms on an H200 (1.98 GHz), far longer than
/// a drop and an allocation take on the host.
const SPIN_CYCLES: u64 = 300_000_000;
/// What the victim's kernel writes, and what a fresh buffer holds (never equal).
const KERNEL_VALUE: u32 = 7;
const FRESH_VALUE: u32 = 0x5A5A_5A5A;

fn config() -> LaunchConfig {
    LaunchConfig::for_elements(N, 256)
}

fn non_blocking_stream() -> cuda_graph::Result<Stream> {
    Stream::with_options(StreamOptions { non_blocking: true, priority: None })
}

// ---------------------------------------------------------------------------------------
// Child-process harness
// ---------------------------------------------------------------------------------------

/// True in the child that runs `name`'s scenario.
fn is_child(name: &str) -> bool {
    std::env::var(SCENARIO).is_ok_and(|scenario| scenario == name)
}

/// Ends the child with `code` and a line saying why.
fn finish(code: i32, line: impl std::fmt::Display) -> ! {
    println!("VERDICT {code}: {line}");
    let _ = std::io::stdout().flush();
    std::process::exit(code)
}

/// A setup step of the attack: when CUDA (or cudarc) refuses it, the path is not open here.
fn step<T, E: std::fmt::Debug>(result: Result<T, E>, what: &str) -> T {
    match result {
        Ok(value) => value,
        Err(err) => finish(UNAVAILABLE, format!("{what} was refused: {err:?}")),
    }
}

/// A step after the attack's crux: an error here means the victim's work met freed memory
/// (a fault, say), which is the hole.
fn after_crux<T, E: std::fmt::Debug>(result: Result<T, E>, what: &str) -> T {
    match result {
        Ok(value) => value,
        Err(err) => {
            finish(DAMAGE, format!("{what} failed after the free: {err:?} (work ran on freed memory)"))
        }
    }
}

/// Makes device 0's primary context current again (`cudaSetDevice` binds it), after the
/// crux of a scenario that made cudarc's non-primary context current.
fn back_to_primary() {
    step(Device::get(0).and_then(Device::set_current), "making device 0's primary context current again");
}

/// Runs this binary again as the child of scenario `name`, and judges its exit. One scenario
/// at a time (the timings assume the GPU is otherwise idle).
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

/// The drop errors the crate recorded, as text (a free CUDA refused leaks: no damage).
fn drop_errors() -> String {
    take_unreported_errors().iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

// ---------------------------------------------------------------------------------------
// 1. A lent buffer recorded into cudarc's own capture
// ---------------------------------------------------------------------------------------

// (The review's probes of `DeviceBuffer::lend_to_cudarc` went with its safety: it is `unsafe`,
// and cudarc work on the slice, its own captures included, is the caller's to finish.)

/// Aims at "Several devices" / H1-H2 ("a stale value ... never decide[s] where memory lives
/// or is freed") and the `cudaMalloc` free (`FreeKind::Synchronous`): a buffer a kernel still
/// writes, dropped while cudarc's non-primary context of the same device is current.
///
/// Failure: the drop returns (and frees) while the kernel still runs, and the kernel's late
/// write lands in a buffer allocated after it (or faults).
#[test]
fn a_buffer_dropped_while_a_non_primary_context_is_current_is_freed_after_its_kernel() {
    const NAME: &str = "a_buffer_dropped_while_a_non_primary_context_is_current_is_freed_after_its_kernel";
    if is_child(NAME) {
        buffer_dropped_under_other_context(false);
    }
    require_gpu!();
    run_scenario(NAME);
}

/// The same for stream-ordered memory (`alloc_async` on a blocking stream, whose free is
/// queued on "the" legacy stream): with the non-primary context current, that is the other
/// context's legacy stream, ordered after nothing of the crate's, and the crate's pool hands
/// the memory to the next allocation at once.
///
/// Failure: as above.
#[test]
fn a_stream_ordered_buffer_dropped_while_a_non_primary_context_is_current_is_freed_after_its_kernel() {
    const NAME: &str =
        "a_stream_ordered_buffer_dropped_while_a_non_primary_context_is_current_is_freed_after_its_kernel";
    if is_child(NAME) {
        buffer_dropped_under_other_context(true);
    }
    require_gpu!();
    run_scenario(NAME);
}

fn buffer_dropped_under_other_context(stream_ordered: bool) -> ! {
    step(Device::get(0).and_then(Device::set_current), "making device 0 current");
    let other = step(CudaContext::new_non_primary(0, 0), "cudarc's non-primary context of device 0");
    // Made by the crate after `other` became current: in the primary context (H2's fix).
    let working =
        step(if stream_ordered { Stream::new() } else { non_blocking_stream() }, "the kernel's stream");
    let fresh_stream = step(non_blocking_stream(), "the fresh buffer's stream");
    let buffer = if stream_ordered {
        let buffer =
            step(DeviceBuffer::<u32>::alloc_async(N as usize, &working), "DeviceBuffer::alloc_async");
        step(working.synchronize(), "waiting for the allocation");
        buffer
    } else {
        step(DeviceBuffer::<u32>::zeroed(N as usize), "DeviceBuffer::zeroed")
    };
    let address = buffer.as_raw() as usize;
    step(
        spin_then_fill().launch(&working, config(), (buffer.ptr(), N, SPIN_CYCLES, KERNEL_VALUE)),
        "the spinning kernel",
    );
    step(other.bind_to_thread(), "making cudarc's non-primary context current");
    drop(buffer); // must wait for the kernel before the memory is freed
    back_to_primary();
    let busy_after_drop = matches!(working.is_idle(), Ok(false));
    let errors = drop_errors();
    let fresh = if stream_ordered {
        let mut fresh =
            step(DeviceBuffer::<u32>::alloc_async(N as usize, &fresh_stream), "the fresh allocation");
        step(fresh.memset_async(0x5A, &fresh_stream), "filling the fresh buffer");
        step(fresh_stream.synchronize(), "waiting for the fresh buffer");
        fresh
    } else {
        step(DeviceBuffer::from_slice(&vec![FRESH_VALUE; N as usize]), "the fresh buffer")
    };
    let same = fresh.as_raw() as usize == address;
    after_crux(working.synchronize(), "waiting for the kernel");
    let written =
        after_crux(fresh.to_vec(), "reading the fresh buffer").iter().filter(|&&v| v == KERNEL_VALUE).count();
    // A stream-ordered free is queued, not waited for: only a `cudaMalloc` free must return
    // after the kernel.
    let freed_under_kernel = !stream_ordered && busy_after_drop && errors.is_empty();
    if written > 0 || freed_under_kernel {
        finish(
            DAMAGE,
            format!(
                "the drop returned (and freed) while the kernel still ran: {freed_under_kernel} (drop \
                 errors: [{errors}]); the kernel wrote {written} of {N} elements of a buffer allocated \
                 after its own was dropped (same address: {same})"
            ),
        );
    }
    finish(
        HELD,
        format!(
            "the free waited for the kernel (busy after drop: {busy_after_drop}; drop errors: [{errors}])"
        ),
    )
}

/// Aims at "Memory the host and the device share (mapped)": "the last owner's drop waits for
/// every device whose primary context is active ... A context made with the raw driver API
/// (not the runtime's primary context) is not seen: using one needs `unsafe` calls". cudarc
/// makes one safely, and merely having it current at the drop makes the wait land in it:
/// `cudaFreeHost` then runs under a kernel that still writes the memory (host memory freed
/// under running work).
///
/// Failure: the drop returns while the kernel still runs with no error recorded, or the
/// kernel's write lands in mapped memory allocated after the drop, or faults.
#[test]
fn mapped_memory_dropped_while_a_non_primary_context_is_current_is_freed_after_its_kernel() {
    const NAME: &str =
        "mapped_memory_dropped_while_a_non_primary_context_is_current_is_freed_after_its_kernel";
    if is_child(NAME) {
        mapped_dropped_under_other_context();
    }
    require_gpu!();
    run_scenario(NAME);
}

fn mapped_dropped_under_other_context() -> ! {
    step(Device::get(0).and_then(Device::set_current), "making device 0 current");
    let other = step(CudaContext::new_non_primary(0, 0), "cudarc's non-primary context of device 0");
    let working = step(non_blocking_stream(), "the kernel's stream");
    let mapped = step(MappedBuffer::<u32>::zeroed(N as usize), "the mapped buffer");
    let address = mapped.ptr().addr();
    step(
        spin_then_fill().launch(&working, config(), (mapped.ptr(), N, SPIN_CYCLES, KERNEL_VALUE)),
        "the spinning kernel",
    );
    step(other.bind_to_thread(), "making cudarc's non-primary context current");
    drop(mapped); // must wait for the kernel before cudaFreeHost
    back_to_primary();
    let busy_after_drop = matches!(working.is_idle(), Ok(false));
    let errors = drop_errors();
    let fresh = step(MappedBuffer::from_slice(&vec![FRESH_VALUE; N as usize]), "the fresh mapped buffer");
    let same = fresh.ptr().addr() == address;
    after_crux(working.synchronize(), "waiting for the kernel");
    let written = fresh.to_vec().iter().filter(|&&v| v == KERNEL_VALUE).count();
    if written > 0 || (busy_after_drop && errors.is_empty()) {
        finish(
            DAMAGE,
            format!(
                "cudaFreeHost ran while the kernel still wrote the mapped memory: {busy_after_drop} (drop \
                 errors: [{errors}]); the kernel wrote {written} of {N} elements of mapped memory allocated \
                 after the drop (same address: {same})"
            ),
        );
    }
    finish(
        HELD,
        format!(
            "the free waited for the kernel (busy after drop: {busy_after_drop}; drop errors: [{errors}])"
        ),
    )
}

/// Aims at the new `CudarcSlice` record (SOUNDNESS.md, "Things of other code", item 3,
/// `FreeKind::Foreign`) and `CudarcSlice::into_cudarc`: "waits first for its device and every other
/// device whose work used it, since stream launches of this crate that used it hold no share". The
/// wait is `on_device` again: with cudarc's non-primary context current it waits for that context,
/// and cudarc gets its slice back (and frees it, on its legacy stream) while the crate's
/// kernel still writes it.
///
/// Failure: `into_cudarc` returns while the kernel still runs, or the kernel's late write
/// lands in cudarc's next allocation.
#[test]
fn a_cudarc_slice_given_back_while_a_non_primary_context_is_current_waits_for_the_crates_kernel() {
    const NAME: &str =
        "a_cudarc_slice_given_back_while_a_non_primary_context_is_current_waits_for_the_crates_kernel";
    if is_child(NAME) {
        cudarc_slice_given_back_under_other_context();
    }
    require_gpu!();
    run_scenario(NAME);
}

fn cudarc_slice_given_back_under_other_context() -> ! {
    use cudarc::driver::DevicePtr as _;
    step(Device::get(0).and_then(Device::set_current), "making device 0 current");
    let ctx0 = step(CudaContext::new(0), "cudarc's primary context of device 0");
    let cudarc_default = ctx0.default_stream();
    let shared = step(
        CudarcSlice::new(step(cudarc_default.alloc_zeros::<u32>(N as usize), "cudarc's slice")),
        "CudarcSlice::new",
    );
    let address = shared.ptr().addr();
    let other = step(CudaContext::new_non_primary(0, 0), "cudarc's non-primary context of device 0");
    let working = step(non_blocking_stream(), "the kernel's stream");
    step(
        spin_then_fill().launch(&working, config(), (shared.ptr(), N, SPIN_CYCLES, KERNEL_VALUE)),
        "the spinning kernel",
    );
    step(other.bind_to_thread(), "making cudarc's non-primary context current");
    let back = match shared.into_cudarc() {
        Ok(back) => back,
        Err(_) => finish(HELD, "into_cudarc refused to give the slice back"),
    };
    back_to_primary();
    let busy_after_give_back = matches!(working.is_idle(), Ok(false));
    drop(back); // cudarc frees it on its legacy stream, not ordered after a non-blocking stream
    let next = step(cudarc_default.alloc_zeros::<u32>(N as usize), "cudarc's next allocation");
    let same = {
        let (addr, _record) = next.device_ptr(&cudarc_default);
        addr == address
    };
    after_crux(working.synchronize(), "waiting for the kernel");
    after_crux(cudarc_default.synchronize(), "waiting for cudarc");
    let written = after_crux(cudarc_default.clone_dtoh(&next), "reading cudarc's next allocation")
        .iter()
        .filter(|&&v| v == KERNEL_VALUE)
        .count();
    if written > 0 || busy_after_give_back {
        finish(
            DAMAGE,
            format!(
                "CudarcSlice::into_cudarc returned while the crate's kernel still wrote the slice: \
                 {busy_after_give_back}; the kernel wrote {written} of {N} elements of cudarc's next \
                 allocation (same address: {same})"
            ),
        );
    }
    finish(HELD, "into_cudarc waited for the crate's kernel")
}

// ---------------------------------------------------------------------------------------
// 7. The capture gate taken twice by one thread
// ---------------------------------------------------------------------------------------

/// Aims at the capture gate ("Never held across another `enter_*`", `capture_gate/mod.rs`)
/// and the change to `Event::record` for things of other code, which now enters the gate
/// itself (SOUNDNESS.md, "The red team of this change"). Pinned
/// copies (`copy_from_pinned_async`) and launches of execs with pinned memcpy nodes hold the
/// gate's read guard while they fence the pinned side (`Event::fence` -> `Event::record` ->
/// the read guard again). `std::sync::RwLock` blocks a new reader while a writer waits, so a
/// capture beginning or ending on another thread between the two reads (a writer waiting for
/// the first) deadlocks both threads for good. No `unsafe`, no cudarc: a hang the docs do not
/// allow ("hangs remain possible when a `queue_raw_work` closure enters the gate again" is
/// the only one listed).
///
/// Failure: the child makes no progress within the time limit (both paths are raced; the
/// child prints how far each got).
#[test]
fn pinned_copies_and_exec_launches_racing_captures_do_not_deadlock() {
    const NAME: &str = "pinned_copies_and_exec_launches_racing_captures_do_not_deadlock";
    if is_child(NAME) {
        pinned_work_racing_captures();
    }
    require_gpu!();
    run_scenario(NAME);
}

/// How long each racing thread queues work.
const RACE: Duration = Duration::from_secs(6);

fn pinned_work_racing_captures() -> ! {
    step(Device::get(0).and_then(Device::set_current), "making device 0 current");
    let stop = Arc::new(AtomicBool::new(false));
    let copies = Arc::new(AtomicU64::new(0));
    let launches = Arc::new(AtomicU64::new(0));
    let captures = Arc::new(AtomicU64::new(0));

    let copier = {
        let (stop, copies) = (stop.clone(), copies.clone());
        std::thread::spawn(move || -> cuda_graph::Result<()> {
            Device::get(0)?.set_current()?;
            let stream = non_blocking_stream()?;
            let pinned = PinnedBuffer::from_slice(&[3u32; 64])?;
            let mut device = DeviceBuffer::<u32>::zeroed(64)?;
            while !stop.load(Ordering::Relaxed) {
                device.copy_from_pinned_async(&pinned, &stream)?;
                if copies.fetch_add(1, Ordering::Relaxed) % 256 == 0 {
                    stream.synchronize()?;
                }
            }
            stream.synchronize()
        })
    };
    let launcher = {
        let (stop, launches) = (stop.clone(), launches.clone());
        std::thread::spawn(move || -> cuda_graph::Result<()> {
            Device::get(0)?.set_current()?;
            let stream = non_blocking_stream()?;
            let pinned = PinnedBuffer::from_slice(&[4u32; 64])?;
            let device = DeviceBuffer::<u32>::zeroed(64)?;
            let graph = Graph::new()?;
            graph.add_memcpy_from_host(&device.ptr(), &pinned, 64, &[])?;
            let exec = graph.instantiate_default()?;
            while !stop.load(Ordering::Relaxed) {
                exec.launch(&stream)?;
                if launches.fetch_add(1, Ordering::Relaxed) % 256 == 0 {
                    stream.synchronize()?;
                }
            }
            stream.synchronize()
        })
    };
    let capturer = {
        let (stop, captures) = (stop.clone(), captures.clone());
        std::thread::spawn(move || -> cuda_graph::Result<()> {
            Device::get(0)?.set_current()?;
            let stream = non_blocking_stream()?;
            while !stop.load(Ordering::Relaxed) {
                // Begin and end each take the gate's write guard.
                let graph = stream.begin_capture(CaptureMode::Relaxed)?.end()?;
                drop(graph);
                captures.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        })
    };

    let start = Instant::now();
    let mut last = (0, 0, 0);
    while start.elapsed() < RACE {
        std::thread::sleep(Duration::from_millis(500));
        let now = (
            copies.load(Ordering::Relaxed),
            launches.load(Ordering::Relaxed),
            captures.load(Ordering::Relaxed),
        );
        println!("progress: {} pinned copies, {} exec launches, {} captures", now.0, now.1, now.2);
        last = now;
    }
    stop.store(true, Ordering::Relaxed);
    // A deadlocked thread never returns: the parent's time limit ends the child then.
    for (what, thread) in [("pinned copies", copier), ("exec launches", launcher), ("captures", capturer)] {
        match thread.join() {
            Ok(Ok(())) => {}
            Ok(Err(err)) => finish(UNAVAILABLE, format!("the {what} thread was refused: {err}")),
            Err(_) => finish(UNAVAILABLE, format!("the {what} thread panicked")),
        }
    }
    finish(
        HELD,
        format!("no deadlock: {} pinned copies, {} exec launches, {} captures", last.0, last.1, last.2),
    )
}

// ---------------------------------------------------------------------------------------
// 8. A graph node made while cudarc's non-primary context is current
// ---------------------------------------------------------------------------------------

/// Aims at H2 ("every call that makes or looks up something bound to a context ... first
/// makes the primary context of the current device current") and "a handle used in a
/// destroyed context": `GraphBuilder::add_kernel` binds only the remembered device
/// (`CurrentFor::new`, no CUDA call when device 0 is remembered current), so with cudarc's
/// non-primary context of device 0 current, the runtime resolves the kernel node's function
/// in that context. cudarc then destroys the context (its drop, safe), and the graph is
/// instantiated and launched.
///
/// Failure: instantiating or launching the graph fails once the context is gone, the kernel
/// writes nothing, or the child crashes. (A refusal of `add_kernel` itself counts as held.)
#[test]
fn a_kernel_node_added_while_a_non_primary_context_is_current_outlives_that_context() {
    const NAME: &str = "a_kernel_node_added_while_a_non_primary_context_is_current_outlives_that_context";
    if is_child(NAME) {
        kernel_node_under_other_context();
    }
    require_gpu!();
    run_scenario(NAME);
}

fn kernel_node_under_other_context() -> ! {
    step(Device::get(0).and_then(Device::set_current), "making device 0 current");
    let stream = step(Stream::new(), "a stream");
    let buffer = step(DeviceBuffer::<u32>::zeroed(N as usize), "the buffer");
    // The kernel's type check runs now, so that adding the node below makes no CUDA call
    // that would bind the primary context again.
    step(fill_pattern().launch(&stream, config(), (buffer.ptr(), N, 1)), "a first launch");
    step(stream.synchronize(), "waiting for it");
    let graph = step(Graph::new(), "a graph");
    let other = step(CudaContext::new_non_primary(0, 0), "cudarc's non-primary context of device 0");
    step(other.bind_to_thread(), "making cudarc's non-primary context current");
    let added = graph.add_kernel(fill_pattern(), config(), (buffer.ptr(), N, 5), &[]);
    drop(other); // cudarc destroys its context
    if let Err(err) = added {
        finish(HELD, format!("add_kernel refused while the other context was current: {err}"));
    }
    let exec =
        after_crux(graph.instantiate_default(), "instantiating the graph after the context was destroyed");
    after_crux(exec.launch(&stream), "launching it");
    after_crux(stream.synchronize(), "waiting for it");
    let values = after_crux(buffer.to_vec(), "reading the buffer");
    let wrong = values.iter().enumerate().filter(|&(i, &v)| v != pattern(i as u32, 5)).count();
    if wrong > 0 {
        finish(
            DAMAGE,
            format!("the kernel node made in the destroyed context left {wrong} of {N} elements unwritten"),
        );
    }
    finish(HELD, "the kernel node ran in the primary context")
}

/// The stream launch beside probe 9's node: a kernel launched on one of the crate's streams
/// while cudarc's non-primary context of the same device is current (a launch takes no CUDA
/// call to check the current device when the crate remembers it). The launch must either be
/// refused or run in the stream's (primary) context, and nothing may crash once cudarc
/// destroys its context.
#[test]
fn a_stream_launch_while_a_non_primary_context_is_current_runs_in_the_streams_context() {
    const NAME: &str = "a_stream_launch_while_a_non_primary_context_is_current_runs_in_the_streams_context";
    if is_child(NAME) {
        stream_launch_under_other_context();
    }
    require_gpu!();
    run_scenario(NAME);
}

fn stream_launch_under_other_context() -> ! {
    step(Device::get(0).and_then(Device::set_current), "making device 0 current");
    let stream = step(Stream::new(), "a stream");
    let buffer = step(DeviceBuffer::<u32>::zeroed(N as usize), "the buffer");
    step(fill_pattern().launch(&stream, config(), (buffer.ptr(), N, 1)), "a first launch");
    step(stream.synchronize(), "waiting for it");
    let other = step(CudaContext::new_non_primary(0, 0), "cudarc's non-primary context of device 0");
    step(other.bind_to_thread(), "making cudarc's non-primary context current");
    let launched = fill_pattern().launch(&stream, config(), (buffer.ptr(), N, 6));
    drop(other); // cudarc destroys its context
    if let Err(err) = launched {
        finish(HELD, format!("the launch was refused while the other context was current: {err}"));
    }
    after_crux(stream.synchronize(), "waiting for the launch");
    let values = after_crux(buffer.to_vec(), "reading the buffer");
    let wrong = values.iter().enumerate().filter(|&(i, &v)| v != pattern(i as u32, 6)).count();
    if wrong > 0 {
        finish(DAMAGE, format!("the launch left {wrong} of {N} elements unwritten"));
    }
    finish(HELD, "the launch ran in the stream's context")
}
