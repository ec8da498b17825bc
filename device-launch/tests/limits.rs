//! The launch limits measured on CUDA 13.0: past them a device-side launch is refused, and
//! the refusal comes back through the ErrorSlot (neither a hang nor a silent pass). Graph size
//! is not such a limit: CUDA 13.0 instantiates, uploads and device-launches graphs of 16,384
//! independent kernel nodes (measured with a C++ probe; instantiation grows faster than
//! linearly: 33 ms at 1,024 nodes, 190 ms at 4,096, 3.9 s at 16,384). What is too large is a
//! node the device cannot run, which is refused when it is added.

mod support;

use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DeviceBuffer, Refusal};
use device_launch::limits::{FIRE_AND_FORGET_LIMIT, TAIL_LAUNCH_LIMIT};
use device_launch::{instantiate_for_device, DeviceLaunchError, Error, ErrorSlot, Launcher, Operation};
use device_launch_kernels::{
    dl_fire_and_forget_all, dl_fire_and_forget_one, dl_fire_and_forget_past_limit, dl_mark,
    dl_tail_launch_all, dl_tail_launch_past_limit,
};
use gpu_test_support::require_gpu;
use support::{launch_pending_graph_twice, marking_graphs, one, run, stream, table, wide_marking_graph};

fn device_error(result: Result<(), Error>) -> DeviceLaunchError {
    match result {
        Err(Error::Device(err)) => err,
        other => panic!("expected a device-side launch failure in the slot, got {other:?}"),
    }
}

#[test]
fn a_launcher_may_fire_and_forget_exactly_the_limit() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let counters = DeviceBuffer::<u32>::zeroed(FIRE_AND_FORGET_LIMIT as usize)?;
        let execs = marking_graphs(&counters, FIRE_AND_FORGET_LIMIT, &stream)?;
        let table = table(&execs)?;
        let (slot, accepted) = (ErrorSlot::new()?, DeviceBuffer::<u32>::zeroed(1)?);
        let args = (table.arg(), FIRE_AND_FORGET_LIMIT, accepted.ptr(), slot.ptr());
        Launcher::new(dl_fire_and_forget_all(), one(), args)?.run(&stream, &slot)?;
        assert_eq!(accepted.to_vec()?, [FIRE_AND_FORGET_LIMIT]);
        assert!(counters.to_vec()?.iter().all(|&c| c == 1));
        Ok(())
    });
}

#[test]
fn the_121st_fire_and_forget_is_refused_and_reported_in_the_slot() {
    require_gpu!();
    run(|| {
        let n = FIRE_AND_FORGET_LIMIT + 1;
        let stream = stream()?;
        let counters = DeviceBuffer::<u32>::zeroed(n as usize)?;
        let execs = marking_graphs(&counters, n, &stream)?;
        let table = table(&execs)?;
        let (slot, accepted) = (ErrorSlot::new()?, DeviceBuffer::<u32>::zeroed(1)?);
        let launcher = Launcher::new(
            dl_fire_and_forget_past_limit(),
            one(),
            (table.arg(), n, accepted.ptr(), slot.ptr()),
        )?;
        let err = device_error(launcher.run(&stream, &slot));
        assert_eq!((err.code, err.operation, err.failures), (1, Operation::FireAndForget, 1), "{err}");
        assert!(err.to_string().contains("120 fire-and-forget"), "{err}");
        assert_eq!(accepted.to_vec()?, [FIRE_AND_FORGET_LIMIT]);
        let counts = counters.to_vec()?;
        assert_eq!(counts.iter().filter(|&&c| c == 1).count(), FIRE_AND_FORGET_LIMIT as usize);
        assert_eq!(counts[FIRE_AND_FORGET_LIMIT as usize], 0, "the refused (last) graph must not have run");
        Ok(())
    });
}

#[test]
fn the_256th_tail_launch_is_refused_and_reported_in_the_slot() {
    require_gpu!();
    run(|| {
        let n = TAIL_LAUNCH_LIMIT + 1;
        let stream = stream()?;
        let counters = DeviceBuffer::<u32>::zeroed(n as usize)?;
        let execs = marking_graphs(&counters, n, &stream)?;
        let table = table(&execs)?;
        let (slot, accepted) = (ErrorSlot::new()?, DeviceBuffer::<u32>::zeroed(1)?);
        let launcher =
            Launcher::new(dl_tail_launch_past_limit(), one(), (table.arg(), n, accepted.ptr(), slot.ptr()))?;
        let err = device_error(launcher.run(&stream, &slot));
        assert_eq!((err.code, err.operation, err.failures), (1, Operation::TailLaunch, 1), "{err}");
        assert!(err.to_string().contains("255 tail launches"), "{err}");
        assert_eq!(accepted.to_vec()?, [TAIL_LAUNCH_LIMIT]);
        let counts = counters.to_vec()?;
        assert!(counts[..TAIL_LAUNCH_LIMIT as usize].iter().all(|&c| c == 1), "{counts:?}");
        assert_eq!(counts[TAIL_LAUNCH_LIMIT as usize], 0, "the refused (last) graph must not have run");
        Ok(())
    });
}

#[test]
fn a_graph_launched_again_while_its_launch_is_pending_is_refused() {
    require_gpu!();
    run(|| {
        // The launched graph waits for the launcher's release, so it is still pending when
        // the launcher fires it the second time.
        let (outcome, runs) = launch_pending_graph_twice(&stream()?)?;
        let err = device_error(outcome);
        assert_eq!((err.code, err.operation, err.failures), (1, Operation::FireAndForget, 1), "{err}");
        assert_eq!(runs, 1, "the graph ran once");
        Ok(())
    });
}

#[test]
fn a_graph_of_4096_nodes_launched_from_the_device_runs_every_node() {
    require_gpu!();
    run(|| {
        // Under compute-sanitizer memcheck the 4,096 device-launched kernels took over 90 s.
        let width: u32 = if gpu_test_support::under_sanitizer() { 256 } else { 4096 };
        let stream = stream()?;
        let counters = DeviceBuffer::<u32>::zeroed(width as usize)?;
        let wide = instantiate_for_device(&wide_marking_graph(&counters, width)?)?.upload(&stream)?;
        let slot = ErrorSlot::new()?;
        Launcher::new(dl_fire_and_forget_one(), one(), (wide.handle().arg(), slot.ptr()))?
            .run(&stream, &slot)?;
        let table = table(std::slice::from_ref(&wide))?;
        let accepted = DeviceBuffer::<u32>::zeroed(1)?;
        Launcher::new(dl_tail_launch_all(), one(), (table.arg(), 1, accepted.ptr(), slot.ptr()))?
            .run(&stream, &slot)?;
        assert_eq!(accepted.to_vec()?, [1]);
        let counts = counters.to_vec()?;
        let wrong: Vec<(usize, u32)> =
            counts.iter().copied().enumerate().filter(|&(_, c)| c != 2).take(8).collect();
        assert!(wrong.is_empty(), "nodes that did not run once per launch (node, runs): {wrong:?}");
        Ok(())
    });
}

#[test]
fn a_node_too_large_for_the_device_is_refused_when_added_and_the_graph_stays_usable() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let counters = DeviceBuffer::<u32>::zeroed(2)?;
        let graph = wide_marking_graph(&counters, 2)?;
        let too_many_threads = LaunchConfig::new(1, 2048);
        let too_much_shared = LaunchConfig::new(1, 32).with_shared_mem(16 << 20);
        // The geometry is checked before CUDA is called; the shared memory CUDA refuses
        // (cudaErrorInvalidValue).
        let err = graph.add_kernel(dl_mark(), too_many_threads, (counters.ptr(), 0), &[]).unwrap_err();
        assert!(matches!(err.refusal(), Some(Refusal::BlockTooLarge { .. })), "{err:?}");
        let err = graph.add_kernel(dl_mark(), too_much_shared, (counters.ptr(), 0), &[]).unwrap_err();
        assert_eq!(err.code(), Some(1), "{err:?}");
        assert_eq!(graph.node_count()?, 2, "a refused node was added anyway");
        let exec = instantiate_for_device(&graph)?.upload(&stream)?;
        let slot = ErrorSlot::new()?;
        Launcher::new(dl_fire_and_forget_one(), one(), (exec.handle().arg(), slot.ptr()))?
            .run(&stream, &slot)?;
        assert_eq!(counters.to_vec()?, [1, 1]);
        Ok(())
    });
}
