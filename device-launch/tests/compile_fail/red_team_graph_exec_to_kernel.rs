// cuda-graph's own device-launch exec (never uploaded, never validated, no owner that waits
// for the device) is no kernel argument; only `DeviceExecArg` is.
use cuda_graph::graph::{DeviceLaunch, Graph};
use cuda_graph::kernel::LaunchConfig;

fn main() -> Result<(), device_launch::Error> {
    let graph = Graph::new()?;
    let exec = graph.instantiate::<DeviceLaunch>(Default::default())?;
    let slot = device_launch::ErrorSlot::new()?;
    let launcher = Graph::new()?;
    launcher.add_kernel(
        device_launch_kernels::dl_fire_and_forget_one(),
        LaunchConfig::new(1, 1),
        (exec, slot.ptr()),
        &[],
    )?;
    Ok(())
}
