// A DeviceExecHandle is borrowed from its exec and cannot be stored in a graph node (which
// outlives borrows): kernels receive `handle.arg()`, which keeps the exec alive.
use cuda_graph::graph::Graph;
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::Stream;

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let work = Graph::new()?;
    let uploaded = device_launch::instantiate_for_device(&work)?.upload(&stream)?;
    let slot = device_launch::ErrorSlot::new()?;
    let launcher = Graph::new()?;
    launcher.add_kernel(
        device_launch_kernels::dl_fire_and_forget_one(),
        LaunchConfig::new(1, 1),
        (uploaded.handle(), slot.ptr()),
        &[],
    )?;
    Ok(())
}
