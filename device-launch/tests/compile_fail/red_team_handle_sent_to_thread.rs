// A handle is `Send`, but borrowed: a thread that may outlive the exec cannot take it, and
// the exec cannot be edited (or dropped) while a scoped thread still holds its handle.
use cuda_graph::graph::Graph;
use cuda_graph::Stream;

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let graph = Graph::new()?;
    let uploaded = device_launch::instantiate_for_device(&graph)?.upload(&stream)?;
    let handle = uploaded.handle();
    let _thread = std::thread::spawn(move || handle.arg());

    let other = device_launch::instantiate_for_device(&graph)?.upload(&stream)?;
    let handle = other.handle();
    std::thread::scope(|scope| {
        scope.spawn(move || handle.arg());
        let _not_uploaded = other.edit();
    });
    Ok(())
}
