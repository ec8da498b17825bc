// `Launcher::exec` lends cuda-graph's `GraphExec` of the launcher; it is not `Clone`, so it
// cannot be wrapped into a `DeviceExec` (a second owner of the same exec, with handles).
use cuda_graph::graph::{DeviceLaunch, GraphExec};
use cuda_graph::DevicePtr;
use device_launch::{DeviceExec, DeviceExecArg, Launcher, NotUploaded, RawErrorSlot};

fn steal(launcher: &Launcher<(DeviceExecArg, DevicePtr<RawErrorSlot>)>) {
    let _from_ref = DeviceExec::<NotUploaded>::from(launcher.exec());
    let _cloned: GraphExec<DeviceLaunch> = launcher.exec().clone();
}

fn main() {
    let _ = steal;
}
