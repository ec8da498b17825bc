// `edit` (back to not uploaded, for per-node setters) takes the exec by value: not while a
// handle borrowed from it lives, so the handle cannot name an exec being changed.
use cuda_graph::graph::Graph;
use cuda_graph::Stream;

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let graph = Graph::new()?;
    let node = graph.add_empty(&[])?;
    let uploaded = device_launch::instantiate_for_device(&graph)?.upload(&stream)?;
    let handle = uploaded.handle();
    let mut exec = uploaded.edit()?;
    exec.set_node_enabled(&node, false)?;
    let _arg = handle.arg();
    Ok(())
}
