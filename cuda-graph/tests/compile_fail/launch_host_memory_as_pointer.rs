// A kernel cannot read host memory through a device pointer parameter: neither a `&Vec<u32>`
// nor a `&[u32]` is a `DevicePtr<u32>`.
use cuda_graph::{LaunchConfig, Stream};

fn main() -> Result<(), cuda_graph::CudaError> {
    let stream = Stream::new()?;
    let host = vec![0u32; 1024];
    let config = LaunchConfig::for_elements(1024, 256);
    test_kernels::fill_pattern().launch(&stream, config, (&host, 1024, 7))?;
    test_kernels::fill_pattern().launch(&stream, config, (&host[..], 1024, 7))?;
    Ok(())
}
