// The two states are different types: a not-uploaded exec cannot be swapped into the place
// of an uploaded one (nor the reverse) to make it look uploaded.
use cuda_graph::graph::Graph;
use cuda_graph::Stream;

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let graph = Graph::new()?;
    let mut uploaded = device_launch::instantiate_for_device(&graph)?.upload(&stream)?;
    let mut not_uploaded = device_launch::instantiate_for_device(&graph)?;
    std::mem::swap(&mut not_uploaded, &mut uploaded);
    let _ = std::mem::replace(&mut uploaded, not_uploaded);
    Ok(())
}
