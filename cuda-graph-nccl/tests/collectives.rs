//! Every collective on every GPU of the host, checked against the CPU; the refusals made
//! before NCCL sees a mistake. One GPU runs a one-rank clique; the checks that need two
//! skip visibly there (`require_gpus!(2)`).

mod support;

use cuda_graph::refusal::{Bounds, DevicePair, Lengths};
use cuda_graph::{CudaError, Device, DeviceBuffer, Refusal};
use cuda_graph_nccl::{Communicator, Group, ReduceOp};
use support::{nccl_ready, note_one_rank, streams_for, sync_all};

/// Each rank's input: exact in every element type used here.
fn input(rank: usize, i: usize) -> i64 {
    (rank as i64 + 1) * 1000 + (i as i64 % 97)
}

#[test]
fn every_collective_on_every_gpu_matches_the_cpu() {
    let Some(_serial) = nccl_ready("every_collective_on_every_gpu_matches_the_cpu") else { return };
    let comms = Communicator::init_all().unwrap();
    note_one_rank(&comms, "every_collective_on_every_gpu_matches_the_cpu");
    let streams = streams_for(&comms);
    let ranks = comms.len();
    let count = 4099; // not a multiple of anything NCCL chunks by
    let on =
        |comm: &Communicator, values: Vec<f64>| DeviceBuffer::from_slice_on(comm.device(), &values).unwrap();
    let rank_input = |rank: usize| (0..count).map(|i| input(rank, i) as f64).collect::<Vec<_>>();

    // All-reduce (sum, separate buffers) and in place (max, i64).
    let sends: Vec<_> = comms.iter().map(|c| on(c, rank_input(c.rank()))).collect();
    let mut recvs: Vec<_> =
        comms.iter().map(|c| DeviceBuffer::<f64>::zeroed_on(c.device(), count).unwrap()).collect();
    let mut maxes: Vec<_> = comms
        .iter()
        .map(|c| {
            let values: Vec<i64> =
                (0..count).map(|i| input(c.rank(), i) * if i % 2 == 0 { 1 } else { -1 }).collect();
            DeviceBuffer::from_slice_on(c.device(), &values).unwrap()
        })
        .collect();
    let mut group = Group::new();
    for (((comm, stream), send), recv) in comms.iter().zip(&streams).zip(&sends).zip(&mut recvs) {
        group.all_reduce(comm, send, recv, ReduceOp::Sum, stream).unwrap();
    }
    for ((comm, stream), max) in comms.iter().zip(&streams).zip(&mut maxes) {
        group.all_reduce_in_place(comm, max, ReduceOp::Max, stream).unwrap();
    }
    assert_eq!(group.len(), 2 * ranks);
    group.launch().unwrap();
    sync_all(&streams);
    let sum: Vec<f64> = (0..count).map(|i| (0..ranks).map(|r| input(r, i) as f64).sum()).collect();
    let max: Vec<i64> = (0..count)
        .map(|i| (0..ranks).map(|r| input(r, i) * if i % 2 == 0 { 1 } else { -1 }).max().unwrap())
        .collect();
    for (recv, max_buffer) in recvs.iter().zip(&maxes) {
        assert_eq!(recv.to_vec().unwrap(), sum);
        assert_eq!(max_buffer.to_vec().unwrap(), max);
    }

    // Broadcast from the last rank, in place (u32); reduce (f32 sum) to rank 0.
    let root = ranks - 1;
    let mut shared: Vec<_> = comms
        .iter()
        .map(|c| DeviceBuffer::from_slice_on(c.device(), &vec![c.rank() as u32 * 7 + 1; count]).unwrap())
        .collect();
    let floats: Vec<_> = comms
        .iter()
        .map(|c| DeviceBuffer::from_slice_on(c.device(), &vec![c.rank() as f32 + 0.5; count]).unwrap())
        .collect();
    let mut reduced: Vec<_> =
        comms.iter().map(|c| DeviceBuffer::<f32>::zeroed_on(c.device(), count).unwrap()).collect();
    let mut group = Group::new();
    for ((comm, stream), data) in comms.iter().zip(&streams).zip(&mut shared) {
        group.broadcast_in_place(comm, data, root, stream).unwrap();
    }
    for (((comm, stream), send), recv) in comms.iter().zip(&streams).zip(&floats).zip(&mut reduced) {
        group.reduce(comm, send, recv, ReduceOp::Sum, 0, stream).unwrap();
    }
    group.launch().unwrap();
    sync_all(&streams);
    for data in &shared {
        assert_eq!(data.to_vec().unwrap(), vec![root as u32 * 7 + 1; count]);
    }
    let float_sum: f32 = (0..ranks).map(|r| r as f32 + 0.5).sum();
    assert_eq!(reduced[0].to_vec().unwrap(), vec![float_sum; count]);
    for other in &reduced[1..] {
        assert_eq!(other.to_vec().unwrap(), vec![0.0; count], "reduce writes the root's buffer only");
    }

    // All-gather (i32) and reduce-scatter (f64 sum).
    let pieces: Vec<_> = comms
        .iter()
        .map(|c| {
            DeviceBuffer::from_slice_on(
                c.device(),
                &(0..count).map(|i| input(c.rank(), i) as i32).collect::<Vec<_>>(),
            )
            .unwrap()
        })
        .collect();
    let mut gathered: Vec<_> =
        comms.iter().map(|c| DeviceBuffer::<i32>::zeroed_on(c.device(), count * ranks).unwrap()).collect();
    let wholes: Vec<_> = comms
        .iter()
        .map(|c| on(c, (0..count * ranks).map(|i| input(c.rank(), i) as f64).collect()))
        .collect();
    let mut scattered: Vec<_> =
        comms.iter().map(|c| DeviceBuffer::<f64>::zeroed_on(c.device(), count).unwrap()).collect();
    let mut group = Group::new();
    for (((comm, stream), send), recv) in comms.iter().zip(&streams).zip(&pieces).zip(&mut gathered) {
        group.all_gather(comm, send, recv, stream).unwrap();
    }
    for (((comm, stream), send), recv) in comms.iter().zip(&streams).zip(&wholes).zip(&mut scattered) {
        group.reduce_scatter(comm, send, recv, ReduceOp::Sum, stream).unwrap();
    }
    group.launch().unwrap();
    sync_all(&streams);
    let all: Vec<i32> = (0..ranks).flat_map(|r| (0..count).map(move |i| input(r, i) as i32)).collect();
    for (rank, (gather, scatter)) in gathered.iter().zip(&scattered).enumerate() {
        assert_eq!(gather.to_vec().unwrap(), all);
        let block: Vec<f64> =
            (0..count).map(|i| (0..ranks).map(|r| input(r, rank * count + i) as f64).sum()).collect();
        assert_eq!(scatter.to_vec().unwrap(), block, "rank {rank}'s block");
    }
    assert!(cuda_graph::take_unreported_errors().is_empty());
}

fn refusal(result: cuda_graph::Result<()>) -> Refusal {
    let err = result.expect_err("must be refused before NCCL sees it");
    match err {
        CudaError::InvalidArgument { reason, .. } => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn mistakes_are_refused_before_nccl_sees_them() {
    gpu_test_support::require_gpus!(2);
    let Some(_serial) = nccl_ready("mistakes_are_refused_before_nccl_sees_them") else { return };
    let (first, second) = (Device::get(0).unwrap(), Device::get(1).unwrap());
    let err = Communicator::init_on(&[first, first]).unwrap_err();
    assert_eq!(err.refusal(), Some(&Refusal::DuplicateDevice { ordinal: 0 }), "{err}");
    let comms = Communicator::init_on(&[first, second]).unwrap();
    let streams = streams_for(&comms);
    let mut on_second = DeviceBuffer::<f32>::zeroed_on(second, 16).unwrap();
    let mut on_first = DeviceBuffer::<f32>::zeroed_on(first, 16).unwrap();
    {
        let mut group = Group::new();
        let reason =
            refusal(group.all_reduce_in_place(&comms[0], &mut on_second, ReduceOp::Sum, &streams[0]));
        let send = DevicePair::CommunicatorAnd { what: "the send buffer" };
        assert_eq!(reason, Refusal::DevicesDiffer { pair: send, first: 0, second: 1 });
        assert!(group.is_empty(), "nothing refused is kept");
    }
    let reason =
        refusal(Group::new().all_reduce_in_place(&comms[0], &mut on_first, ReduceOp::Sum, &streams[1]));
    let stream = DevicePair::CommunicatorAnd { what: "the stream" };
    assert_eq!(reason, Refusal::DevicesDiffer { pair: stream, first: 0, second: 1 });
    // The text users read.
    assert_eq!(
        reason.to_string(),
        "the communicator's rank runs on device 0 and the stream belongs to device 1"
    );
    let reason = refusal(Group::new().broadcast_in_place(&comms[0], &mut on_first, 2, &streams[0]));
    assert_eq!(reason, Refusal::OutOfBounds(Bounds::NotARank { root: 2, size: 2 }));
    let small = DeviceBuffer::<f32>::zeroed_on(first, 16).unwrap();
    let mut gathered = DeviceBuffer::<f32>::zeroed_on(first, 16).unwrap();
    let reason = refusal(Group::new().all_gather(&comms[0], &small, &mut gathered, &streams[0]));
    let short = Lengths::CollectiveBuffer { which: "receive", have: 16, want: 32 };
    assert_eq!(reason, Refusal::LengthMismatch(short));
    // Ranks that disagree: NCCL would hang; the group names both ranks.
    let mut longer = DeviceBuffer::<f32>::zeroed_on(second, 32).unwrap();
    let mut group = Group::new();
    group.all_reduce_in_place(&comms[0], &mut on_first, ReduceOp::Sum, &streams[0]).unwrap();
    group.all_reduce_in_place(&comms[1], &mut longer, ReduceOp::Sum, &streams[1]).unwrap();
    match refusal(group.launch()) {
        Refusal::RanksOutOfStep { why, queued: None } => {
            assert!(why.contains("ranks 0 and 1 of one clique issue different collectives"), "{why}")
        }
        other => panic!("expected ranks out of step, got {other:?}"),
    }
    // The communicators still work after the refusals.
    let mut group = Group::new();
    group.all_reduce_in_place(&comms[0], &mut on_first, ReduceOp::Sum, &streams[0]).unwrap();
    group.all_reduce_in_place(&comms[1], &mut on_second, ReduceOp::Sum, &streams[1]).unwrap();
    group.launch().unwrap();
    sync_all(&streams);
    assert_eq!(on_first.to_vec().unwrap(), vec![0.0; 16]);
}

#[test]
fn the_current_device_is_the_same_after_nccl_calls() {
    let Some(_serial) = nccl_ready("the_current_device_is_the_same_after_nccl_calls") else { return };
    let last = Device::get(Device::count().unwrap() - 1).unwrap();
    last.set_current().unwrap();
    let comms = Communicator::init_all().unwrap();
    // With one GPU the last device is device 0, current anyway: nothing to tell apart.
    note_one_rank(&comms, "the_current_device_is_the_same_after_nccl_calls");
    assert_eq!(Device::current().unwrap(), last);
    let streams = streams_for(&comms);
    let mut data: Vec<_> =
        comms.iter().map(|c| DeviceBuffer::from_slice_on(c.device(), &[2u64; 8]).unwrap()).collect();
    let mut group = Group::new();
    for ((comm, stream), buffer) in comms.iter().zip(&streams).zip(&mut data) {
        group.all_reduce_in_place(comm, buffer, ReduceOp::Prod, stream).unwrap();
    }
    group.launch().unwrap();
    assert_eq!(Device::current().unwrap(), last);
    sync_all(&streams);
    assert_eq!(data[0].to_vec().unwrap(), vec![1u64 << comms.len(); 8]);
    drop(comms);
    assert!(cuda_graph::take_unreported_errors().is_empty());
    Device::get(0).unwrap().set_current().unwrap();
}
