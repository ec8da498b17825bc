// The deprecated names are aliases of the new states, not a way around them: a
// `DeviceGraphExec` (now `DeviceExec<NotUploaded>`) still has no handle and no host launch,
// and an exec refused by `update` comes back as a not-uploaded one without a handle either.
#![allow(deprecated)]
use cuda_graph::graph::Graph;
use cuda_graph::Stream;
use device_launch::{DeviceGraph, DeviceGraphExec, ExecState};

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let graph = Graph::new()?;
    let exec: DeviceGraphExec = device_launch::instantiate_for_device(&graph)?;
    let _handle: DeviceGraph<'_> = exec.handle();
    exec.launch(&stream)?;
    let uploaded = exec.upload(&stream)?;
    if let Err(refused) = uploaded.update(&graph) {
        if let ExecState::NotUploaded(not_uploaded) = refused.exec {
            let _arg = not_uploaded.handle().arg();
        }
    }
    Ok(())
}
