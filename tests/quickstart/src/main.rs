use cuda_graph::graph::Graph;
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{CudaError, DeviceBuffer, DeviceSlice, HostLaunch, Stream};

cuda_graph::kernels! {
    // SAFETY: saxpy touches x[i] and y[i] only for i below both lengths (a slice carries its own).
    unsafe fn saxpy(a: f32, x: DeviceSlice<f32>, y: DeviceSlice<f32>);
}

fn main() -> Result<(), CudaError> {
    let n = 1 << 20;
    let x = DeviceBuffer::from_slice(&vec![1.0f32; n])?;
    let y = DeviceBuffer::from_slice(&vec![2.0f32; n])?;
    let stream = Stream::new()?;
    let config = LaunchConfig::for_elements(n as u32, 256);

    // One launch on a stream: y = 2x + y.
    saxpy().launch(&stream, config, (2.0, x.slice(), y.slice()))?;

    // The same kernel as a graph's node: instantiated once, launched ten times.
    let graph = Graph::new()?;
    graph.add_kernel(saxpy(), config, (2.0, x.slice(), y.slice()), &[])?;
    let exec = graph.instantiate::<HostLaunch>(Default::default())?;
    for _ in 0..10 {
        exec.launch(&stream)?;
    }
    stream.synchronize()?;

    let y = y.to_vec()?;
    assert!(y.iter().all(|&v| v == 24.0)); // 2 + 11 launches × 2 × 1
    println!("saxpy: {n} elements, 11 launches, y = {}", y[0]);
    Ok(())
}
