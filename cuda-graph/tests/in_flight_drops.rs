//! Dropping graphs, execs, streams and buffers while the work that uses them is still
//! running: the work completes, nothing is freed under it, and no error is recorded.

mod graph_support;

use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{take_drop_errors, Device, DeviceBuffer};
use gpu_test_support::require_gpu;
use graph_support::{per_element, run, stream};
use test_kernels::spin_then_fill;

/// About 50 ms on an H100 (1.98 GHz): long enough that every drop below happens mid-kernel.
const SPIN_CYCLES: u64 = 100_000_000;
const N: u32 = 1 << 16;

#[test]
fn an_exec_graph_and_stream_dropped_mid_launch_let_the_work_finish() {
    require_gpu!();
    run(|| {
        let out = DeviceBuffer::<u32>::zeroed(N as usize)?;
        {
            let stream = stream()?;
            let graph = Graph::new()?;
            graph.add_kernel(spin_then_fill(), per_element(N), (out.ptr(), N, SPIN_CYCLES, 7), &[])?;
            let exec = graph.instantiate::<HostLaunch>(Default::default())?;
            exec.launch(&stream)?;
            // exec, graph and stream are dropped here, with the kernel still spinning.
        }
        Device::current()?.synchronize()?;
        assert!(out.to_vec()?.iter().all(|&v| v == 7), "the in-flight launch did not complete");
        assert_eq!(take_drop_errors(), []);
        Ok(())
    });
}

#[test]
fn a_buffer_dropped_while_a_kernel_writes_it_is_freed_only_after_the_kernel() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let scratch = DeviceBuffer::<u32>::zeroed(N as usize)?;
        spin_then_fill().launch(
            &stream,
            LaunchConfig::for_elements(N, 256),
            (scratch.ptr(), N, SPIN_CYCLES, 9),
        )?;
        drop(scratch); // cudaFree waits for the kernel; memcheck would flag a write to freed memory
        let fresh = DeviceBuffer::from_slice(&vec![5u32; N as usize])?;
        stream.synchronize()?;
        assert!(fresh.to_vec()?.iter().all(|&v| v == 5), "a new buffer was overwritten by old work");
        assert_eq!(take_drop_errors(), []);
        Ok(())
    });
}
