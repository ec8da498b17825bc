//! Collectives recorded into `cuda-graph` graphs by stream capture, one graph per GPU, next to
//! kernel nodes; and an all-reduce inside a WHILE node's body, which CUDA 13.0 allows once
//! NCCL records no event wait node into captures (`NCCL_GRAPH_MIXING_SUPPORT=0`, set here for
//! the whole binary before NCCL starts: eager and captured collectives are never outstanding
//! at once in these tests).

mod support;

use cuda_graph::graph::{CaptureMode, Graph, HostLaunch, NodeKind};
use cuda_graph::{DeviceBuffer, LaunchConfig};
use cuda_graph_nccl::{Communicator, Group, ReduceOp};
use support::{graph_mixing_off, nccl_ready, note_one_rank, streams_for, sync_all};
use test_kernels::{add_scalar, fill_pattern, pattern, while_step};

const N: u32 = 1 << 14;

fn per_element() -> LaunchConfig {
    LaunchConfig::for_elements(N, 256)
}

/// One eager all-reduce: NCCL connects its ranks on the first collective, which must not
/// happen inside a capture.
fn warm_up(comms: &[Communicator], streams: &[cuda_graph::Stream]) {
    let mut scratch: Vec<_> =
        comms.iter().map(|c| DeviceBuffer::<u32>::zeroed_on(c.device(), 256).unwrap()).collect();
    let mut group = Group::new();
    for ((comm, stream), buffer) in comms.iter().zip(streams).zip(&mut scratch) {
        group.all_reduce_in_place(comm, buffer, ReduceOp::Sum, stream).unwrap();
    }
    group.launch().unwrap();
    sync_all(streams);
}

#[test]
fn kernels_and_an_all_reduce_captured_replay_as_one_graph_per_gpu() {
    graph_mixing_off();
    let Some(_serial) = nccl_ready("kernels_and_an_all_reduce_captured_replay_as_one_graph_per_gpu") else {
        return;
    };
    let comms = Communicator::init_all().unwrap();
    note_one_rank(&comms, "kernels_and_an_all_reduce_captured_replay_as_one_graph_per_gpu");
    let streams = streams_for(&comms);
    warm_up(&comms, &streams);
    let mut data: Vec<_> =
        comms.iter().map(|c| DeviceBuffer::<u32>::zeroed_on(c.device(), N as usize).unwrap()).collect();
    let captures: Vec<_> =
        streams.iter().map(|s| s.begin_capture(CaptureMode::ThreadLocal).unwrap()).collect();
    for ((comm, stream), buffer) in comms.iter().zip(&streams).zip(&data) {
        fill_pattern().launch(stream, per_element(), (buffer.ptr(), N, comm.rank() as u32)).unwrap();
    }
    let mut group = Group::new();
    for ((comm, stream), buffer) in comms.iter().zip(&streams).zip(&mut data) {
        group.all_reduce_in_place(comm, buffer, ReduceOp::Sum, stream).unwrap();
    }
    group.launch().unwrap();
    for (stream, buffer) in streams.iter().zip(&data) {
        add_scalar().launch(stream, per_element(), (buffer.ptr(), N, 1)).unwrap();
    }
    let graphs: Vec<Graph> = captures.into_iter().map(|capture| capture.end().unwrap()).collect();
    for (graph, comm) in graphs.iter().zip(&comms) {
        assert_eq!(graph.device(), comm.device());
        let kinds: Vec<NodeKind> = graph.nodes().unwrap().iter().map(|node| node.kind()).collect();
        eprintln!("rank {}: captured nodes {kinds:?}", comm.rank());
        // A lone rank's in-place all-reduce has nothing to move: NCCL records no kernel for it.
        let want_kernels = if comms.len() > 1 { 3 } else { 2 };
        assert!(kinds.iter().filter(|&&kind| kind == NodeKind::Kernel).count() >= want_kernels, "{kinds:?}");
    }
    let execs: Vec<_> =
        graphs.iter().map(|g| g.instantiate::<HostLaunch>(Default::default()).unwrap()).collect();
    drop(graphs);
    let want: Vec<u32> = (0..N)
        .map(|i| {
            (0..comms.len() as u32).fold(0u32, |sum, rank| sum.wrapping_add(pattern(i, rank))).wrapping_add(1)
        })
        .collect();
    for replay in 0..3 {
        for buffer in &mut data {
            buffer.copy_from_host(&vec![0; N as usize]).unwrap();
        }
        for (exec, stream) in execs.iter().zip(&streams) {
            exec.launch(stream).unwrap();
        }
        sync_all(&streams);
        for (rank, buffer) in data.iter().enumerate() {
            assert_eq!(buffer.to_vec().unwrap(), want, "replay {replay}, rank {rank}");
        }
    }
    // The execs keep the communicators alive: dropping these first is fine.
    drop(comms);
    for (exec, stream) in execs.iter().zip(&streams) {
        exec.launch(stream).unwrap();
    }
    sync_all(&streams);
    assert_eq!(data[0].to_vec().unwrap(), want);
}

#[test]
fn an_all_reduce_inside_a_while_body() {
    graph_mixing_off();
    let Some(_serial) = nccl_ready("an_all_reduce_inside_a_while_body") else { return };
    let comms = Communicator::init_all().unwrap();
    note_one_rank(&comms, "an_all_reduce_inside_a_while_body");
    let streams = streams_for(&comms);
    warm_up(&comms, &streams);
    let limit = 5u32;
    let ranks = comms.len() as u32;
    let mut data: Vec<_> = comms
        .iter()
        .map(|c| DeviceBuffer::from_slice_on(c.device(), &vec![1u32; N as usize]).unwrap())
        .collect();
    let counters: Vec<_> =
        comms.iter().map(|c| DeviceBuffer::<u32>::zeroed_on(c.device(), 1).unwrap()).collect();
    let graphs: Vec<Graph> = comms.iter().map(|c| Graph::new_on(c.device()).unwrap()).collect();
    let handles: Vec<_> = graphs.iter().map(|g| g.conditional_handle(Some(1)).unwrap()).collect();
    let bodies: Vec<_> = graphs.iter().zip(&handles).map(|(g, h)| g.add_while(h, &[]).unwrap().1).collect();
    let captures: Vec<_> = streams
        .iter()
        .zip(&bodies)
        .map(|(s, body)| s.begin_capture_to_graph(body, CaptureMode::ThreadLocal, &[]).unwrap())
        .collect();
    for (stream, buffer) in streams.iter().zip(&data) {
        add_scalar().launch(stream, per_element(), (buffer.ptr(), N, 1)).unwrap();
    }
    let mut group = Group::new();
    for ((comm, stream), buffer) in comms.iter().zip(&streams).zip(&mut data) {
        group.all_reduce_in_place(comm, buffer, ReduceOp::Sum, stream).unwrap();
    }
    group.launch().unwrap();
    for ((stream, handle), counter) in streams.iter().zip(&handles).zip(&counters) {
        while_step()
            .launch(stream, LaunchConfig::for_elements(1, 32), (*handle, counter.ptr(), limit))
            .unwrap();
    }
    for capture in captures {
        capture.end().unwrap();
    }
    for body in &bodies {
        let kinds: Vec<NodeKind> = body.nodes().unwrap().iter().map(|node| node.kind()).collect();
        assert!(!kinds.contains(&NodeKind::EventWait), "NCCL recorded an event wait node: {kinds:?}");
    }
    let execs: Vec<_> =
        graphs.iter().map(|g| g.instantiate::<HostLaunch>(Default::default()).unwrap()).collect();
    for (exec, stream) in execs.iter().zip(&streams) {
        exec.launch(stream).unwrap();
    }
    sync_all(&streams);
    // Each pass: x = ranks * (x + 1), `limit` passes from 1.
    let want = (0..limit).fold(1u32, |x, _| ranks.wrapping_mul(x.wrapping_add(1)));
    for (buffer, counter) in data.iter().zip(&counters) {
        assert_eq!(counter.to_vec().unwrap(), [limit]);
        assert_eq!(buffer.to_vec().unwrap(), vec![want; N as usize]);
    }
}
