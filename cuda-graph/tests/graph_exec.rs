//! Executable graphs on a real GPU: whole-graph update applies new parameters or says why
//! it cannot, per-node setters and enable/disable change what later launches do, and
//! instantiation for device launch works or names why not.

mod graph_support;

use cuda_graph::graph::{DeviceLaunch, Graph, GraphExec, HostLaunch, InstantiateOptions, KernelNode};
use cuda_graph::refusal::{ExecRefusal, InstantiateFailure, NodeRefusal};
use cuda_graph::{CudaError, DeviceBuffer, MemoryPool, MemoryPoolOptions, Refusal, Stream, UpdateRefusal};
use gpu_test_support::require_gpu;
use graph_support::{one, per_element, run, stream};
use test_kernels::{add_scalar, fill_pattern, fill_pattern_after_spin, increment_counter, pattern};

const N: u32 = 1000;

/// data[i] = pattern(i, seed) + add.
fn fill_then_add(data: &DeviceBuffer<u32>, seed: u32, add: u32) -> Result<(Graph, KernelNode), CudaError> {
    let graph = Graph::new()?;
    let fill = graph.add_kernel(fill_pattern(), per_element(N), (data.ptr(), N, seed), &[])?;
    let node = graph.add_kernel(add_scalar(), per_element(N), (data.ptr(), N, add), &[&fill])?;
    Ok((graph, node))
}

fn launch_and_read<M: cuda_graph::graph::LaunchMode>(
    exec: &GraphExec<M>, data: &DeviceBuffer<u32>,
) -> Result<Vec<u32>, CudaError> {
    let stream = stream()?;
    exec.launch(&stream)?;
    stream.synchronize()?;
    data.to_vec()
}

fn expected(seed: u32, add: u32) -> Vec<u32> {
    (0..N).map(|i| pattern(i, seed).wrapping_add(add)).collect()
}

#[test]
fn a_whole_graph_update_applies_changed_kernel_arguments() {
    require_gpu!();
    run(|| {
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let (graph, _) = fill_then_add(&data, 1, 5)?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        assert_eq!(launch_and_read(&exec, &data)?, expected(1, 5));
        let (changed, _) = fill_then_add(&data, 2, 7)?;
        exec.update(&changed)?;
        drop(changed); // the exec keeps what the update brought
        assert_eq!(launch_and_read(&exec, &data)?, expected(2, 7));
        Ok(())
    });
}

#[test]
fn an_update_with_a_changed_topology_is_refused_with_the_reason() {
    require_gpu!();
    run(|| {
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let (graph, _) = fill_then_add(&data, 1, 5)?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let (bigger, last) = fill_then_add(&data, 1, 5)?;
        bigger.add_kernel(add_scalar(), per_element(N), (data.ptr(), N, 1), &[&last])?;
        match exec.update(&bigger) {
            Err(CudaError::UpdateRefused { reason: UpdateRefusal::TopologyChanged, .. }) => {}
            other => panic!("expected UpdateRefused(TopologyChanged), got {other:?}"),
        }
        assert_eq!(launch_and_read(&exec, &data)?, expected(1, 5), "the exec still runs the old graph");
        Ok(())
    });
}

#[test]
fn per_node_setters_change_what_later_launches_do() {
    require_gpu!();
    run(|| {
        let (data, other) =
            (DeviceBuffer::<u32>::zeroed(N as usize)?, DeviceBuffer::<u32>::zeroed(N as usize)?);
        let (source, target) = (DeviceBuffer::<u32>::zeroed(64)?, DeviceBuffer::<u32>::zeroed(64)?);
        let graph = Graph::new()?;
        let fill = graph.add_kernel(fill_pattern(), per_element(N), (data.ptr(), N, 3), &[])?;
        let set = graph.add_memset(&source.ptr(), 4u32, 64, &[])?;
        let copy = graph.add_memcpy(&target.ptr(), &source.ptr(), 64, &[&set])?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        assert_eq!(launch_and_read(&exec, &data)?, expected(3, 0));
        assert_eq!(target.to_vec()?, [4; 64]);

        exec.set_kernel_params(&fill, fill_pattern(), per_element(N), (other.ptr(), N, 9))?;
        exec.set_memset(&set, &source.ptr(), 11u32, 32)?;
        let spare = DeviceBuffer::<u32>::zeroed(64)?;
        exec.set_memcpy(&copy, &spare.ptr(), &source.ptr(), 64)?;
        assert_eq!(launch_and_read(&exec, &other)?, expected(9, 0));
        assert_eq!(data.to_vec()?, expected(3, 0), "the old target is left alone");
        let mut source_now = vec![11u32; 32];
        source_now.extend([4u32; 32]);
        assert_eq!(spare.to_vec()?, source_now);
        assert_eq!(target.to_vec()?, [4; 64], "the copy goes to its new target only");
        Ok(())
    });
}

#[test]
fn a_disabled_node_is_skipped_until_enabled_again() {
    require_gpu!();
    run(|| {
        let counters = DeviceBuffer::<u32>::zeroed(2)?;
        let graph = Graph::new()?;
        let first = graph.add_kernel(increment_counter(), one(), (counters.ptr(), 0), &[])?;
        let second = graph.add_kernel(increment_counter(), one(), (counters.ptr(), 1), &[&first])?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        assert!(exec.node_enabled(&second)?);
        exec.set_node_enabled(&second, false)?;
        assert!(!exec.node_enabled(&second)?);
        launch_and_read(&exec, &counters)?;
        assert_eq!(counters.to_vec()?, [1, 0]);
        exec.set_node_enabled(&second, true)?;
        assert_eq!(launch_and_read(&exec, &counters)?, [2, 1]);
        Ok(())
    });
}

#[test]
fn an_exec_refuses_nodes_of_other_graphs() {
    require_gpu!();
    run(|| {
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let (graph, _) = fill_then_add(&data, 1, 1)?;
        let (other, foreign) = fill_then_add(&data, 1, 1)?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let err =
            exec.set_kernel_params(&foreign, add_scalar(), per_element(N), (data.ptr(), N, 2)).unwrap_err();
        assert!(matches!(err.refusal(), Some(Refusal::Node(NodeRefusal::NotOfExecGraph { .. }))), "{err}");
        assert!(exec.set_node_enabled(&foreign, false).is_err());
        drop(other);
        Ok(())
    });
}

#[test]
fn device_launch_execs_instantiate_upload_and_run_from_the_host() {
    require_gpu!();
    run(|| {
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let (graph, _) = fill_then_add(&data, 4, 2)?;
        let stream = stream()?;
        let options = InstantiateOptions { upload_stream: Some(&stream), ..Default::default() };
        let exec = graph.instantiate::<DeviceLaunch>(options)?;
        // SAFETY: the handle is only compared with null.
        assert!(!unsafe { exec.as_raw() }.is_null());
        exec.upload(&stream)?;
        assert_eq!(launch_and_read(&exec, &data)?, expected(4, 2));
        Ok(())
    });
}

#[test]
fn device_launch_refusals_name_the_reason_and_the_node_kind() {
    require_gpu!();
    run(|| {
        let graph = Graph::new()?;
        graph.add_host(|| {}, &[])?;
        let err = graph.instantiate::<DeviceLaunch>(Default::default()).unwrap_err();
        match err.refusal() {
            Some(Refusal::Exec(ExecRefusal::Instantiate { reason, node_named, node_kind, .. })) => {
                assert_eq!(*reason, InstantiateFailure::NotForDeviceLaunch, "{err}");
                // CUDA may or may not name the node; when it does, its kind is read.
                if *node_named {
                    assert_eq!(node_kind.as_deref(), Some("host"), "{err}");
                    assert!(err.to_string().contains("(at a host node)"), "{err}");
                }
            }
            _ => panic!("expected an instantiation refused by CUDA, got {err:?}"),
        }
        graph.instantiate::<HostLaunch>(Default::default())?;
        Ok(())
    });
}

#[test]
fn an_unused_conditional_handle_that_fails_instantiation_is_named() {
    require_gpu!();
    run(|| {
        let graph = Graph::new()?;
        graph.add_empty(&[])?;
        graph.conditional_handle(Some(1))?;
        // CUDA documents that an unused handle *may* fail instantiation; when it does, the
        // error must say why.
        if let Err(err) = graph.instantiate::<HostLaunch>(Default::default()) {
            assert!(
                matches!(
                    err.refusal(),
                    Some(Refusal::Exec(ExecRefusal::Instantiate {
                        reason: InstantiateFailure::HandleUnused,
                        ..
                    }))
                ),
                "{err}"
            );
        }
        Ok(())
    });
}

#[test]
fn instantiate_options_upload_and_auto_free() {
    require_gpu!();
    run(|| {
        let out = DeviceBuffer::<u32>::zeroed(16)?;
        let graph = Graph::new()?;
        let alloc = graph.add_mem_alloc::<u32>(16, &[])?;
        // SAFETY: used only by the nodes ordered after the alloc node.
        let scratch = unsafe { alloc.ptr::<u32>() };
        let set = graph.add_memset(&scratch, 6u32, 16, &[&alloc])?;
        graph.add_memcpy(&out.ptr(), &scratch, 16, &[&set])?; // no free node
        let stream = stream()?;
        let options = InstantiateOptions {
            upload_stream: Some(&stream),
            auto_free_on_launch: true,
            use_node_priority: true,
        };
        let exec = graph.instantiate::<HostLaunch>(options)?;
        exec.launch(&stream)?;
        exec.launch(&stream)?; // allowed again: the first launch's allocation is freed
        stream.synchronize()?;
        assert_eq!(out.to_vec()?, [6; 16]);
        Ok(())
    });
}

/// Stream-ordered memory from a blocking stream is freed on the legacy default stream, which
/// is not ordered after a non-blocking stream. An exec launched there that owns such memory
/// must wait for its launch when dropped, or the memory is handed out again while the launch
/// still writes it.
///
/// The test only shows something when the pool hands the freed memory out again, so that is
/// asserted: the pool keeps everything (`release_threshold: u64::MAX`) and reuses a free once
/// it has completed on the device (`memory/pool.rs`), and the test waits for the free to
/// complete (a blocking stream's work waits for the legacy stream's, not for the non-blocking
/// stream the launch runs on, so the wait cannot hide a launch the drop did not wait for).
#[test]
fn dropping_an_exec_waits_for_its_launch_before_stream_ordered_memory_is_freed() {
    require_gpu!();
    run(|| {
        let blocking = Stream::new()?;
        let pool = MemoryPool::new(MemoryPoolOptions { release_threshold: u64::MAX, ..Default::default() })?;
        let buffer = DeviceBuffer::<u32>::alloc_from_pool_async(N as usize, &pool, &blocking)?;
        blocking.synchronize()?;
        let first_address = buffer.as_raw();
        let mut marker = DeviceBuffer::<u32>::zeroed(1)?; // cudaMalloc: not from the pool
        let graph = Graph::new()?;
        // Spins for about a second before writing: far longer than what follows takes.
        let spin = (N, 1u32, 1_500_000_000u64);
        graph.add_kernel(
            fill_pattern_after_spin(),
            per_element(N),
            (buffer.ptr(), spin.0, spin.1, spin.2),
            &[],
        )?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let launched_on = stream()?; // non-blocking
        exec.launch(&launched_on)?;
        drop((exec, graph, buffer)); // the exec was the last owner, its launch still spinning
                                     // The free is queued on the legacy default stream; work on a blocking stream waits for
                                     // it (and not for `launched_on`), so after this the free has completed on the device.
        marker.memset_async(0, &blocking)?;
        blocking.synchronize()?;

        let other = stream()?;
        let mut reused = DeviceBuffer::<u32>::alloc_from_pool_async(N as usize, &pool, &other)?;
        assert_eq!(
            reused.as_raw(),
            first_address,
            "the pool handed out other memory after the free completed, so this run cannot show a \
             use after free: the pool's reuse rules (memory/pool.rs) are not what the test expects"
        );
        reused.memset_async(0xab, &other)?;
        other.synchronize()?;
        launched_on.synchronize()?; // a launch still running would have overwritten `reused` now
        for (index, value) in reused.to_vec()?.into_iter().enumerate() {
            assert_eq!(value, 0xabab_abab, "element {index} was written by the dropped exec's launch");
        }
        Ok(())
    });
}
