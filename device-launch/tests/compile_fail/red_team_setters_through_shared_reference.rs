// A not-uploaded exec is now `Sync` and its setters lock the exec inside; they still take
// `&mut self`, so code sharing `&DeviceExec<NotUploaded>` (threads, a table of references)
// cannot change it, and no `&` of it is left when `upload` moves it on.
use cuda_graph::graph::Graph;
use cuda_graph::Stream;
use device_launch::{DeviceExec, NotUploaded};

fn change_shared(exec: &DeviceExec<NotUploaded>, graph: &Graph) {
    let node = graph.add_empty(&[]).unwrap();
    let _ = exec.update(graph);
    let _ = exec.set_node_enabled(&node, false);
}

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let graph = Graph::new()?;
    let exec = device_launch::instantiate_for_device(&graph)?;
    let shared = &exec;
    let _uploaded = exec.upload(&stream)?;
    let _ = shared.node_enabled(&graph.add_empty(&[])?);
    let _ = change_shared;
    Ok(())
}
