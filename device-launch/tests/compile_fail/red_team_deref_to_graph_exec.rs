// A `DeviceExec` derefs to nothing: cuda-graph's `GraphExec` methods are not reachable
// through it (no `Deref`, `AsRef` or `Borrow`), so its inner exec cannot be reached or moved.
use cuda_graph::graph::{DeviceLaunch, Graph, GraphExec};
use cuda_graph::Stream;
use std::borrow::Borrow;

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let graph = Graph::new()?;
    let exec = device_launch::instantiate_for_device(&graph)?;
    let _inner: &GraphExec<DeviceLaunch> = &*exec;
    let _as_ref: &GraphExec<DeviceLaunch> = exec.as_ref();
    let _borrowed: &GraphExec<DeviceLaunch> = exec.borrow();
    let _recycled = exec.is_recycled();
    exec.launch_completion(&stream)?;
    Ok(())
}
