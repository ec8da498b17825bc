//! Programmatic dependent launch: the same tiny kernels, each allowed to start while
//! the one before it still runs and waiting for it on the device (`kl_tick_pdl`), as stream
//! launches with programmatic serialization and as a graph whose nodes are joined by
//! programmatic edges. CUDA runs this on sm_90 and later; elsewhere these variants are left out.

use cuda_graph::graph::{Dependency, Graph, KernelNode};
use cuda_graph::kernel::{KernelAttributes, LaunchConfig};
use cuda_graph::{DeviceBuffer, DeviceProperties, DevicePtr};

// SAFETY: kl_tick_pdl writes acc[0] only (one thread); the declaration is private to this
// crate, whose launches pass a buffer of at least one element.
cuda_graph::kernels! {
    /// `acc[0] = (acc[0] ^ value) * 16777619` by one thread, after letting the next kernel
    /// launch and waiting for the one before (`cuda_graph_pdl.cuh`).
    pub(crate) unsafe fn kl_tick_pdl(acc: DevicePtr<u32>, value: u32);
}

/// Whether the device runs programmatic dependent launch.
pub(crate) fn supported(properties: &DeviceProperties) -> bool {
    properties.major >= 9
}

/// A graph of `values.len()` `kl_tick_pdl` nodes in a chain joined by programmatic edges, node
/// j folding in `values[j]`.
pub(crate) fn build_chain(
    acc: &DeviceBuffer<u32>, values: &[u32], config: LaunchConfig,
) -> cuda_graph::Result<Graph> {
    let graph = Graph::new()?;
    let none = KernelAttributes::default();
    let mut previous: Option<KernelNode> = None;
    for &value in values {
        let deps: Vec<Dependency> = previous.iter().map(Dependency::programmatic).collect();
        previous = Some(graph.add_kernel_with(kl_tick_pdl(), config, (acc.ptr(), value), &none, &deps)?);
    }
    Ok(graph)
}

#[cfg(test)]
mod kernel_declarations {
    #[test]
    fn match_the_cpp_parameter_types() {
        assert_eq!(super::kl_tick_pdl().check_types(), Ok(()), "kl_tick_pdl");
    }
}
