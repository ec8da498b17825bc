//! Launching from several host threads: streams are `Sync` (one stream shared by threads that
//! launch on it), graphs and execs are `Send` (built in one thread, launched in another), and
//! every launch's effect is counted exactly.

mod graph_support;

use std::sync::Arc;
use std::thread;

use cuda_graph::graph::{Graph, HostLaunch};
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
