// Programmatic stream serialization is a stream-launch attribute (CUDA refuses it on kernel
// nodes): kernel nodes take `KernelAttributes`, which has no such field, and a
// `LaunchAttributes` is not accepted in its place.
use cuda_graph::graph::Graph;
use cuda_graph::kernel::{KernelAttributes, LaunchAttributes, LaunchConfig};
use cuda_graph::DeviceBuffer;

fn main() -> Result<(), cuda_graph::CudaError> {
    let log = DeviceBuffer::<u32>::zeroed(16)?;
    let graph = Graph::new()?;
    let config = LaunchConfig::new(1, 1);
    let serialized = KernelAttributes { programmatic_serialization: true, ..Default::default() };
    graph.add_kernel_with(test_kernels::pdl_append(), config, (log.slice(), 1), &serialized, &[])?;
    let launch = LaunchAttributes::programmatic();
    graph.add_kernel_with(test_kernels::pdl_append(), config, (log.slice(), 2), &launch, &[])?;
    Ok(())
}
