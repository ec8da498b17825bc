//! A chain of kernel nodes in a graph, each joined to the one before by a plain or a
//! programmatic edge: how the examples that build a step of several kernels (the decoders of
//! `generation_loop` and `llama_decode`) add it to a graph.

use cuda_graph::graph::{AsNode, Dependency, GraphBuilder, KernelNode};
use cuda_graph::kernel::{Kernel, KernelArgs, KernelAttributes, LaunchConfig};
use cuda_graph::Result;

/// The edge between consecutive kernels of a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chain {
    /// Plain edges: each kernel starts once the one before has completed.
    Plain,
    /// Programmatic edges (programmatic dependent launch, sm_90 and later): each kernel is
    /// launched while the one before finishes, and waits for it in
    /// `cuda_graph::pdl::wait_upstream()` before it reads what that one wrote.
    Programmatic,
}

/// Adds kernels to a graph one after another, each joined to the one before by `chain`'s
/// edge; the first after `first_deps`, by plain edges.
///
/// ```no_run
/// use chapter_common::{Chain, KernelChain};
/// use cuda_graph::graph::Graph;
/// use cuda_graph::kernel::LaunchConfig;
/// cuda_graph::kernels! { unsafe fn noop(); }
/// let graph = Graph::new()?;
/// let mut chain = KernelChain::new(&graph, &[], Chain::Programmatic);
/// chain.add(noop(), LaunchConfig::new(1, 32), ())?;
/// chain.add(noop(), LaunchConfig::new(1, 32), ())?; // programmatic edge from the first
/// assert!(chain.last().is_some());
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct KernelChain<'g, 'd> {
    graph: &'g GraphBuilder,
    first_deps: &'d [&'d dyn AsNode],
    chain: Chain,
    last: Option<KernelNode>,
}

impl<'g, 'd> KernelChain<'g, 'd> {
    /// An empty chain in `graph`, starting after `first_deps`.
    pub fn new(graph: &'g GraphBuilder, first_deps: &'d [&'d dyn AsNode], chain: Chain) -> Self {
        KernelChain { graph, first_deps, chain, last: None }
    }

    /// Adds `kernel` after the chain's last node.
    pub fn add<A: KernelArgs>(&mut self, kernel: &Kernel<A>, config: LaunchConfig, args: A) -> Result<()> {
        let deps: Vec<Dependency> = match (&self.last, self.chain) {
            (Some(last), Chain::Plain) => vec![Dependency::full(last)],
            (Some(last), Chain::Programmatic) => vec![Dependency::programmatic(last)],
            (None, _) => self.first_deps.iter().map(|&node| Dependency::full(node)).collect(),
        };
        let attributes = KernelAttributes::default();
        self.last = Some(self.graph.add_kernel_with(kernel, config, args, &attributes, &deps)?);
        Ok(())
    }

    /// The last node added, if any.
    pub fn last(&self) -> Option<&KernelNode> {
        self.last.as_ref()
    }

    /// The last node added, if any, ending the chain.
    pub fn into_last(self) -> Option<KernelNode> {
        self.last
    }
}
