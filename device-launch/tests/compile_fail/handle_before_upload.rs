// A DeviceExec<NotUploaded> is instantiated for device launch but not uploaded: kernels may
// not launch it yet, so it has no `handle` (nor host `launch`), and the error says to upload it.
use cuda_graph::graph::Graph;
use cuda_graph::Stream;

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let graph = Graph::new()?;
    let exec = device_launch::instantiate_for_device(&graph)?;
    let _handle = exec.handle();
    exec.launch(&stream)?;
    Ok(())
}
