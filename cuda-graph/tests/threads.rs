//! Launching from several host threads: streams are `Sync` (one stream shared by threads that
//! launch on it), graphs and execs are `Send` (built in one thread, launched in another), and
//! every launch's effect is counted exactly; a capture begun on a stream while another thread
//! launches on it keeps that thread's buffers (SOUNDNESS.md, "The holes a review found",
//! finding 4).

mod graph_support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use cuda_graph::graph::{CaptureMode, Graph, HostLaunch, NodeKind};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DeviceBuffer, Stream};
use gpu_test_support::require_gpu;
use graph_support::{one, run, stream};
use test_kernels::increment_counter;

const THREADS: u32 = 4;
const LAUNCHES: u32 = 200;

#[test]
fn threads_sharing_one_stream_each_launch_their_kernels() {
    require_gpu!();
    run(|| {
        let counters = DeviceBuffer::<u32>::zeroed(THREADS as usize)?;
        let shared = Arc::new(stream()?);
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (stream, counter) = (Arc::clone(&shared), counters.ptr());
                thread::spawn(move || -> Result<(), cuda_graph::CudaError> {
                    for _ in 0..LAUNCHES {
                        increment_counter().launch(
                            &stream,
                            LaunchConfig::new(1, 32),
                            (counter.clone(), t),
                        )?;
                    }
                    Ok(())
                })
            })
            .collect();
        for worker in workers {
            worker.join().expect("a launching thread panicked")?;
        }
        shared.synchronize()?;
        assert_eq!(counters.to_vec()?, vec![LAUNCHES; THREADS as usize]);
        Ok(())
    });
}

#[test]
fn graphs_built_here_are_launched_from_other_threads() {
    require_gpu!();
    run(|| {
        let counters = DeviceBuffer::<u32>::zeroed(THREADS as usize)?;
        let mut execs = Vec::new();
        for t in 0..THREADS {
            let graph = Graph::new()?;
            let first = graph.add_kernel(increment_counter(), one(), (counters.ptr(), t), &[])?;
            graph.add_kernel(increment_counter(), one(), (counters.ptr(), t), &[&first])?;
            execs.push(graph.instantiate::<HostLaunch>(Default::default())?);
        }
        let workers: Vec<_> = execs
            .into_iter()
            .map(|exec| {
                thread::spawn(move || -> Result<(), cuda_graph::CudaError> {
                    let stream = Stream::new()?;
                    for _ in 0..LAUNCHES {
                        exec.launch(&stream)?;
                    }
                    stream.synchronize()
                })
            })
            .collect();
        for worker in workers {
            worker.join().expect("a launching thread panicked")?;
        }
        assert_eq!(counters.to_vec()?, vec![2 * LAUNCHES; THREADS as usize]);
        Ok(())
    });
}

/// Captures begun and ended on the shared stream by the main thread.
const CAPTURES: usize = 2000;

/// SOUNDNESS.md, "The holes a review found", finding 4: one thread begins and ends captures on
/// stream S in a loop while another launches a kernel on a buffer and queues a memset of a second
/// buffer on S in a loop. Some of that work lands in a capture: each graph that captured a kernel
/// must own the first buffer, and each that captured a memset the second. Before the capture gate,
/// a capture could begin between the work's capture check and its CUDA call, and the graph
/// then had a node on the buffer without owning it. Checked by the buffers' owner counts
/// (one per graph with such nodes), then every graph runs once: the counter ends at the
/// number of kernel launches, and the memsets write memory that only the graphs keep (the
/// launching thread dropped its buffer), which compute-sanitizer memcheck would report if
/// it had been freed.
#[test]
fn captures_begun_while_another_thread_queues_work_own_that_threads_buffers() {
    require_gpu!();
    run(|| {
        increment_counter().function()?; // the parameter check happens before capturing
        let counter = DeviceBuffer::<u32>::zeroed(1)?;
        let owner = counter.ptr().keep_alive().expect("a buffer's pointer keeps it alive");
        let before = Arc::strong_count(&owner);
        let scratch = DeviceBuffer::<u32>::zeroed(256)?;
        let scratch_owner = scratch.keep_alive();
        let shared = Arc::new(stream()?);
        let done = Arc::new(AtomicBool::new(false));
        let launcher = {
            let (stream, done, ptr) = (Arc::clone(&shared), Arc::clone(&done), counter.ptr());
            let mut scratch = scratch;
            thread::spawn(move || -> Result<u32, cuda_graph::CudaError> {
                let mut launches = 0;
                while !done.load(Ordering::Relaxed) || launches == 0 {
                    increment_counter().launch(&stream, LaunchConfig::new(1, 32), (ptr.clone(), 0))?;
                    scratch.memset_async(0xab, &stream)?;
                    launches += 1;
                }
                Ok(launches)
            })
        };
        // Under a sanitizer every launch is slow: fewer rounds keep the test within its limit.
        let captures = if gpu_test_support::under_sanitizer() { CAPTURES / 40 } else { CAPTURES };
        let mut graphs = Vec::with_capacity(captures);
        let mut result = Ok(());
        for _ in 0..captures {
            let capture = match shared.begin_capture(CaptureMode::ThreadLocal) {
                Ok(capture) => capture,
                Err(err) => {
                    result = Err(err);
                    break;
                }
            };
            thread::yield_now();
            match capture.end() {
                Ok(graph) => graphs.push(graph),
                Err(err) => {
                    result = Err(err);
                    break;
                }
            }
        }
        done.store(true, Ordering::Relaxed);
        let launches = launcher.join().expect("the launching thread panicked")?;
        result?;
        shared.synchronize()?;

        let (mut captured_launches, mut with_launches, mut with_memsets) = (0, 0, 0);
        for graph in &graphs {
            let kinds: Vec<NodeKind> = graph.nodes()?.iter().map(|node| node.kind()).collect();
            let kernels = kinds.iter().filter(|&&kind| kind == NodeKind::Kernel).count();
            captured_launches += kernels;
            with_launches += (kernels > 0) as usize;
            with_memsets += kinds.contains(&NodeKind::Memset) as usize;
        }
        eprintln!(
            "{launches} launches, {captured_launches} captured into {with_launches} of {} graphs \
             ({with_memsets} with memsets)",
            graphs.len()
        );
        assert_eq!(
            Arc::strong_count(&owner) - before,
            with_launches,
            "each graph that captured a launch owns the counter once (the launching thread's \
             pointer is gone)"
        );
        assert_eq!(
            Arc::strong_count(&scratch_owner) - 1,
            with_memsets,
            "each graph that captured a memset owns the scratch buffer once (the launching \
             thread's buffer is gone)"
        );
        let ran_on_stream = counter.to_vec()?[0];
        assert_eq!(
            ran_on_stream as usize + captured_launches,
            launches as usize,
            "every launch ran or was captured"
        );
        let mut execs = Vec::new();
        for graph in &graphs {
            if graph.node_count()? > 0 {
                let exec = graph.instantiate::<HostLaunch>(Default::default())?;
                exec.launch(&shared)?;
                execs.push(exec);
            }
        }
        shared.synchronize()?;
        assert_eq!(counter.to_vec()?, [launches], "every launch ran once, on the stream or from its graph");
        Ok(())
    });
}
