// CUDA allows programmatic edges only between kernel nodes: a programmatic dependency on a
// memset node must not compile.
use cuda_graph::graph::{Dependency, Graph};
use cuda_graph::kernel::{KernelAttributes, LaunchConfig};
use cuda_graph::DeviceBuffer;

fn main() -> Result<(), cuda_graph::CudaError> {
    let log = DeviceBuffer::<u32>::zeroed(16)?;
    let graph = Graph::new()?;
    let clear = graph.add_memset(&log.ptr(), 0u32, 16, &[])?;
    let deps = [Dependency::programmatic(&clear)];
    let none = KernelAttributes::default();
    graph.add_kernel_with(test_kernels::pdl_append(), LaunchConfig::new(1, 1), (log.slice(), 1), &none, &deps)?;
    Ok(())
}
