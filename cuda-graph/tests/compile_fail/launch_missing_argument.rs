// `fill_pattern` takes (out, n, seed); leaving out `seed` must not compile.
use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};

fn main() -> Result<(), cuda_graph::CudaError> {
    let stream = Stream::new()?;
    let out = DeviceBuffer::<u32>::zeroed(1024)?;
    test_kernels::fill_pattern().launch(&stream, LaunchConfig::for_elements(1024, 256), (out.ptr(), 1024))?;
    Ok(())
}
