//! The work queue: N items pushed from the host are each processed exactly once, whether
//! consumers claim them per thread, per warp or per block.

mod support;

use cuda_graph::kernel::LaunchConfig;
use cuda_graph::DeviceBuffer;
use device_launch::WorkQueue;
use device_launch_kernels::{dl_queue_consume, QueueMode};
use gpu_test_support::require_gpu;
use support::{run, stream};

/// Not a multiple of 32 nor of the block size, so the last claims are partial.
const N: u32 = 10_007;

/// Every item once, in a scrambled order.
fn items() -> Vec<u32> {
    (0..N).map(|i| (i as u64 * 7919 % N as u64) as u32).collect()
}

fn every_item_once(mode: QueueMode) {
    run(|| {
        let stream = stream()?;
        let mut queue = WorkQueue::with_capacity(N)?;
        queue.push_all(&items())?;
        assert_eq!(queue.len(), N);
        let hits = DeviceBuffer::<u32>::zeroed(N as usize)?;
        dl_queue_consume().launch(
            &stream,
            LaunchConfig::new(16, 128),
            (queue.arg(), hits.ptr(), mode as u32),
        )?;
        stream.synchronize()?;
        let hits = hits.to_vec()?;
        let wrong: Vec<(usize, u32)> =
            hits.iter().copied().enumerate().filter(|&(_, h)| h != 1).take(10).collect();
        assert!(wrong.is_empty(), "{mode:?}: items not processed exactly once (item, times): {wrong:?}");
        assert_eq!(queue.processed()?, N);
        assert_eq!(queue.claimed()?, N);
        Ok(())
    });
}

#[test]
fn every_item_is_processed_exactly_once_per_thread() {
    require_gpu!();
    every_item_once(QueueMode::PerThread);
}

#[test]
fn every_item_is_processed_exactly_once_per_warp() {
    require_gpu!();
    every_item_once(QueueMode::PerWarp);
}

#[test]
fn every_item_is_processed_exactly_once_per_block() {
    require_gpu!();
    every_item_once(QueueMode::PerBlock);
}

#[test]
fn a_queue_refills_after_reset_and_refuses_pushes_past_its_capacity() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let mut queue = WorkQueue::with_capacity(64)?;
        queue.push_all(&(0..40).collect::<Vec<u32>>())?;
        assert!(queue.push_all(&[0; 25]).is_err());
        queue.push_all(&(40..64).collect::<Vec<u32>>())?;
        let hits = DeviceBuffer::<u32>::zeroed(64)?;
        let config = LaunchConfig::new(2, 64);
        dl_queue_consume().launch(&stream, config, (queue.arg(), hits.ptr(), QueueMode::PerWarp as u32))?;
        stream.synchronize()?;
        assert_eq!(queue.processed()?, 64);
        queue.reset()?;
        assert_eq!(queue.read()?.head, 0);
        queue.push_all(&[3, 5])?;
        dl_queue_consume().launch(&stream, config, (queue.arg(), hits.ptr(), QueueMode::PerBlock as u32))?;
        stream.synchronize()?;
        let hits = hits.to_vec()?;
        assert_eq!((hits[3], hits[5], hits[4]), (2, 2, 1));
        assert_eq!(queue.processed()?, 2);
        Ok(())
    });
}
