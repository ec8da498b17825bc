//! The device graph launch the book's program attempts: a post-processing graph launched
//! from the device, first the book's way (must launch nothing), then correctly.

use chapter_common::ExampleError;
use chapter_common::Samples;
use cuda_graph::graph::Graph;
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{Device, DeviceBuffer, Event};
use device_launch::{instantiate_for_device, ErrorSlot, Launcher};

use crate::kernels::{dp_dispatch, dp_post_share, dp_post_total};
use crate::{model, Bench, REDUCE_THREADS};

/// What the device graph launch part found.
pub(crate) struct DeviceLaunchOutcome {
    pub(crate) book_way: Result<String, String>,
    pub(crate) verified: Result<String, String>,
    pub(crate) launch_us: Samples,
}

/// The post-processing graph launched from the device: first the book's way (must launch
/// nothing), then correctly, `launches` times. Reads the flags and cell sums a pass left.
pub(crate) fn device_graph_launch(
    bench: &Bench, want: &model::Expected, launches: usize,
) -> Result<DeviceLaunchOutcome, ExampleError> {
    let cells = bench.options.cells;
    let stream = &bench.stream;
    let total = DeviceBuffer::<u64>::zeroed(1)?;
    let share = DeviceBuffer::<u32>::zeroed(cells as usize)?;
    let post_runs = DeviceBuffer::<u32>::zeroed(1)?;
    let dispatched = DeviceBuffer::<u32>::zeroed(1)?;

    // total -> share: kernel nodes only, so device-launchable; instantiated with the
    // device-launch flag and uploaded before any kernel may launch it.
    let graph = Graph::new()?;
    let first = graph.add_kernel(
        dp_post_total(),
        LaunchConfig::new(1, REDUCE_THREADS),
        (bench.cell_sums.ptr(), cells, total.ptr()),
        &[],
    )?;
    graph.add_kernel(
        dp_post_share(),
        LaunchConfig::for_elements(cells, 256),
        (bench.cell_sums.ptr(), cells, total.ptr(), share.ptr(), post_runs.ptr()),
        &[&first],
    )?;
    let post = instantiate_for_device(&graph)?.upload(stream)?;
    let untouched = || -> Result<bool, ExampleError> {
        Ok(total.to_vec()?[0] == 0
            && post_runs.to_vec()?[0] == 0
            && dispatched.to_vec()?[0] == 0
            && share.to_vec()?.iter().all(|&s| s == 0))
    };

    // The book's way: the launcher launched on a plain stream.
    let book_slot = ErrorSlot::new()?;
    let args = (post.handle().arg(), bench.flags.ptr(), cells, dispatched.ptr(), book_slot.ptr());
    let attempt = device_launch::run_on_plain_stream(dp_dispatch(), LaunchConfig::new(1, 1), args, stream);
    Device::current()?.synchronize()?;
    let refusal = match attempt {
        Err(err @ device_launch::Error::LauncherNotInGraph { .. }) => Ok(format!("refused at launch: {err}")),
        Ok(()) => match book_slot.check()? {
            Err(err) if err.code == 801 => {
                Ok(format!("the launcher ran; its graph launch was refused: {err}"))
            }
            Err(err) => Err(format!("the launcher ran; its graph launch failed unexpectedly: {err}")),
            Ok(()) => Err("the launcher ran on a plain stream and its graph launch was accepted".to_string()),
        },
        Err(err) => Err(format!("unexpected error: {err}")),
    };
    let book_way = match (refusal, untouched()?) {
        (Ok(how), true) => Ok(format!("{how}; nothing was written")),
        (Ok(how), false) => Err(format!("{how}; but the post-processing outputs changed")),
        (Err(why), _) => Err(why),
    };

    // Done right: the launcher inside a graph (device_launch::Launcher), errors in a slot.
    let slot = ErrorSlot::new()?;
    let launcher = Launcher::new(
        dp_dispatch(),
        LaunchConfig::new(1, 1),
        (post.handle().arg(), bench.flags.ptr(), cells, dispatched.ptr(), slot.ptr()),
    )?;
    let (start, end) = (Event::new()?, Event::new()?);
    let mut launch_us = Samples::default();
    for _ in 0..launches {
        start.record(stream)?;
        launcher.launch(stream)?;
        end.record(stream)?;
        // Fire-and-forget work belongs to the launcher's graph: the stream waits for it.
        stream.synchronize()?;
        launch_us.push(f64::from(Event::elapsed_ms(&start, &end)?) * 1e3);
    }
    let expected_runs = if want.refined > 0 { launches as u32 } else { 0 };
    let got = (total.to_vec()?[0], share.to_vec()?, post_runs.to_vec()?[0], dispatched.to_vec()?[0]);
    let verified = match slot.check()? {
        Err(err) => Err(format!("device-side launch failed: {err}")),
        Ok(()) if got.0 != want.total => Err(format!("total = {}, want {}", got.0, want.total)),
        Ok(()) if got.1 != want.share => {
            let c = got.1.iter().zip(&want.share).position(|(a, b)| a != b).unwrap_or(0);
            Err(format!("share[{c}] = {:?}, want {:?}", got.1.get(c), want.share.get(c)))
        }
        Ok(()) if got.2 != expected_runs || got.3 != expected_runs => {
            Err(format!("post graph ran {} times, {} launches accepted; want {expected_runs}", got.2, got.3))
        }
        Ok(()) => Ok(format!(
            "{launches} launches from the device: total {} and all {cells} shares equal the CPU model, \
             written by nothing but the device-launched graph (run counter {})",
            got.0, got.2
        )),
    };
    Ok(DeviceLaunchOutcome { book_way, verified, launch_us })
}
