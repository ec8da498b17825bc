// The per-node setters and the in-place update exist only before upload: an uploaded exec,
// which kernels may be launching, is changed only after `edit` / `update` took it back.
use cuda_graph::graph::Graph;
use cuda_graph::{DeviceBuffer, Stream};

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let graph = Graph::new()?;
    let data = DeviceBuffer::<u32>::zeroed(4)?;
    let node = graph.add_empty(&[])?;
    let mut uploaded = device_launch::instantiate_for_device(&graph)?.upload(&stream)?;
    uploaded.set_node_enabled(&node, false)?;
    let _ = uploaded.node_enabled(&node)?;
    uploaded.set_memset(&node, &data.ptr(), 1u32, data.len())?;
    Ok(())
}
