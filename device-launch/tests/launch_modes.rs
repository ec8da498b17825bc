//! Each launch mode's effect, checked on data: fire-and-forget, tail (in order, after the
//! launcher), sibling, self-relaunch (exactly 1000 steps), and a self-relaunching scheduler
//! that fire-and-forgets one graph per queue item.

mod support;

use cuda_graph::graph::Graph;
use cuda_graph::{Device, DeviceBuffer};
use device_launch::{instantiate_for_device, ErrorSlot, Launcher, WorkQueue};
use device_launch_kernels::{
    dl_append, dl_fire_and_forget_all, dl_queue_scheduler, dl_relaunch_until, dl_sibling_launch_all,
    dl_tail_launch_all,
};
use gpu_test_support::require_gpu;
use support::{marking_graphs, one, run, stream, table};

#[test]
fn fire_and_forget_runs_every_graph_of_the_table_once_per_launch() {
    require_gpu!();
    run(|| {
        const N: u32 = 16;
        let stream = stream()?;
        let counters = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let execs = marking_graphs(&counters, N, &stream)?;
        let table = table(&execs)?;
        let (slot, accepted) = (ErrorSlot::new()?, DeviceBuffer::<u32>::zeroed(1)?);
        let launcher =
            Launcher::new(dl_fire_and_forget_all(), one(), (table.arg(), N, accepted.ptr(), slot.ptr()))?;
        launcher.run(&stream, &slot)?;
        assert_eq!(accepted.to_vec()?, [N]);
        assert_eq!(counters.to_vec()?, vec![1; N as usize]);
        // The stream's synchronization waited for the fire-and-forget graphs: none is
        // pending, so the same graphs may be launched again.
        launcher.run(&stream, &slot)?;
        assert_eq!(counters.to_vec()?, vec![2; N as usize]);
        Ok(())
    });
}

#[test]
fn tail_launches_run_in_order_after_the_launcher_completes() {
    require_gpu!();
    run(|| {
        const N: u32 = 8;
        let stream = stream()?;
        let log = DeviceBuffer::<u32>::zeroed(1 + 2 * N as usize)?;
        let accepted = DeviceBuffer::<u32>::zeroed(1)?;
        let execs = (0..N)
            .map(|value| {
                let graph = Graph::new()?;
                graph.add_kernel(dl_append(), one(), (log.ptr(), N, value, accepted.ptr()), &[])?;
                instantiate_for_device(&graph)?.upload(&stream)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let table = table(&execs)?;
        let slot = ErrorSlot::new()?;
        Launcher::new(dl_tail_launch_all(), one(), (table.arg(), N, accepted.ptr(), slot.ptr()))?
            .run(&stream, &slot)?;
        // Entry k = (value, what *accepted held when it ran): the order issued, and each saw
        // the launcher's last write, so each ran after the launcher had finished.
        let mut expected = vec![N];
        for value in 0..N {
            expected.extend([value, N]);
        }
        assert_eq!(log.to_vec()?, expected);
        Ok(())
    });
}

#[test]
fn sibling_launches_run_every_graph() {
    require_gpu!();
    run(|| {
        const N: u32 = 4;
        let stream = stream()?;
        let counters = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let execs = marking_graphs(&counters, N, &stream)?;
        let table = table(&execs)?;
        let (slot, accepted) = (ErrorSlot::new()?, DeviceBuffer::<u32>::zeroed(1)?);
        let launcher =
            Launcher::new(dl_sibling_launch_all(), one(), (table.arg(), N, accepted.ptr(), slot.ptr()))?;
        launcher.launch(&stream)?;
        // Siblings do not belong to the launcher's graph: wait for the whole device.
        Device::current()?.synchronize()?;
        slot.check()??;
        assert_eq!(accepted.to_vec()?, [N]);
        assert_eq!(counters.to_vec()?, vec![1; N as usize]);
        Ok(())
    });
}

#[test]
fn a_self_relaunch_loop_runs_exactly_1000_steps() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let mut steps = DeviceBuffer::<u32>::zeroed(1)?;
        let slot = ErrorSlot::new()?;
        let launcher = Launcher::new(dl_relaunch_until(), one(), (steps.ptr(), 1000, slot.ptr()))?;
        launcher.run(&stream, &slot)?;
        assert_eq!(steps.to_vec()?, [1000]);
        // The loop can run again from the host once it has finished.
        steps.copy_from_host(&[0])?;
        launcher.run(&stream, &slot)?;
        assert_eq!(steps.to_vec()?, [1000]);
        Ok(())
    });
}

#[test]
fn a_queue_scheduler_fires_one_graph_per_item_and_relaunches_itself_until_drained() {
    require_gpu!();
    run(|| {
        const GRAPHS: u32 = 4;
        const ITEMS: u32 = 300;
        let stream = stream()?;
        let counters = DeviceBuffer::<u32>::zeroed(GRAPHS as usize)?;
        let execs = marking_graphs(&counters, GRAPHS, &stream)?;
        let table = table(&execs)?;
        let mut queue = WorkQueue::with_capacity(ITEMS)?;
        let items: Vec<u32> = (0..ITEMS).map(|i| (i * 7) % 13).collect();
        queue.push_all(&items)?;
        let (slot, steps) = (ErrorSlot::new()?, DeviceBuffer::<u32>::zeroed(1)?);
        Launcher::new(
            dl_queue_scheduler(),
            one(),
            (queue.arg(), table.arg(), GRAPHS, steps.ptr(), slot.ptr()),
        )?
        .run(&stream, &slot)?;
        let mut expected = vec![0u32; GRAPHS as usize];
        for item in &items {
            expected[(item % GRAPHS) as usize] += 1;
        }
        assert_eq!(counters.to_vec()?, expected);
        assert_eq!(steps.to_vec()?, [ITEMS]);
        assert_eq!(queue.processed()?, ITEMS);
        assert_eq!(queue.claimed()?, ITEMS);
        Ok(())
    });
}
