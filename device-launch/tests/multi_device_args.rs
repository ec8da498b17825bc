//! SOUNDNESS.md, "Things of other code", item 3: the device-launch kernel arguments on two GPUs.
//! A work queue, an exec handle and a table of them belong to one device: kernels of another
//! device may take the queue only with peer access (and then the queue's memory is freed only
//! after that device finished), and never an exec handle or table of another device. Before the
//! fix their owners were wrappers that the crate's device checks did not see. Needs two GPUs
//! (`REQUIRE_GPUS=2` makes the test fail instead of skipping).

mod support;

use std::thread;
use std::time::Duration;

use cuda_graph::graph::Graph;
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::refusal::DevicePair;
use cuda_graph::{Device, DeviceBuffer, Refusal, Stream, StreamOptions};
use device_launch::{instantiate_for_device, DeviceExecTable, Error, Launcher, WorkQueue};
use device_launch_kernels::{
    dl_mark, dl_queue_consume, dl_sibling_launch_one, dl_wait_for_release, QueueMode,
};
use support::run;

const N: u32 = 4096;

fn non_blocking_on(device: Device) -> cuda_graph::Result<Stream> {
    Stream::with_options_on(device, StreamOptions { non_blocking: true, priority: None })
}

#[test]
fn queues_and_exec_handles_are_checked_and_waited_for_on_the_device_that_uses_them() {
    gpu_test_support::require_gpus!(2);
    run(|| {
        let (first, second) = (Device::get(0)?, Device::get(1)?);
        first.set_current()?;
        let mut queue = WorkQueue::with_capacity(N)?;
        queue.push_all(&(0..N).collect::<Vec<u32>>())?;
        let on_second = non_blocking_on(second)?;
        let hits = DeviceBuffer::<u32>::zeroed_on(second, N as usize)?;
        let consume = |queue: &WorkQueue| {
            dl_queue_consume().launch(
                &on_second,
                LaunchConfig::new(8, 128),
                (queue.arg(), hits.ptr(), QueueMode::PerThread as u32),
            )
        };

        // Without peer access, device 1's kernel cannot reach the queue: refused by name.
        if !second.peer_access_enabled(first) {
            let err =
                consume(&queue).expect_err("a device-1 launch took a device-0 queue without peer access");
            let no_peer_access = Refusal::NoPeerAccess { owner: 0, user: 1 };
            assert_eq!(err.refusal(), Some(&no_peer_access), "{err}");
        }

        // A device-0 exec handle is for device-0 kernels only, in a launcher of device 1 too.
        let counters = DeviceBuffer::<u32>::zeroed_on(first, 1)?;
        let marking = Graph::new_on(first)?;
        marking.add_kernel(dl_mark(), LaunchConfig::new(1, 1), (counters.ptr(), 0), &[])?;
        let uploaded = instantiate_for_device(&marking)?.upload(&non_blocking_on(first)?)?;
        let slot = second.with_current(device_launch::ErrorSlot::new)?;
        let refused = second.with_current(|| {
            Launcher::new(
                dl_sibling_launch_one(),
                LaunchConfig::new(1, 1),
                (uploaded.handle().arg(), slot.ptr()),
            )
        });
        let err = refused.expect_err("a device-1 launcher took a device-0 exec handle");
        let other_device =
            Refusal::DevicesDiffer { pair: DevicePair::ArgumentAndKernel, first: 0, second: 1 };
        assert!(matches!(&err, Error::Cuda(err) if err.refusal() == Some(&other_device)), "{err}");
        // A table holds graphs of one device.
        let other_graph = Graph::new_on(second)?;
        other_graph.add_kernel(dl_mark(), LaunchConfig::new(1, 1), (hits.ptr(), 0), &[])?;
        let other = instantiate_for_device(&other_graph)?.upload(&on_second)?;
        let err =
            DeviceExecTable::new(&[uploaded.handle(), other.handle()]).expect_err("a table of two devices");
        let two_devices = Refusal::DevicesDiffer { pair: DevicePair::TableGraphs, first: 0, second: 1 };
        assert!(matches!(&err, Error::Cuda(err) if err.refusal() == Some(&two_devices)), "{err}");

        // With peer access the launch runs, and the queue's memory waits for device 1: here
        // the consumer starts only once a release flag is set, ~300 ms after the queue is
        // dropped. Before the fix the drop waited for device 0 alone and freed the memory,
        // which the next device-0 allocations got, and the late consumer wrote into them.
        second.enable_peer_access(first)?;
        let mut release = DeviceBuffer::<u32>::zeroed_on(second, 1)?;
        let waited = DeviceBuffer::<u32>::zeroed_on(second, 1)?;
        dl_wait_for_release().launch(
            &on_second,
            LaunchConfig::new(1, 1),
            (release.ptr(), waited.ptr(), 0),
        )?;
        consume(&queue)?;
        // A synchronous copy on device 1's legacy stream, which the non-blocking stream's
        // waiting kernel does not hold up.
        let setter = thread::spawn(move || -> cuda_graph::Result<()> {
            thread::sleep(Duration::from_millis(300));
            second.with_current(|| release.copy_from_host(&[1]))
        });
        drop(queue);
        // Fresh device-0 memory of both sizes the queue had (header and items).
        let fresh_header = DeviceBuffer::<u8>::from_slice_on(first, &[0xab; 64])?;
        let fresh_items = DeviceBuffer::<u32>::from_slice_on(first, &vec![0xabab_abab; N as usize])?;
        setter.join().expect("the release thread")?;
        on_second.synchronize()?;
        let header_changed = fresh_header.to_vec()?.iter().filter(|&&b| b != 0xab).count();
        let items_changed = fresh_items.to_vec()?.iter().filter(|&&v| v != 0xabab_abab).count();
        assert_eq!(
            (header_changed, items_changed),
            (0, 0),
            "device 1's consumer wrote into device-0 memory allocated after the queue was dropped"
        );
        assert_eq!(waited.to_vec()?, [1]);
        assert_eq!(cuda_graph::take_unreported_errors().len(), 0);
        Ok(())
    });
}
