// An exec has one owner per state: neither state is `Clone` (a second uploaded value would
// hand out handles while the first is edited).
use cuda_graph::graph::Graph;
use cuda_graph::Stream;

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let graph = Graph::new()?;
    let exec = device_launch::instantiate_for_device(&graph)?;
    let _twin = exec.clone();
    let uploaded = exec.upload(&stream)?;
    let _uploaded_twin = uploaded.clone();
    Ok(())
}
