// The raw `cudaGraphExec_t` of an uploaded exec keeps nothing alive and escapes the update
// rule: taking it is `unsafe` (`DeviceExecHandle::as_raw`), as is `GraphExec::as_raw`.
use cuda_graph::graph::{DeviceLaunch, Graph};
use cuda_graph::Stream;

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let graph = Graph::new()?;
    let uploaded = device_launch::instantiate_for_device(&graph)?.upload(&stream)?;
    let raw: u64 = uploaded.handle().as_raw();
    let exec = graph.instantiate::<DeviceLaunch>(Default::default())?;
    let also_raw = exec.as_raw();
    println!("{raw} {also_raw:?}");
    Ok(())
}
