//! Mapped (zero-copy) host memory on a real GPU (skipped without one): kernels write it and
//! the host reads it in place, both talk through it while a kernel runs, and dropping it while
//! work that uses it is in flight waits for that work. Meant to be run under compute-sanitizer
//! memcheck too: a kernel touching freed mapped memory is an error there (and a fault here).

mod graph_support;

use std::time::{Duration, Instant};

use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::memory::MemoryKind;
use cuda_graph::{take_unreported_errors, Device, DeviceBuffer, Event, MappedBuffer};
use gpu_test_support::require_gpu;
use graph_support::{one, per_element, run, stream};
use test_kernels::{
    add_scalar, fill_pattern, fill_pattern_after_spin, mapped_handshake, pattern, saxpy, sum_slice,
};

/// About 100 ms on an H100 (1.98 GHz): every drop below happens while the kernel still spins.
const SPIN_CYCLES: u64 = 200_000_000;
const N: u32 = 4096;

#[test]
fn a_kernel_writes_mapped_memory_and_the_host_reads_it_in_place() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let mapped = MappedBuffer::<u32>::zeroed(N as usize)?;
        assert_eq!(mapped.to_vec(), vec![0; N as usize], "zeroed");
        // Page-locked host memory, as CUDA sees the device address.
        assert_eq!(MemoryKind::of(mapped.ptr().addr())?, MemoryKind::Pinned);

        fill_pattern().launch(&stream, per_element(N), (mapped.ptr(), N, 11))?;
        stream.synchronize()?;
        let want: Vec<u32> = (0..N).map(|i| pattern(i, 11)).collect();
        assert_eq!(mapped.to_vec(), want, "what the kernel wrote, read in place");

        // The host's stores reach the next kernel, which reads and writes the same memory.
        mapped.store(0, 100);
        mapped.store(N as usize - 1, u32::MAX);
        add_scalar().launch(&stream, per_element(N), (mapped.ptr(), N, 5))?;
        stream.synchronize()?;
        assert_eq!(mapped.load(0), 105);
        assert_eq!(mapped.load(N as usize - 1), 4, "wrapping add of the host's u32::MAX");
        assert_eq!(mapped.load(7), pattern(7, 11).wrapping_add(5));

        // Floats: y = 2 x + y, with y mapped.
        let x = DeviceBuffer::from_slice(&[1.5f32, -4.0, 0.25])?;
        let y = MappedBuffer::from_slice(&[0.25f32, 1.0, -0.5])?;
        saxpy().launch(&stream, per_element(3), (2.0, x.ptr(), y.ptr(), 3))?;
        stream.synchronize()?;
        assert_eq!(y.to_vec(), [3.25, -7.0, 0.0]);
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}

#[test]
fn a_running_kernel_and_the_host_talk_through_mapped_memory() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let flags = MappedBuffer::<u32>::zeroed(3)?;
        // The kernel gives up after about 2 s (1.98 GHz) without the host's answer.
        mapped_handshake().launch(&stream, one(), (flags.ptr().into_slice(), 4_000_000_000))?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while flags.load(0) == 0 {
            assert!(Instant::now() < deadline, "the running kernel's write never reached the host");
            std::hint::spin_loop();
        }
        // Seen before any synchronization: no copy brought it.
        flags.store(1, 1);
        stream.synchronize()?;
        assert_eq!(flags.load(2), 2, "2: the kernel saw the host's store while running; 3: it timed out");
        Ok(())
    });
}

#[test]
fn a_mapped_buffer_dropped_under_a_running_kernel_is_freed_after_it() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let mapped = MappedBuffer::<u32>::zeroed(N as usize)?;
        fill_pattern_after_spin().launch(&stream, per_element(N), (mapped.ptr(), N, 3, SPIN_CYCLES))?;
        let done = Event::new()?;
        done.record(&stream)?;
        assert!(!done.is_complete()?, "the kernel should still be spinning: the test proves nothing");
        drop(mapped); // the last owner: waits for the device, then cudaFreeHost
        assert!(done.is_complete()?, "the memory was freed while the kernel had still to write it");
        stream.synchronize()?; // a kernel writing unmapped memory fails with an illegal address
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}

#[test]
fn an_exec_keeps_mapped_memory_after_its_buffer_is_dropped() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let values = MappedBuffer::from_slice(&[1.0f32, 2.0, 3.5])?;
        let sum = DeviceBuffer::<f32>::zeroed(1)?;
        let graph = Graph::new()?;
        graph.add_kernel(sum_slice(), one(), (values.ptr().into_slice(), sum.ptr()), &[])?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        drop((values, graph)); // only the exec owns the mapped memory now
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(sum.to_vec()?, [6.5], "the exec read the host's values after the buffer was dropped");

        // The exec, the last owner, dropped while its launch still writes the memory.
        let mapped = MappedBuffer::<u32>::zeroed(N as usize)?;
        let graph = Graph::new()?;
        graph.add_kernel(
            fill_pattern_after_spin(),
            per_element(N),
            (mapped.ptr(), N, 5, SPIN_CYCLES),
            &[],
        )?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        drop((mapped, graph));
        exec.launch(&stream)?;
        let done = Event::new()?;
        done.record(&stream)?;
        drop(exec);
        assert!(done.is_complete()?, "the exec's drop freed the memory under its own launch");
        stream.synchronize()?;
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}

#[test]
fn the_device_in_use_has_an_active_context() {
    require_gpu!();
    run(|| {
        let device = Device::current()?;
        let _used = MappedBuffer::<u64>::zeroed(1)?;
        assert!(device.has_active_context()?, "device {} has run work", device.ordinal());
        Ok(())
    });
}
