// `out` is declared `DevicePtr<u32>`; a pointer to `f32`s must not be accepted.
use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};

fn main() -> Result<(), cuda_graph::CudaError> {
    let stream = Stream::new()?;
    let floats = DeviceBuffer::<f32>::zeroed(1024)?;
    test_kernels::fill_pattern().launch(
        &stream,
        LaunchConfig::for_elements(1024, 256),
        (floats.ptr(), 1024, 7),
    )?;
    Ok(())
}
