// `out` is declared `DevicePtr<u32>` (the kernel writes it); a read-only `DeviceConstPtr`
// must not be accepted.
use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};

fn main() -> Result<(), cuda_graph::CudaError> {
    let stream = Stream::new()?;
    let out = DeviceBuffer::<u32>::zeroed(1024)?;
    test_kernels::fill_pattern().launch(
        &stream,
        LaunchConfig::for_elements(1024, 256),
        (out.const_ptr(), 1024, 7),
    )?;
    Ok(())
}
