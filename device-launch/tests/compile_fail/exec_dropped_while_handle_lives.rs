// A DeviceExecHandle borrows its exec: the exec cannot be dropped while the handle is in use.
use cuda_graph::graph::Graph;
use cuda_graph::Stream;

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let graph = Graph::new()?;
    let uploaded = device_launch::instantiate_for_device(&graph)?.upload(&stream)?;
    let handle = uploaded.handle();
    drop(uploaded);
    println!("{handle:?}");
    Ok(())
}
