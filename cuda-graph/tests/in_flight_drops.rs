//! Dropping graphs, execs, streams and buffers while the work that uses them is still
//! running, and replacing what an exec's queued launches use: the work completes, nothing is
//! freed under it, and no error is recorded. Meant to be run under compute-sanitizer
//! memcheck too.

mod graph_support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{
    take_unreported_errors, CudaError, Device, DeviceBuffer, Event, MemoryPool, MemoryPoolOptions, Stream,
};
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
        assert_eq!(take_unreported_errors(), []);
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
        drop(scratch); // waits for the device, then cudaFree; memcheck would flag a write to freed memory
        let fresh = DeviceBuffer::from_slice(&vec![5u32; N as usize])?;
        stream.synchronize()?;
        assert!(fresh.to_vec()?.iter().all(|&v| v == 5), "a new buffer was overwritten by old work");
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}

/// About 100 ms on an H100 (1.98 GHz): the launches below are still queued behind it when
/// the host replaces or drops what they use.
const SPIN_100_MS: u64 = 200_000_000;

/// A graph of one host node whose closure owns heap data and reads it, then counts the call
/// in `calls`: calling the closure after it was freed is a use after free on the host.
fn counting_host_graph(calls: &Arc<AtomicU32>) -> Result<Graph, CudaError> {
    let graph = Graph::new()?;
    let calls = calls.clone();
    let owned = vec![1u32; 64];
    graph.add_host(
        move || {
            calls.fetch_add(owned.iter().sum::<u32>() / 64, Ordering::SeqCst);
        },
        &[],
    )?;
    Ok(graph)
}

/// SOUNDNESS.md, "The holes a review found", finding 2: `update(&g1); drop(g1); launch(&busy);
/// update(&g2)` freed g1's host closure at the second update, and CUDA called it about 100 ms later
/// (a segmentation fault on the H100). The replaced graph must outlive the launch queued before the
/// update.
#[test]
fn an_update_keeps_the_replaced_graphs_host_function_until_the_launch_before_it_ran() {
    require_gpu!();
    run(|| {
        let busy = stream()?;
        let scratch = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let (calls0, calls1, calls2) =
            (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        let g0 = counting_host_graph(&calls0)?;
        let mut exec = g0.instantiate::<HostLaunch>(Default::default())?;
        let g1 = counting_host_graph(&calls1)?;
        exec.update(&g1)?;
        drop(g1);
        spin_then_fill().launch(&busy, per_element(N), (scratch.ptr(), N, SPIN_100_MS, 1))?;
        exec.launch(&busy)?; // queued behind the spin: it will call g1's closure
        let g2 = counting_host_graph(&calls2)?;
        exec.update(&g2)?; // must not free g1's closure now
        busy.synchronize()?;
        assert_eq!(
            calls1.load(Ordering::SeqCst),
            1,
            "the launch queued before the update runs g1's function"
        );
        assert_eq!((calls0.load(Ordering::SeqCst), calls2.load(Ordering::SeqCst)), (0, 0));
        assert!(
            Arc::strong_count(&calls1) > 1,
            "released before a later update or drop found the launch done"
        );

        // A later update finds the launch done and lets go of g1's closure.
        exec.update(&g2)?;
        assert_eq!(Arc::strong_count(&calls1), 1, "g1's closure is released once its launch completed");
        exec.launch(&busy)?;
        busy.synchronize()?;
        assert_eq!(calls2.load(Ordering::SeqCst), 1);
        drop((exec, g0, g2));
        assert_eq!((Arc::strong_count(&calls0), Arc::strong_count(&calls2)), (1, 1));
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}

/// Finding 2, per-node setters: a setter replaced a node's buffer and dropped what it had set
/// before at once. For stream-ordered memory from a blocking stream, the free (queued on the
/// legacy stream) was then not ordered after the launch queued on a non-blocking stream, and
/// the pool handed the memory out again while that launch was still to write it.
#[test]
fn a_setter_keeps_the_replaced_buffer_until_the_launch_before_it_ran() {
    require_gpu!();
    run(|| {
        let blocking = Stream::new()?;
        let busy = stream()?;
        let pool = MemoryPool::new(MemoryPoolOptions { release_threshold: u64::MAX, ..Default::default() })?;
        let first = DeviceBuffer::<u32>::alloc_from_pool_async(N as usize, &pool, &blocking)?;
        blocking.synchronize()?;
        let first_address = first.as_raw();
        let initial = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let graph = Graph::new()?;
        let node = graph.add_kernel(spin_then_fill(), per_element(N), (initial.ptr(), N, 0, 3), &[])?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        exec.set_kernel_params(&node, spin_then_fill(), per_element(N), (first.ptr(), N, SPIN_100_MS, 7))?;
        drop(first); // the exec's setter is its last owner
        exec.launch(&busy)?; // spins about 100 ms, then writes 7 into `first`
        exec.set_kernel_params(&node, spin_then_fill(), per_element(N), (initial.ptr(), N, 0, 3))?;

        let mut reused = DeviceBuffer::<u32>::alloc_from_pool_async(N as usize, &pool, &blocking)?;
        if reused.as_raw() == first_address {
            eprintln!("note: the pool handed out the replaced buffer's memory while its launch was queued");
        }
        reused.memset_async(0x11, &blocking)?;
        blocking.synchronize()?;
        busy.synchronize()?; // a launch writing freed memory would have overwritten `reused` now
        for (index, value) in reused.to_vec()?.into_iter().enumerate() {
            assert_eq!(
                value, 0x1111_1111,
                "element {index} was written by the launch queued before the setter"
            );
        }
        drop(exec);
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}

/// SOUNDNESS.md, "The holes a review found", finding 3, the exact sequence: a 64 Ki-element
/// `alloc_async` buffer on a blocking stream, used by a kernel on a non-blocking stream that writes
/// after about 100 ms, dropped; the next `alloc_async` of the same size (the same address, on the
/// H100) is memset and synchronized, and must keep its value once the kernel has run. Meant to be
/// run under compute-sanitizer memcheck too.
#[test]
fn stream_ordered_memory_used_by_a_kernel_on_a_non_blocking_stream_is_freed_after_it() {
    require_gpu!();
    run(|| {
        let blocking = Stream::new()?;
        let other = stream()?;
        let buffer = DeviceBuffer::<u32>::alloc_async(N as usize, &blocking)?;
        blocking.synchronize()?; // the allocation is complete before `other` uses it
        let first_address = buffer.as_raw();
        spin_then_fill().launch(&other, per_element(N), (buffer.ptr(), N, SPIN_100_MS, 0xbad))?;
        drop(buffer);

        let mut reused = DeviceBuffer::<u32>::alloc_async(N as usize, &blocking)?;
        if reused.as_raw() == first_address {
            eprintln!("note: the pool handed out the same memory (after the kernel, if the drop waited)");
        }
        reused.memset_async(0x11, &blocking)?;
        blocking.synchronize()?;
        other.synchronize()?; // a kernel still writing freed memory would have overwritten `reused`
        for (index, value) in reused.to_vec()?.into_iter().enumerate() {
            assert_eq!(value, 0x1111_1111, "element {index} was written by the kernel of the dropped buffer");
        }
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}

/// The allocation side of finding 3: work on another stream may use a new stream-ordered
/// buffer without waiting for its allocation (safe code can skip that ordering), so the pool
/// must never hand out memory whose free is still queued behind a running kernel. Here the
/// dropped buffer's kernel writes it after about 100 ms; the next allocation of the same size
/// is memset on a non-blocking stream at once and must keep that value.
#[test]
fn alloc_async_never_hands_out_memory_whose_free_is_still_pending() {
    require_gpu!();
    run(|| {
        let blocking = Stream::new()?;
        let other = stream()?;
        let pool = MemoryPool::device_default(Device::current()?)?;
        assert!(pool.reuses_only_completed_frees()?, "alloc_async's pool reuses frees still pending");
        let first = DeviceBuffer::<u32>::alloc_async(N as usize, &blocking)?;
        let first_address = first.as_raw();
        spin_then_fill().launch(&blocking, per_element(N), (first.ptr(), N, SPIN_100_MS, 0xbad))?;
        drop(first); // its free is queued behind the kernel

        let mut next = DeviceBuffer::<u32>::alloc_async(N as usize, &blocking)?;
        let reused = next.as_raw() == first_address;
        // Not ordered after the allocation, as safe code may do. compute-sanitizer's initcheck
        // counts memory so written as never initialized (CUDA requires the ordering), so under
        // it the memset is ordered and only the address shows a reuse.
        let unordered = gpu_test_support::sanitizer_tool().as_deref() != Some("initcheck");
        next.memset_async(0x11, if unordered { &other } else { &blocking })?;
        other.synchronize()?;
        blocking.synchronize()?;
        let values = next.to_vec()?;
        assert!(!reused, "the pool handed out memory whose free was still pending behind a kernel");
        assert!(
            values.iter().all(|&v| v == 0x1111_1111),
            "the dropped buffer's kernel wrote into the new one"
        );
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}

/// Finding 3 for asynchronous memsets and copies: a memset queued on a non-blocking stream
/// behind a 100 ms kernel, then the buffer dropped; the free must wait for the memset.
#[test]
fn stream_ordered_memory_memset_on_a_non_blocking_stream_is_freed_after_the_memset() {
    require_gpu!();
    run(|| {
        let blocking = Stream::new()?;
        let other = stream()?;
        let keeps_other_busy = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let mut buffer = DeviceBuffer::<u32>::alloc_async(N as usize, &blocking)?;
        let mut source = DeviceBuffer::<u32>::alloc_async(N as usize, &blocking)?;
        source.memset_async(0x22, &blocking)?; // initialized, for initcheck
        blocking.synchronize()?;
        spin_then_fill().launch(&other, per_element(N), (keeps_other_busy.ptr(), N, SPIN_100_MS, 1))?;
        buffer.memset_async(0xee, &other)?; // runs in about 100 ms
        let mut target = DeviceBuffer::<u32>::zeroed(N as usize)?;
        target.copy_from_device_async(&source, &other)?; // reads `source` in about 100 ms
        drop((buffer, source));

        let mut reused = [
            DeviceBuffer::<u32>::alloc_async(N as usize, &blocking)?,
            DeviceBuffer::<u32>::alloc_async(N as usize, &blocking)?,
        ];
        for buffer in &mut reused {
            buffer.memset_async(0x11, &blocking)?;
        }
        blocking.synchronize()?;
        other.synchronize()?;
        for buffer in &reused {
            assert!(
                buffer.to_vec()?.iter().all(|&v| v == 0x1111_1111),
                "the memset of a dropped buffer landed here"
            );
        }
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}

/// Finding 2 for event nodes: an exec whose nodes record events fences its launches, so an
/// update that replaces the event keeps it until the launch queued before the update, which
/// records it, has run (destroying it first would leave that launch a destroyed event).
#[test]
fn an_update_keeps_the_replaced_event_until_the_launch_before_it_ran() {
    require_gpu!();
    run(|| {
        let busy = stream()?;
        let scratch = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let recording = |event: &Arc<Event>| -> Result<Graph, CudaError> {
            let graph = Graph::new()?;
            graph.add_event_record(event, &[])?;
            Ok(graph)
        };
        let (e0, e1, e2) = (Arc::new(Event::new()?), Arc::new(Event::new()?), Arc::new(Event::new()?));
        let g0 = recording(&e0)?;
        let mut exec = g0.instantiate::<HostLaunch>(Default::default())?;
        let g1 = recording(&e1)?;
        exec.update(&g1)?;
        let replaced = Arc::downgrade(&e1);
        drop((g1, e1));
        spin_then_fill().launch(&busy, per_element(N), (scratch.ptr(), N, SPIN_100_MS, 1))?;
        exec.launch(&busy)?; // will record the first replaced event
        let g2 = recording(&e2)?;
        exec.update(&g2)?;
        let kept = replaced.upgrade().is_some();
        // Under a sanitizer a launch may return only once the kernel ran: then the launch
        // recording the event is over before the update, and releasing it is right.
        let launch_pending = !busy.is_idle()?;
        if !gpu_test_support::under_sanitizer() {
            assert!(launch_pending, "the 100 ms kernel ended before the update: the test shows nothing");
        }
        if launch_pending {
            assert!(kept, "the event was released while the launch recording it was queued");
        }
        busy.synchronize()?;
        exec.update(&g2)?; // finds the launch done
        assert!(replaced.upgrade().is_none(), "the event is released once its launch completed");
        drop((exec, g0, g2));
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}

/// An exec updated again and again while its launch is still queued keeps what each update
/// replaced only up to a bound: the update past it waits for the launch and releases all.
#[test]
fn an_exec_updated_while_busy_keeps_a_bounded_number_of_replaced_graphs() {
    require_gpu!();
    run(|| {
        let busy = stream()?;
        let scratch = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let calls = Arc::new(AtomicU32::new(0));
        let g0 = counting_host_graph(&calls)?;
        let mut exec = g0.instantiate::<HostLaunch>(Default::default())?;
        let first_calls = Arc::new(AtomicU32::new(0));
        let first = counting_host_graph(&first_calls)?;
        exec.update(&first)?;
        drop(first);
        spin_then_fill().launch(&busy, per_element(N), (scratch.ptr(), N, SPIN_100_MS, 1))?;
        exec.launch(&busy)?;
        // 17 updates retire 17 graphs (the first one included): the 17th waits for the launch.
        for _ in 0..17 {
            let next = counting_host_graph(&calls)?;
            exec.update(&next)?;
        }
        assert_eq!(first_calls.load(Ordering::SeqCst), 1, "the update past the bound waited for the launch");
        assert_eq!(Arc::strong_count(&first_calls), 1, "and released what the updates replaced");
        busy.synchronize()?;
        drop((exec, g0));
        assert_eq!(Arc::strong_count(&calls), 1);
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}
