// An exec cannot be swapped or replaced under a live handle (`mem::replace`, `mem::swap`):
// the handle would then name an exec that its owner's value no longer is.
use cuda_graph::graph::Graph;
use cuda_graph::Stream;

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let graph = Graph::new()?;
    let mut uploaded = device_launch::instantiate_for_device(&graph)?.upload(&stream)?;
    let mut other = device_launch::instantiate_for_device(&graph)?.upload(&stream)?;
    let handle = uploaded.handle();
    std::mem::swap(&mut uploaded, &mut other);
    let old = std::mem::replace(&mut uploaded, other);
    drop(old);
    let _arg = handle.arg();
    Ok(())
}
