// `n` is declared `u32`; an `f32` must not be accepted (nor silently converted).
use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};

fn main() -> Result<(), cuda_graph::CudaError> {
    let stream = Stream::new()?;
    let out = DeviceBuffer::<u32>::zeroed(1024)?;
    let n: f32 = 1024.0;
    test_kernels::fill_pattern().launch(&stream, LaunchConfig::for_elements(1024, 256), (out.ptr(), n, 7))?;
    Ok(())
}
