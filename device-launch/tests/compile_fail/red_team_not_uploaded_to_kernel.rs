// A not-uploaded exec cannot reach a kernel: not by value, not by reference, not through a
// handle asked for with a fully qualified call, not in a table.
use cuda_graph::graph::Graph;
use cuda_graph::kernel::LaunchConfig;
use device_launch::{DeviceExec, DeviceExecTable, NotUploaded};

fn main() -> Result<(), device_launch::Error> {
    let graph = Graph::new()?;
    let exec = device_launch::instantiate_for_device(&graph)?;
    let slot = device_launch::ErrorSlot::new()?;
    let launcher = Graph::new()?;
    let kernel = device_launch_kernels::dl_fire_and_forget_one();
    launcher.add_kernel(kernel, LaunchConfig::new(1, 1), (&exec, slot.ptr()), &[])?;
    let arg = DeviceExec::<NotUploaded>::handle(&exec).arg();
    launcher.add_kernel(kernel, LaunchConfig::new(1, 1), (arg, slot.ptr()), &[])?;
    let _table = DeviceExecTable::new(&[exec.handle()])?;
    launcher.add_kernel(kernel, LaunchConfig::new(1, 1), (exec, slot.ptr()), &[])?;
    Ok(())
}
