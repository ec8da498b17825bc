//! Batch memory operation nodes (`graph/nodes/batch_mem_op.rs`, SOUNDNESS.md, "Batch memory
//! operation nodes"): writes land in buffers the graph keeps alive, waits met by the nodes
//! before them let the launch complete, the node reads back and is set on an exec; on a real
//! GPU (skipped without one).

mod graph_support;

use cuda_graph::graph::{Graph, HostLaunch, MemOp, MemOpKind, NodeKind, WaitCondition};
use cuda_graph::refusal::Empty;
use cuda_graph::{take_unreported_errors, DeviceBuffer, Refusal};
use gpu_test_support::{require_gpu, under_sanitizer};
use graph_support::{run, stream};

#[test]
fn writes_land_waits_are_met_and_the_node_reads_back() {
    require_gpu!();
    run(|| {
        let flags = DeviceBuffer::<u32>::zeroed(2)?;
        let stamp = DeviceBuffer::<u64>::zeroed(1)?;
        let after = DeviceBuffer::<u32>::zeroed(4)?;
        let graph = Graph::new()?;
        let writes = [
            MemOp::write_u32(&flags.ptr(), 7)?,
            MemOp::write_u32(&flags.ptr().offset(1)?, 9)?,
            MemOp::write_u64(&stamp.ptr(), u64::MAX - 1)?,
        ];
        let write = graph.add_batch_mem_op(&writes, &[])?;
        // SAFETY: `write` (before it) stored 7, so the wait is met at once.
        let equal = unsafe { MemOp::wait_u32(&flags.ptr(), 7, WaitCondition::Equal) }?;
        // SAFETY: `write` stored u64::MAX - 1, so the wait is met at once.
        let at_least = unsafe { MemOp::wait_u64(&stamp.ptr(), u64::MAX - 1, WaitCondition::GreaterOrEqual) }?;
        let waits = [equal, at_least];
        let wait = graph.add_batch_mem_op(&waits, &[&write])?;
        graph.add_memset(&after.ptr(), 3u32, 4, &[&wait])?;

        let kinds: Vec<NodeKind> = graph.nodes()?.iter().map(|info| info.kind()).collect();
        assert_eq!(kinds.iter().filter(|&&kind| kind == NodeKind::BatchMemOp).count(), 2);
        assert_eq!(graph.node_kind(&write)?, NodeKind::BatchMemOp);
        let read = graph.batch_mem_op_params(&write)?;
        let read: Vec<(MemOpKind, u64, u64)> =
            read.ops.iter().map(|op| (op.kind, op.addr, op.value)).collect();
        assert_eq!(
            read,
            [
                (MemOpKind::Write32, flags.ptr().addr(), 7),
                (MemOpKind::Write32, flags.ptr().addr() + 4, 9),
                (MemOpKind::Write64, stamp.ptr().addr(), u64::MAX - 1),
            ]
        );
        let read = graph.batch_mem_op_params(&wait)?;
        assert_eq!(read.ops[0].kind, MemOpKind::Wait32(WaitCondition::Equal));
        assert_eq!(read.ops[1].kind, MemOpKind::Wait64(WaitCondition::GreaterOrEqual));
        assert!(graph.memset_params(&write).is_err(), "a batch node is not a memset node");

        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let stream = stream()?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(flags.to_vec()?, [7, 9]);
        assert_eq!(stamp.to_vec()?, [u64::MAX - 1]);
        assert_eq!(after.to_vec()?, [3; 4], "the node after the waits ran");
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}

#[test]
fn an_exec_takes_new_addresses_and_values() {
    require_gpu!();
    run(|| {
        let first = DeviceBuffer::<u32>::zeroed(1)?;
        let graph = Graph::new()?;
        let node = graph.add_batch_mem_op(&[MemOp::write_u32(&first.ptr(), 1)?], &[])?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let stream = stream()?;
        exec.launch(&stream)?;
        let second = DeviceBuffer::<u32>::zeroed(1)?;
        exec.set_batch_mem_op(&node, &[MemOp::write_u32(&second.ptr(), 2)?])?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!((first.to_vec()?, second.to_vec()?), (vec![1], vec![2]));
        Ok(())
    });
}

#[test]
fn an_empty_batch_is_refused_and_the_kind_says_where_it_may_be() {
    require_gpu!();
    run(|| {
        let graph = Graph::new()?;
        let err = graph.add_batch_mem_op(&[], &[]).unwrap_err();
        assert!(matches!(err.refusal(), Some(Refusal::Empty(Empty::MemOps))), "{err}");
        assert!(!NodeKind::BatchMemOp.allowed_in_conditional_body());
        assert_eq!(graph.node_count()?, 0);
        Ok(())
    });
}

/// *memcheck*: the buffers are dropped before the graph runs; the writes land in the memory the
/// graph keeps (read back through a copy node into a buffer the test holds), so nothing writes
/// freed memory.
#[test]
fn batch_writes_go_to_buffers_the_graph_keeps_after_their_drop() {
    require_gpu!();
    run(|| {
        let launches = if under_sanitizer() { 3 } else { 50 };
        let out = DeviceBuffer::<u32>::zeroed(2)?;
        let graph = Graph::new()?;
        {
            let flags = DeviceBuffer::<u32>::zeroed(2)?;
            let ops = [MemOp::write_u32(&flags.ptr(), 11)?, MemOp::write_u32(&flags.ptr().offset(1)?, 12)?];
            let write = graph.add_batch_mem_op(&ops, &[])?;
            graph.add_memcpy(&out.ptr(), &flags.ptr(), 2, &[&write])?;
            // `flags` is dropped here: only the graph keeps its memory.
        }
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        drop(graph);
        let stream = stream()?;
        for _ in 0..launches {
            exec.launch(&stream)?;
        }
        stream.synchronize()?;
        assert_eq!(out.to_vec()?, [11, 12]);
        drop(exec);
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}
