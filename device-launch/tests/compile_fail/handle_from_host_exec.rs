// An exec instantiated for host launch can never give kernels a handle (launching it from the
// device is an illegal-address fault that kills the context): it has no `handle`, and it is
// not a device-launch exec.
use cuda_graph::graph::{Graph, HostLaunch};

fn main() -> Result<(), device_launch::Error> {
    let graph = Graph::new()?;
    let exec = graph.instantiate::<HostLaunch>(Default::default())?;
    let _handle = exec.handle();
    let _device = device_launch::DeviceExec::<device_launch::NotUploaded>::from(exec);
    Ok(())
}
