//! Launcher kernels run inside a graph: `Launcher` / `launch_from_graph` work, and a plain
//! stream launch of a launcher is reported with the rule (CUDA 13.0: 801) instead of
//! passing silently.

mod support;

use cuda_graph::DeviceBuffer;
use device_launch::{launch_from_graph, run_on_plain_stream, Error, ErrorSlot, Launcher};
use device_launch_kernels::{dl_fire_and_forget_one, dl_relaunch_until};
use gpu_test_support::require_gpu;
use support::{marking_graphs, one, run, stream};

#[test]
fn a_launcher_on_a_plain_stream_reports_the_graph_rule_and_launches_nothing() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let counters = DeviceBuffer::<u32>::zeroed(1)?;
        let execs = marking_graphs(&counters, 1, &stream)?;
        let slot = ErrorSlot::new()?;
        let result = run_on_plain_stream(
            dl_fire_and_forget_one(),
            one(),
            (execs[0].handle().arg(), slot.ptr()),
            &stream,
        );
        match result {
            Err(err @ Error::LauncherNotInGraph { .. }) => {
                assert_eq!(err.code(), Some(801));
                let text = err.to_string();
                assert!(text.contains("`dl_fire_and_forget_one`"), "{text}");
                assert!(text.contains("must itself run inside a graph"), "{text}");
            }
            // Should the kernel run after all, its device-side launch must report the 801.
            Ok(()) => {
                let err = slot.check()?.expect_err("a launcher outside a graph cannot launch graphs");
                assert_eq!(err.code, 801, "{err}");
                assert!(err.to_string().contains("inside a graph"), "{err}");
            }
            Err(other) => panic!("expected the 801 explained, got {other}"),
        }
        cuda_graph::Device::current()?.synchronize()?;
        assert_eq!(counters.to_vec()?, [0], "no graph may have been launched");
        Ok(())
    });
}

#[test]
fn launch_from_graph_runs_the_launcher_and_set_args_retargets_it() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let counters = DeviceBuffer::<u32>::zeroed(2)?;
        let execs = marking_graphs(&counters, 2, &stream)?;
        let slot = ErrorSlot::new()?;
        let mut launcher: Launcher<_> = launch_from_graph(
            dl_fire_and_forget_one(),
            one(),
            (execs[0].handle().arg(), slot.ptr()),
            &stream,
        )?;
        stream.synchronize()?;
        slot.check()??;
        assert_eq!(counters.to_vec()?, [1, 0]);
        launcher.set_args(one(), (execs[1].handle().arg(), slot.ptr()))?;
        launcher.run(&stream, &slot)?;
        assert_eq!(counters.to_vec()?, [1, 1]);
        Ok(())
    });
}

#[test]
fn a_launcher_dropped_while_its_loop_runs_waits_for_it_before_its_exec_is_reused() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let slot = ErrorSlot::new()?;
        let (first, second) = (DeviceBuffer::<u32>::zeroed(1)?, DeviceBuffer::<u32>::zeroed(1)?);
        let reused_before = cuda_graph::graph::exec_pool_stats().reused;
        // About 2,000 self-relaunches: milliseconds, still running when the host drops it.
        let looping = Launcher::new(dl_relaunch_until(), one(), (first.ptr(), 2000, slot.ptr()))?;
        looping.launch(&stream)?;
        drop(looping);
        // The copy is not ordered after `stream` (non-blocking): only the drop's wait makes
        // the loop complete here.
        assert_eq!(first.to_vec()?, [2000], "the drop did not wait for the running loop");
        let again = Launcher::new(dl_relaunch_until(), one(), (second.ptr(), 100, slot.ptr()))?;
        again.run(&stream, &slot)?;
        assert_eq!(second.to_vec()?, [100]);
        assert_eq!(first.to_vec()?, [2000], "the reused exec still wrote the first loop's counter");
        assert!(
            cuda_graph::graph::exec_pool_stats().reused > reused_before,
            "the parked launcher was not reused"
        );
        Ok(())
    });
}

/// SOUNDNESS.md, "Things of other code", item 7: changing a launcher's arguments while its
/// self-relaunching loop may still launch it from the device. CUDA leaves changing an exec the
/// device may be launching undefined, so `set_args` waits for the loop (the launch it started)
/// first. Before the fix it changed the exec at once, with about 20,000 relaunches still to come.
#[test]
fn set_args_waits_for_a_running_self_relaunching_loop() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let slot = ErrorSlot::new()?;
        let (first, second) = (DeviceBuffer::<u32>::zeroed(1)?, DeviceBuffer::<u32>::zeroed(1)?);
        let mut looping = Launcher::new(dl_relaunch_until(), one(), (first.ptr(), 20_000, slot.ptr()))?;
        looping.launch(&stream)?;
        looping.set_args(one(), (second.ptr(), 50, slot.ptr()))?;
        // Not synchronized: only the setter's wait can have finished the loop by now.
        let idle = stream.is_idle()?;
        let counted = first.to_vec()?;
        assert!(
            idle && counted == [20_000],
            "set_args changed the exec while its loop ran ({counted:?} steps done)"
        );
        looping.run(&stream, &slot)?;
        assert_eq!(second.to_vec()?, [50]);
        assert_eq!(first.to_vec()?, [20_000]);
        Ok(())
    });
}
