// A 2-D copy between buffers of different element types does not compile: the rows would be
// reinterpreted (f32 bits read as u32) and the element counts would not match.
use cuda_graph::memory::{Extent2D, PitchedBuffer};
use cuda_graph::{DeviceBuffer, Stream};

fn main() -> cuda_graph::Result<()> {
    let stream = Stream::new()?;
    let mut rows = PitchedBuffer::<u32>::zeroed(4, 4)?;
    let floats = DeviceBuffer::<f32>::zeroed(16)?;
    rows.copy_from_device_async(&floats, 4, &stream)?;
    let other = PitchedBuffer::<u64>::zeroed(4, 4)?;
    let graph = cuda_graph::graph::Graph::new()?;
    graph.add_memcpy_2d(&rows, (0, 0), &other, (0, 0), Extent2D { width: 4, height: 4 }, &[])?;
    Ok(())
}
