//! The launch limits measured on CUDA 13.0: past them a device-side launch is refused, and
//! the refusal comes back through the ErrorSlot (neither a hang nor a silent pass).

mod support;

use cuda_graph::DeviceBuffer;
use device_launch::limits::{FIRE_AND_FORGET_LIMIT, TAIL_LAUNCH_LIMIT};
use device_launch::{DeviceLaunchError, Error, ErrorSlot, Launcher, Operation};
use device_launch_kernels::{
    dl_fire_and_forget_all, dl_fire_and_forget_past_limit, dl_tail_launch_past_limit,
};
use gpu_test_support::require_gpu;
use support::{launch_pending_graph_twice, marking_graphs, one, run, stream, table};

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
