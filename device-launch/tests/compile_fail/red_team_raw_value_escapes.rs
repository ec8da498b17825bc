// `KernelParam::raw` of a `DeviceExecArg` is public, and its `RawDeviceExec` is `Copy` and
// outlives the argument: it must carry nothing anywhere. It is no `DeviceRepr` (so it cannot
// be written to device memory as a table that keeps no exec alive), no `KernelParam` (so no
// kernel takes it in place of the argument), and its number cannot be read.
use cuda_graph::graph::Graph;
use cuda_graph::{DeviceRepr, KernelParam, Stream};

fn storable<T: DeviceRepr>(_value: T) {}
fn kernel_parameter<T: KernelParam>(_value: T) {}

fn main() -> Result<(), device_launch::Error> {
    let stream = Stream::new()?;
    let graph = Graph::new()?;
    let uploaded = device_launch::instantiate_for_device(&graph)?.upload(&stream)?;
    let arg = uploaded.handle().arg();
    let raw = arg.raw();
    drop(arg);
    storable(raw);
    kernel_parameter(raw);
    let _number: u64 = raw.0;
    Ok(())
}
