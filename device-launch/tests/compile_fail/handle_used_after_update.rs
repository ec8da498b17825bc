// `update` takes the uploaded exec back to not uploaded: a handle taken before cannot be used
// after (it borrows the exec that `update` consumes).
use cuda_graph::graph::Graph;
use cuda_graph::Stream;

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let graph = Graph::new()?;
    let uploaded = device_launch::instantiate_for_device(&graph)?.upload(&stream)?;
    let handle = uploaded.handle();
    let _not_uploaded = uploaded.update(&graph)?;
    let _arg = handle.arg();
    Ok(())
}
