//! Helpers shared by the device-launch GPU tests.
#![allow(dead_code)] // each test binary uses a different subset

use cuda_graph::graph::Graph;
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DeviceBuffer, Stream, StreamOptions};
use device_launch::{
    instantiate_for_device, DeviceExec, DeviceExecTable, Error, ErrorSlot, Launcher, Uploaded,
};

/// Runs a test body, failing the test with the error's message if it returns one.
pub fn run(body: impl FnOnce() -> Result<(), Error>) {
    if let Err(err) = body() {
        panic!("{err}");
    }
}

/// A non-blocking stream (tests run on parallel threads of one process).
pub fn stream() -> Result<Stream, Error> {
    Ok(Stream::with_options(StreamOptions { non_blocking: true, priority: None })?)
}

/// One thread.
pub fn one() -> LaunchConfig {
    LaunchConfig::new(1, 1)
}

/// `n` uploaded device graphs; graph `i` adds 1 to `counters[i]`.
pub fn marking_graphs(
    counters: &DeviceBuffer<u32>, n: u32, stream: &Stream,
) -> Result<Vec<DeviceExec<Uploaded>>, Error> {
    (0..n)
        .map(|i| {
            let graph = Graph::new()?;
            graph.add_kernel(device_launch_kernels::dl_mark(), one(), (counters.ptr(), i), &[])?;
            instantiate_for_device(&graph)?.upload(stream)
        })
        .collect()
}

/// A graph of `width` independent nodes; node `i` adds 1 to `counters[i]`.
pub fn wide_marking_graph(counters: &DeviceBuffer<u32>, width: u32) -> Result<Graph, Error> {
    let graph = Graph::new()?;
    for i in 0..width {
        graph.add_kernel(device_launch_kernels::dl_mark(), one(), (counters.ptr(), i), &[])?;
    }
    Ok(graph)
}

/// A table of every exec's handle, in order.
pub fn table(execs: &[DeviceExec<Uploaded>]) -> Result<DeviceExecTable, Error> {
    DeviceExecTable::new(&execs.iter().map(DeviceExec::handle).collect::<Vec<_>>())
}

/// Fire-and-forgets one graph twice from one launcher while its first launch is still pending
/// (the graph waits for the launcher's release): returns what `Launcher::run` returned (the
/// second launch should be refused) and how often the graph ran.
pub fn launch_pending_graph_twice(stream: &Stream) -> Result<(Result<(), Error>, u32), Error> {
    let (release, counters) = (DeviceBuffer::<u32>::zeroed(1)?, DeviceBuffer::<u32>::zeroed(1)?);
    let graph = Graph::new()?;
    graph.add_kernel(
        device_launch_kernels::dl_wait_for_release(),
        one(),
        (release.ptr(), counters.ptr(), 0),
        &[],
    )?;
    let waiting = instantiate_for_device(&graph)?.upload(stream)?;
    let slot = ErrorSlot::new()?;
    let args = (waiting.handle().arg(), release.ptr(), slot.ptr());
    let outcome =
        Launcher::new(device_launch_kernels::dl_fire_and_forget_twice(), one(), args)?.run(stream, &slot);
    Ok((outcome, counters.to_vec()?[0]))
}
