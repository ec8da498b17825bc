// No conversion makes an uploaded exec without `upload`: not from a cuda-graph exec (also
// through the deprecated `UploadedGraphExec`), not from a not-uploaded one (`into`, a plain
// coercion), and no way back to not uploaded that skips `edit`'s check for live arguments.
#![allow(deprecated)]
use cuda_graph::graph::{DeviceLaunch, Graph};
use cuda_graph::Stream;
use device_launch::{DeviceExec, NotUploaded, Uploaded, UploadedGraphExec};

fn coerce(exec: DeviceExec<NotUploaded>) -> DeviceExec<Uploaded> {
    exec
}

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let graph = Graph::new()?;
    let raw = graph.instantiate::<DeviceLaunch>(Default::default())?;
    let _via_alias = UploadedGraphExec::from(raw);
    let exec = device_launch::instantiate_for_device(&graph)?;
    let _into: DeviceExec<Uploaded> = exec.into();
    let uploaded = device_launch::instantiate_for_device(&graph)?.upload(&stream)?;
    let _arg = uploaded.handle().arg();
    let _back: DeviceExec<NotUploaded> = uploaded.into();
    let _ = coerce;
    Ok(())
}
