// A handle cannot leave the function whose exec it borrows.
use cuda_graph::graph::Graph;
use cuda_graph::Stream;
use device_launch::DeviceExecHandle;

fn handle(stream: &Stream) -> Result<DeviceExecHandle<'static>, device_launch::Error> {
    let graph = Graph::new()?;
    let uploaded = device_launch::instantiate_for_device(&graph)?.upload(stream)?;
    Ok(uploaded.handle())
}

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let _arg = handle(&stream)?.arg();
    Ok(())
}
