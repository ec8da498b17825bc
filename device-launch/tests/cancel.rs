//! Stopping a self-relaunching device loop from the host: the loop runs until its
//! `CancelFlag` is set, `RunningLoop::stop` ends it, and dropping a running loop returns.

mod support;

use std::time::{Duration, Instant};

use cuda_graph::{DeviceBuffer, Stream};
use device_launch::{CancelFlag, Error, ErrorSlot, Launcher};
use device_launch_kernels::dl_relaunch_until_cancelled;
use gpu_test_support::require_gpu;
use support::{one, run, stream};

/// A stream, the loop's step counter, error slot and flag: what `loop_of` launches.
struct Parts {
    stream: Stream,
    steps: DeviceBuffer<u32>,
    slot: ErrorSlot,
    flag: CancelFlag,
}

fn parts() -> Result<Parts, Error> {
    Ok(Parts {
        stream: stream()?,
        steps: DeviceBuffer::zeroed(1)?,
        slot: ErrorSlot::new()?,
        flag: CancelFlag::new()?,
    })
}

/// The self-relaunching step counter that stops once `parts.flag` is set.
fn loop_of(parts: &Parts) -> Result<Launcher<impl cuda_graph::KernelArgs>, Error> {
    Launcher::new(
        dl_relaunch_until_cancelled(),
        one(),
        (parts.steps.ptr(), parts.flag.arg(), parts.slot.ptr()),
    )
}

#[test]
fn a_loop_runs_until_cancelled_and_stops_for_good() {
    require_gpu!();
    run(|| {
        let parts = parts()?;
        let Parts { stream, steps, slot, flag } = &parts;
        let launcher = loop_of(&parts)?;
        let running = launcher.start(stream, flag, slot)?;
        std::thread::sleep(Duration::from_millis(50));
        assert!(!stream.is_idle()?, "the loop is still relaunching itself");
        running.stop()?;
        assert!(stream.is_idle()?);
        let after_stop = steps.to_vec()?[0];
        assert!(after_stop > 1, "the loop ran several steps before the stop ({after_stop})");
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(steps.to_vec()?[0], after_stop, "nothing runs after the stop");
        // The flag is cleared by the next start: the loop runs again.
        let running = launcher.start(stream, flag, slot)?;
        std::thread::sleep(Duration::from_millis(10));
        running.stop()?;
        assert!(steps.to_vec()?[0] > after_stop);
        Ok(())
    });
}

#[test]
fn dropping_a_running_loop_stops_it_and_returns() {
    require_gpu!();
    run(|| {
        let parts = parts()?;
        let Parts { stream, slot, flag, .. } = &parts;
        let launcher = loop_of(&parts)?;
        let running = launcher.start(stream, flag, slot)?;
        std::thread::sleep(Duration::from_millis(20));
        let dropped = Instant::now();
        drop(running);
        assert!(dropped.elapsed() < Duration::from_secs(5), "the drop waited {:?}", dropped.elapsed());
        assert!(stream.is_idle()?);
        slot.check()??;
        drop(launcher); // no launch is pending: the exec drop does not wait for a loop
        Ok(())
    });
}
