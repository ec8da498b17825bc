// A DeviceGraphExec is instantiated for device launch but not uploaded: kernels may not
// launch it yet, so it has no `handle`.
use cuda_graph::graph::Graph;

fn main() -> Result<(), device_launch::Error> {
    let graph = Graph::new()?;
    let exec = device_launch::instantiate_for_device(&graph)?;
    let _handle = exec.handle();
    Ok(())
}
