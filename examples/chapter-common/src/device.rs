//! The device every chapter program runs on.

use cuda_graph::{Device, DeviceProperties};

/// Device 0, made current on this thread, and its properties: where every chapter program runs
/// (`cudaSetDevice(0)`, `cudaGetDeviceProperties`).
///
/// ```no_run
/// let (device, properties) = chapter_common::device_zero()?;
/// println!("{}", chapter_common::device_note(&properties));
/// # let _ = device;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub fn device_zero() -> cuda_graph::Result<(Device, DeviceProperties)> {
    let device = Device::get(0)?;
    device.set_current()?;
    let properties = device.properties()?;
    Ok((device, properties))
}

/// The note a report makes of the device it ran on: its name and SM count, `NAME (N SMs)`.
pub fn device_note(properties: &DeviceProperties) -> String {
    format!("{} ({} SMs)", properties.name, properties.multiprocessors)
}
