// `Graph::instantiate_default` gives a host-launch exec: it is not a device-launch exec and
// cannot become one, so it never yields a handle (a host exec launched from the device is an
// illegal-address fault).
use cuda_graph::graph::{DeviceLaunch, Graph, GraphExec};
use device_launch::{DeviceExec, NotUploaded};

fn main() -> Result<(), device_launch::Error> {
    let graph = Graph::new()?;
    let _device: GraphExec<DeviceLaunch> = graph.instantiate_default()?;
    let exec = graph.instantiate_default()?;
    let _handle = exec.handle();
    let _wrapped = DeviceExec::<NotUploaded>::from(exec);
    Ok(())
}
