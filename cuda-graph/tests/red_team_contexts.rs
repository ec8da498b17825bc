//! Red-team probes of the recorded primary contexts (`runtime::primary`: `Device::with_current`
//! and the runtime wrapper skip `cudaGetDevice` + `cudaSetDevice` when the driver's current
//! context is a recorded primary one), of the kernel's `CUfunction` recorded for the first
//! primary context it was launched in (`kernel::driver_launch::DriverHandles`), and of the
//! trimmed bookkeeping of `GraphExec::update` (the live count of pinned allocations, the
//! early-out of `exec_pool::owner_leaving`).
//!
//! Safe code only, plus cudarc's safe API (the `cudarc` feature the dev-dependency turns on)
//! and the documented contracts of `Stream::borrow_cudarc` and `Module::kernel`. Each probe
//! asserts the right outcome: the right values read back, or a clean `Err` where CUDA may
//! refuse a step (then nothing may have been written, and no error may be left unreported).

#![cfg(feature = "cudarc")]

mod graph_support;

use std::sync::{Arc, Barrier};
use std::thread;

use cuda_graph::graph::{exec_pool_stats, DeviceLaunch, Graph, HostLaunch, KernelNode};
use cuda_graph::kernel::{Kernel, LaunchConfig, Module};
use cuda_graph::{take_unreported_errors, CudaError, Device, DeviceBuffer, DevicePtr, PinnedBuffer, Stream};
use cudarc::driver::CudaContext;
use gpu_test_support::{require_gpu, require_gpus};
use graph_support::{one, per_element, run, stream};
use module_images::PLAIN_PTX;
use test_kernels::{add_scalar, fill_pattern, increment_counter, pattern, spin_then_fill};

/// Elements of the buffers the launches write.
const N: u32 = 4096;
/// About 2 ms of spinning on an H200: long enough that a host read that does not wait for
/// the launch reads the buffer before the kernel filled it.
const SPIN: u64 = 4_000_000;

type Add = Kernel<(DevicePtr<u32>, u32, u32)>;

fn config() -> LaunchConfig {
    per_element(N)
}

/// `mod_add` (`data[i] += value`) of a freshly loaded PTX module: a kernel whose handles
/// (its `CUkernel`, its recorded `CUfunction`) no other test of this binary has touched.
fn fresh_add() -> Result<(Module, Add), CudaError> {
    let module = Module::from_ptx(PLAIN_PTX)?;
    // SAFETY: mod_add writes data[i] only for i < n; every launch here passes n <= data.len().
    let add = unsafe { module.kernel("mod_add") }?;
    Ok((module, add))
}

/// `pattern(i, seed) + added` for every element (what `fill_pattern` with `seed` leaves,
/// after launches that added `added` in all).
fn patterned(seed: u32, added: u32) -> Vec<u32> {
    (0..N).map(|i| pattern(i, seed).wrapping_add(added)).collect()
}

// =======================================================================================
// 1. A kernel's recorded CUfunction (DriverHandles::for_context)
// =======================================================================================

/// Attacks `DriverHandles::for_context`: the kernel's first launch happens while cudarc's
/// non-primary context of device 0 is current (the driver path must then step aside: the
/// stream's context is not current, and nothing may be recorded for that context); the
/// kernel is then launched with the primary context current (which records its
/// `CUfunction`), and again with the non-primary one current (which must not be handed that
/// `CUfunction`), and after cudarc destroyed its context. A stream of the non-primary
/// context cannot be borrowed (refused), so no launch can queue into that context.
///
/// Held: borrowing cudarc's non-primary stream is `Err`; every launch adds what it was asked
/// to; no error is left unreported.
#[test]
fn a_kernel_first_launched_while_a_non_primary_context_is_current_runs_right_throughout() {
    require_gpu!();
    let device = Device::get(0).unwrap();
    device.set_current().unwrap();
    let (_module, add) = fresh_add().unwrap();
    let mine = stream().unwrap();
    let data = DeviceBuffer::from_slice(&patterned(2, 0)).unwrap();
    let other = CudaContext::new_non_primary(0, 0).expect("cudarc's non-primary context of device 0");
    let cudarc_stream = other.new_stream().expect("a stream of the non-primary context");
    // SAFETY: no other thread captures `cudarc_stream` while it is borrowed (it is not).
    let borrowed = unsafe { Stream::borrow_cudarc(&cudarc_stream) };
    assert!(borrowed.is_err(), "a stream of a non-primary context was borrowed");
    drop(borrowed);

    let mut added = 0;
    for (round, current) in
        ["non-primary", "primary", "non-primary", "primary", "non-primary"].iter().enumerate()
    {
        if *current == "primary" {
            device.set_current().unwrap();
        } else {
            other.bind_to_thread().expect("binding cudarc's context");
        }
        let value = round as u32 + 1;
        add.launch(&mine, config(), (data.ptr(), N, value)).unwrap();
        add_scalar().launch(&mine, config(), (data.ptr(), N, 1)).unwrap();
        added += value + 1;
        mine.synchronize().unwrap();
        assert_eq!(data.to_vec().unwrap(), patterned(2, added), "round {round}, {current} context current");
    }
    drop(cudarc_stream);
    drop(other); // cudarc destroys its context
    add.launch(&mine, config(), (data.ptr(), N, 100)).unwrap();
    mine.synchronize().unwrap();
    assert_eq!(data.to_vec().unwrap(), patterned(2, added + 100), "after the context's destruction");
    assert_eq!(take_unreported_errors(), []);
}

/// Attacks the recording through contexts that come and go: non-primary contexts of device 0
/// are made and destroyed in turn (a new one may get a destroyed one's address), and the crate
/// makes streams and buffers, directly and through `with_current`, and launches, while each
/// is current. A non-primary context must never be taken for the primary one
/// (`runtime::primary` records only after the crate's `cudaSetDevice` and from the crate's
/// streams), so what the crate makes lives in the primary context and outlives cudarc's.
///
/// Held: what the crate made while a non-primary context was current still works, with the
/// right values, after cudarc destroyed it; no unreported error.
#[test]
fn non_primary_contexts_made_and_destroyed_in_turn_are_never_taken_for_the_primary() {
    require_gpu!();
    let device = Device::get(0).unwrap();
    device.set_current().unwrap();
    let (_module, add) = fresh_add().unwrap();
    let mine = stream().unwrap();
    let mine_data = DeviceBuffer::<u32>::zeroed(N as usize).unwrap();
    let mut expected_mine = 0u32;
    for round in 0..6u32 {
        let other = CudaContext::new_non_primary(0, 0).expect("cudarc's non-primary context");
        // Made by the crate while the non-primary context is current: must be the primary's.
        other.bind_to_thread().unwrap();
        let made_stream = stream().unwrap();
        other.bind_to_thread().unwrap();
        let made_data = DeviceBuffer::<u32>::zeroed(N as usize).unwrap();
        other.bind_to_thread().unwrap();
        let via_with_current =
            device.with_current(|| DeviceBuffer::<u32>::from_slice(&patterned(round, 0))).unwrap();
        other.bind_to_thread().unwrap();
        add.launch(&made_stream, config(), (made_data.ptr(), N, 4)).unwrap();
        other.bind_to_thread().unwrap();
        add.launch(&mine, config(), (mine_data.ptr(), N, 2)).unwrap();
        drop(other); // cudarc destroys its context

        add.launch(&mine, config(), (mine_data.ptr(), N, 3)).unwrap();
        expected_mine += 5;
        add.launch(&made_stream, config(), (made_data.ptr(), N, 9)).unwrap();
        add.launch(&made_stream, config(), (via_with_current.ptr(), N, 1)).unwrap();
        made_stream.synchronize().unwrap();
        mine.synchronize().unwrap();
        assert_eq!(made_data.to_vec().unwrap(), vec![13; N as usize], "round {round}: made under it");
        assert_eq!(via_with_current.to_vec().unwrap(), patterned(round, 1), "round {round}: with_current");
        assert_eq!(mine_data.to_vec().unwrap(), vec![expected_mine; N as usize], "round {round}: mine");
    }
    assert_eq!(take_unreported_errors(), []);
}

/// `mod_add`'s name in a module of other code: `data[i] = data[i] * 3 + value`, so that a
/// launch that ran the other module's `mod_add` (`data[i] += value`) reads back differently.
const TRIPLE_ADD: &str = "extern \"C\" __global__ void mod_add(unsigned* data, unsigned n, unsigned value) \
     { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) data[i] = data[i] * 3u + value; }";

/// Attacks a recorded `CUfunction` outliving its library: a module's kernel is launched in
/// the primary context (its function recorded), the kernel and the module are dropped (the
/// library unloaded), and a module with another kernel of the same name and signature is
/// loaded (it may get the first library's addresses), in turn, many times. Each launch must
/// run its own module's code: a function recorded for the first kernel and handed to the
/// second (or dangling) would run the other code, or crash.
///
/// Held: every launch's result is its own module's arithmetic; no unreported error.
#[test]
fn a_module_kernel_dropped_and_reloaded_runs_the_reloaded_code() {
    require_gpu!();
    run(|| {
        Device::get(0)?.set_current()?;
        let stream = stream()?;
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let mut model = vec![0u32; N as usize];
        for round in 0..16u32 {
            let triple = round % 2 == 1;
            let module =
                if triple { Module::from_cuda_source(TRIPLE_ADD)? } else { Module::from_ptx(PLAIN_PTX)? };
            // SAFETY: both `mod_add`s write data[i] only for i < n; n = data.len() here.
            let add: Add = unsafe { module.kernel_unchecked_types("mod_add") }?;
            drop(module); // the kernel keeps its library
            for launch in 0..3u32 {
                add.launch(&stream, config(), (data.ptr(), N, round + launch))?;
                for value in &mut model {
                    *value = if triple {
                        value.wrapping_mul(3).wrapping_add(round + launch)
                    } else {
                        value.wrapping_add(round + launch)
                    };
                }
            }
            stream.synchronize()?;
            assert_eq!(data.to_vec()?, model, "round {round} ({})", if triple { "triple" } else { "plain" });
            drop(add); // the library goes with the last kernel
        }
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}

// =======================================================================================
// 2. Threads that never used CUDA, and the fast path of `Device::with_current`
// =======================================================================================

/// Attacks the fast paths from threads with no context current (`cuCtxGetCurrent` gives
/// none: the slow path must bind the primary context) and from threads where cudarc made the
/// device's primary context current behind the crate's back (`CudaContext::new(0)` retains
/// the same primary context: the fast path may then skip the runtime's calls). Each fresh
/// thread launches a static kernel (its function recorded by whichever thread came first) and
/// a module kernel on a stream made elsewhere, and allocates through `with_current`.
///
/// Held: every launch lands (the counters add up); every buffer is on device 0 and holds what
/// was written; no unreported error.
#[test]
fn threads_that_never_used_cuda_launch_and_allocate_right() {
    require_gpu!();
    const THREADS: u32 = 8;
    const LAUNCHES: u32 = 10;
    let device = Device::get(0).unwrap();
    device.set_current().unwrap();
    let shared = Arc::new(stream().unwrap());
    let data = Arc::new(DeviceBuffer::<u32>::zeroed(N as usize).unwrap());
    let (module, add) = fresh_add().unwrap();
    let add = Arc::new(add);
    let start = Arc::new(Barrier::new(THREADS as usize));
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (shared, data, add, start) = (shared.clone(), data.clone(), add.clone(), start.clone());
            thread::spawn(move || {
                let cudarc = (t % 2 == 1).then(|| {
                    let primary = CudaContext::new(0).expect("cudarc's primary context of device 0");
                    primary.bind_to_thread().expect("binding it");
                    primary
                });
                start.wait();
                for _ in 0..LAUNCHES {
                    add_scalar().launch(&shared, config(), (data.ptr(), N, 1)).unwrap();
                    add.launch(&shared, config(), (data.ptr(), N, 2)).unwrap();
                }
                let mine = device.with_current(|| DeviceBuffer::from_slice(&patterned(t, 0))).unwrap();
                assert_eq!(mine.device(), device, "thread {t}: with_current's buffer");
                let own = Stream::new_on(device).unwrap();
                add.launch(&own, config(), (mine.ptr(), N, t)).unwrap();
                own.synchronize().unwrap();
                assert_eq!(mine.to_vec().unwrap(), patterned(t, t), "thread {t}: its own stream");
                drop(cudarc);
                assert_eq!(take_unreported_errors(), [], "thread {t}");
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("a worker panicked");
    }
    shared.synchronize().unwrap();
    assert_eq!(data.to_vec().unwrap(), vec![THREADS * LAUNCHES * 3; N as usize]);
    drop(module);
}

/// Attacks `Device::with_current`'s fast path and the wrapper's `current_is_primary` where
/// the primary context was made current by cudarc (the same handle the crate recorded) and
/// where a non-primary context is current: what `f` makes must be the primary context's in
/// both cases, and afterwards what the thread had current is what the crate documents (the
/// primary context of the device before).
///
/// Held: what was made under either context still works after cudarc destroyed its
/// non-primary context and dropped its retain of the primary one.
#[test]
fn with_current_under_contexts_cudarc_made_current_makes_in_the_primary_context() {
    require_gpu!();
    run(|| {
        let device = Device::get(0)?;
        device.set_current()?;
        let warm = Stream::new_on(device)?; // records the primary context from a stream too
        let primary = CudaContext::new(0).expect("cudarc's primary context of device 0");
        primary.bind_to_thread().expect("binding it");
        let under_primary = device.with_current(|| {
            let stream = Stream::new()?;
            let data = DeviceBuffer::from_slice(&patterned(3, 0))?;
            Ok::<_, CudaError>((stream, data))
        })?;
        let other = CudaContext::new_non_primary(0, 0).expect("cudarc's non-primary context");
        other.bind_to_thread().expect("binding it");
        let under_other = device.with_current(|| {
            let stream = Stream::new()?;
            let data = DeviceBuffer::from_slice(&patterned(4, 0))?;
            Ok::<_, CudaError>((stream, data))
        })?;
        // cudarc destroys its context and releases its retain of the primary one.
        drop(other);
        drop(primary);
        for (seed, (stream, data)) in [(3, &under_primary), (4, &under_other)] {
            fill_pattern().launch(stream, config(), (data.ptr(), N, seed + 10))?;
            add_scalar().launch(stream, config(), (data.ptr(), N, 1))?;
            stream.synchronize()?;
            assert_eq!(data.to_vec()?, patterned(seed + 10, 1), "made under context {seed}");
        }
        warm.synchronize()?;
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}

// =======================================================================================
// 3. Two devices
// =======================================================================================

/// Attacks `current_is_primary` ("the current context is the primary context of *some*
/// device, so the runtime's current device's") and `with_current`'s fast path across two
/// devices: cudarc makes device 1's primary context current behind the crate's back (the
/// crate may remember device 0). An allocation on "the current device" must then land on
/// device 1 (what CUDA says is current, as before the change); `with_current(device 0)` must
/// make device 0's and leave device 1's primary context current again; a kernel recorded for
/// one device's primary context must run right on the other's streams, whichever is current.
///
/// Held: every buffer is on the device asserted, every launch adds what it was asked to.
#[test]
fn two_devices_with_the_other_primary_context_current_behind_the_crates_back() {
    require_gpus!(2);
    run(|| {
        let (first, second) = (Device::get(0)?, Device::get(1)?);
        let streams = [Stream::new_on(first)?, Stream::new_on(second)?]; // both recorded
        let data = [
            DeviceBuffer::from_slice_on(first, &patterned(5, 0))?,
            DeviceBuffer::from_slice_on(second, &patterned(6, 0))?,
        ];
        let (_module, add) = fresh_add()?;
        first.set_current()?;
        let ctx1 = CudaContext::new(1).expect("cudarc's primary context of device 1");
        ctx1.bind_to_thread().expect("binding it"); // the crate still remembers device 0
        let here = DeviceBuffer::<u32>::zeroed(16)?;
        assert_eq!(here.device(), second, "an allocation lands on the device CUDA says is current");
        let there = first.with_current(|| DeviceBuffer::<u32>::zeroed(16))?;
        assert_eq!(there.device(), first, "with_current(device 0)");
        let after = DeviceBuffer::<u32>::zeroed(16)?;
        assert_eq!(after.device(), second, "with_current leaves device 1 current again");

        // The module kernel's first launch is on device 1 (its function recorded for device
        // 1's primary context); then device 0's stream, with device 1's context current.
        let mut added = [0u32; 2];
        for round in 0..4u32 {
            for side in [1usize, 0] {
                if round % 2 == 1 {
                    ctx1.bind_to_thread().expect("binding it");
                } else {
                    first.set_current()?;
                }
                add.launch(&streams[side], config(), (data[side].ptr(), N, round + 1))?;
                add_scalar().launch(&streams[side], config(), (data[side].ptr(), N, 1))?;
                added[side] += round + 2;
            }
        }
        for (side, seed) in [(0usize, 5u32), (1, 6)] {
            streams[side].synchronize()?;
            assert_eq!(data[side].to_vec()?, patterned(seed, added[side]), "device {side}");
        }
        drop(ctx1);
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}

/// Attacks `Device::with_current` from threads that never used CUDA, on two devices: each
/// thread allocates on and launches onto the device other than the one a neighbour uses,
/// with cudarc's primary context of the other device current on half of them.
///
/// Held: every buffer is on the device asked for and holds what its launches wrote.
#[test]
fn fresh_threads_work_on_either_of_two_devices() {
    require_gpus!(2);
    let devices = [Device::get(0).unwrap(), Device::get(1).unwrap()];
    let workers: Vec<_> = (0..8u32)
        .map(|t| {
            thread::spawn(move || {
                let side = (t % 2) as usize;
                let (device, other) = (devices[side], devices[1 - side]);
                let cudarc = (t % 4 >= 2).then(|| {
                    let ctx = CudaContext::new(other.ordinal() as usize).expect("cudarc's context");
                    ctx.bind_to_thread().expect("binding it");
                    ctx
                });
                let data = DeviceBuffer::from_slice_on(device, &patterned(t, 0)).unwrap();
                assert_eq!(data.device(), device, "thread {t}");
                let stream = Stream::new_on(device).unwrap();
                assert_eq!(stream.device(), device, "thread {t}");
                for _ in 0..5 {
                    add_scalar().launch(&stream, config(), (data.ptr(), N, 2)).unwrap();
                }
                stream.synchronize().unwrap();
                assert_eq!(data.to_vec().unwrap(), patterned(t, 10), "thread {t}");
                drop(cudarc);
                assert_eq!(take_unreported_errors(), [], "thread {t}");
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("a worker panicked");
    }
}

// =======================================================================================
// 4. The pinned fence after updates (the live count of pinned allocations)
// =======================================================================================

/// A graph that spins, then fills `device` with `value`, then copies it into `pinned`.
fn spin_fill_copy(
    device: &DeviceBuffer<u32>, pinned: &PinnedBuffer<u32>, value: u32,
) -> Result<Graph, CudaError> {
    let graph = Graph::new()?;
    let fill = graph.add_kernel(spin_then_fill(), config(), (device.ptr(), N, SPIN, value), &[])?;
    graph.add_memcpy_to_host(pinned, &device.ptr(), N as usize, &[&fill])?;
    Ok(graph)
}

/// Attacks `refresh_pinned`'s early-out and the rewritten retirement of `update`: an exec is
/// updated from a graph with a pinned copy to another graph with another pinned buffer, the
/// graphs dropped (the exec keeps them), updated back, and so on; after each launch the host
/// reads the pinned buffer at once. The read must wait for the launch's copy (the fence),
/// whichever update made the buffer the exec's.
///
/// Held: each read sees the value the launch wrote, never the one before.
#[test]
fn a_pinned_buffer_an_update_brings_in_is_fenced_for_host_reads() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let device = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let pinned = [PinnedBuffer::<u32>::zeroed(N as usize)?, PinnedBuffer::<u32>::zeroed(N as usize)?];
        let mut exec =
            spin_fill_copy(&device, &pinned[0], 1)?.instantiate::<HostLaunch>(Default::default())?;
        exec.launch(&stream)?;
        assert_eq!(pinned[0].as_slice()?, vec![1; N as usize], "the instantiated exec's copy");
        for round in 2..12u32 {
            let side = (round % 2) as usize;
            let graph = spin_fill_copy(&device, &pinned[side], round)?;
            exec.update(&graph)?;
            drop(graph); // the exec keeps it
            exec.launch(&stream)?;
            assert_eq!(pinned[side].as_slice()?, vec![round; N as usize], "round {round}: the read waited");
        }
        Ok(())
    });
}

/// Attacks the live count with threads: while other threads make and drop pinned buffers
/// (the count goes up and down through zero), each worker makes a pinned buffer, builds a
/// graph around it, instantiates or updates an exec, launches it and reads the buffer at
/// once, then drops everything. The exec's pinned list read after the update must hold the
/// buffer: a count read as zero would leave it out, and the read would not wait.
///
/// Held: every read sees the value its launch wrote.
#[test]
fn pinned_buffers_made_while_others_come_and_go_are_fenced() {
    require_gpu!();
    const WORKERS: u32 = 4;
    const ROUNDS: u32 = 25;
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churn: Vec<_> = (0..2)
        .map(|_| {
            let done = done.clone();
            thread::spawn(move || {
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    let made = PinnedBuffer::<u8>::zeroed(64).unwrap();
                    drop(made);
                }
            })
        })
        .collect();
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            thread::spawn(move || {
                let stream = stream().unwrap();
                let device = DeviceBuffer::<u32>::zeroed(N as usize).unwrap();
                let mut exec = None;
                for round in 0..ROUNDS {
                    let value = w * 1000 + round + 1;
                    let pinned = PinnedBuffer::<u32>::zeroed(N as usize).unwrap();
                    let graph = spin_fill_copy(&device, &pinned, value).unwrap();
                    match (round % 3, exec.as_mut()) {
                        (0, _) | (_, None) => {
                            exec = Some(graph.instantiate::<HostLaunch>(Default::default()).unwrap());
                        }
                        (_, Some(exec)) => exec.update(&graph).unwrap(),
                    }
                    drop(graph);
                    exec.as_ref().unwrap().launch(&stream).unwrap();
                    let read = pinned.as_slice().unwrap().to_vec();
                    assert!(
                        read.iter().all(|&v| v == value),
                        "worker {w}, round {round}: the read did not wait"
                    );
                    drop(pinned);
                }
            })
        })
        .collect();
    let results: Vec<_> = workers.into_iter().map(thread::JoinHandle::join).collect();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    for thread in churn {
        thread.join().expect("a churning thread panicked");
    }
    for result in results {
        result.expect("a worker panicked");
    }
}

/// Attacks the same fence when the pinned buffer enters through a graph made with no pinned
/// memory alive in this thread's view and the exec's later update: an exec of a graph without
/// pinned memory (its list empty), then updated to a graph of the same shape whose copy
/// targets a pinned buffer is refused by CUDA (the copy's memory kind changes) or must fence.
///
/// Held: the update is `Err` (and nothing reaches the pinned buffer), or the read waits for
/// the updated exec's launch.
#[test]
fn an_update_from_a_graph_without_pinned_memory_to_one_with_it_fences_or_is_refused() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let device = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let target = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let plain = Graph::new()?;
        let fill = plain.add_kernel(spin_then_fill(), config(), (device.ptr(), N, SPIN, 4), &[])?;
        plain.add_memcpy(&target.ptr(), &device.ptr(), N as usize, &[&fill])?;
        let mut exec = plain.instantiate::<HostLaunch>(Default::default())?;
        let pinned = PinnedBuffer::<u32>::zeroed(N as usize)?;
        let with_pinned = spin_fill_copy(&device, &pinned, 9)?;
        match exec.update(&with_pinned) {
            Ok(()) => {
                exec.launch(&stream)?;
                assert_eq!(pinned.as_slice()?, vec![9; N as usize], "the read waited for the updated exec");
            }
            Err(err) => {
                eprintln!("the update was refused ({err})");
                stream.synchronize()?;
                assert_eq!(pinned.as_slice()?, vec![0; N as usize], "nothing reached the pinned buffer");
            }
        }
        Ok(())
    });
}

// =======================================================================================
// 5. Reused device-launch execs and their name references (`owner_leaving`'s early-out)
// =======================================================================================

/// `width` unchained kernel nodes, node `i` incrementing `counters[i]`.
fn counting_graph(counters: &DeviceBuffer<u32>, width: u32) -> Result<(Graph, Vec<KernelNode>), CudaError> {
    let graph = Graph::new()?;
    let nodes = (0..width)
        .map(|i| graph.add_kernel(increment_counter(), one(), (counters.ptr(), i), &[]))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((graph, nodes))
}

/// Attacks `owner_leaving`'s early-out (the name-reference count read without the lock) and
/// the reuse of parked execs: two threads make, launch and drop device-launch execs of the
/// same shape (a width no other test uses), so that each takes the other's parked execs while
/// the other drops the graphs those execs are named by. A reused exec must run its new
/// graph's parameters, and its per-node setter must reach the new graph's node.
///
/// Held: every round's counters read `[1; W]` after a launch, and the setter's node is the
/// one that moves to the other buffer; no unreported error.
#[test]
fn reused_execs_run_their_new_graphs_while_other_threads_drop_the_graphs_naming_them() {
    require_gpu!();
    const W: u32 = 13;
    let reused_before = exec_pool_stats().reused;
    let start = Arc::new(Barrier::new(2));
    let workers: Vec<_> = (0..2u32)
        .map(|t| {
            let start = start.clone();
            thread::spawn(move || {
                run(|| {
                    let stream = stream()?;
                    start.wait();
                    for round in 0..20u32 {
                        let (counters, moved) = (
                            DeviceBuffer::<u32>::zeroed(W as usize)?,
                            DeviceBuffer::<u32>::zeroed(W as usize)?,
                        );
                        let (graph, nodes) = counting_graph(&counters, W)?;
                        let mut exec = graph.instantiate::<DeviceLaunch>(Default::default())?;
                        drop(graph); // only the exec (and, if reused, the pool's origin) names it
                        exec.launch(&stream)?;
                        stream.synchronize()?;
                        assert_eq!(counters.to_vec()?, vec![1; W as usize], "thread {t}, round {round}");
                        let pick = (round + t) % W;
                        exec.set_kernel_params(
                            &nodes[pick as usize],
                            increment_counter(),
                            one(),
                            (moved.ptr(), pick),
                        )?;
                        exec.launch(&stream)?;
                        stream.synchronize()?;
                        let mut want = vec![2; W as usize];
                        want[pick as usize] = 1;
                        assert_eq!(counters.to_vec()?, want, "thread {t}, round {round}: the setter's node");
                        let mut moved_want = vec![0; W as usize];
                        moved_want[pick as usize] = 1;
                        assert_eq!(moved.to_vec()?, moved_want, "thread {t}, round {round}: moved");
                        drop(exec); // parked for the next round, or the other thread
                    }
                    assert_eq!(take_unreported_errors(), []);
                    Ok(())
                })
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("a worker panicked");
    }
    assert!(exec_pool_stats().reused > reused_before, "no exec was reused: the probe attacked nothing");
}
