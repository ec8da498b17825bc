//! Edges with data: programmatic dependencies between kernel nodes (programmatic dependent
//! launch), kernel nodes with launch attributes, and reading a node's dependencies back.
//!
//! A plain edge starts the dependent node once the node before it has completed, its memory
//! writes visible. A programmatic edge (`cudaGraphDependencyTypeProgrammatic`) lets the
//! dependent kernel start earlier, once every block of the kernel before it has called
//! `cuda_graph::pdl::launch_dependents()` or exited; the dependent then waits for the
//! kernel before it in `cuda_graph::pdl::wait_upstream()` (header `cuda_graph_pdl.cuh`, which
//! says what a kernel may touch before that wait). The node's launch overlaps the previous
//! kernel's tail: on an H100, a chain of kernel nodes costs about a third less per node.
//!
//! CUDA allows programmatic edges only from a kernel node into a kernel node: the types say
//! so ([`Dependency::programmatic`] takes a [`KernelNode`], and only
//! [`GraphBuilder::add_kernel_with`] takes [`Dependency`]s).

use std::ptr;

use crate::runtime as sys;

use super::node::raw_deps;
use super::{AsNode, GraphBuilder, KernelNode, NodeRef};
use crate::error::{check, Result};

/// What an edge waits for.
///
/// ```
/// use cuda_graph::graph::Edge;
/// assert_eq!(Edge::default(), Edge::Full);
/// assert_ne!(Edge::Programmatic, Edge::LaunchCompletion);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Edge {
    /// The dependent node starts after the node before it has completed, with its memory
    /// writes visible: a plain edge.
    #[default]
    Full,
    /// Kernel to kernel: the dependent kernel may start once every block of the kernel
    /// before it has triggered (`cuda_graph::pdl::launch_dependents()`) or exited, and waits
    /// for its completion in `cuda_graph::pdl::wait_upstream()`
    /// (`cudaGraphKernelNodePortProgrammatic`, `cudaGraphDependencyTypeProgrammatic`).
    Programmatic,
    /// Kernel to kernel: the dependent kernel may start once every block of the kernel before
    /// it has started (`cudaGraphKernelNodePortLaunchCompletion`; best effort, see CUDA's
    /// `cudaLaunchAttributeLaunchCompletionEvent`). CUDA orders only the start: the launch
    /// completion it stands for is, in CUDA's words, not visible to
    /// `cudaGridDependencySynchronize()`, so do not count on `wait_upstream()` to order the
    /// dependent after the kernel before it. For kernels that share no data they both write.
    LaunchCompletion,
    /// Edge data this crate does not know: CUDA's raw `from_port`, `to_port` and `type`.
    Other {
        /// `cudaGraphEdgeData::from_port`.
        from_port: u8,
        /// `cudaGraphEdgeData::to_port`.
        to_port: u8,
        /// `cudaGraphEdgeData::type`.
        kind: u8,
    },
}

impl Edge {
    pub(super) fn raw(self) -> sys::cudaGraphEdgeData {
        let programmatic = sys::cudaGraphDependencyType::cudaGraphDependencyTypeProgrammatic.0 as u8;
        let (from_port, to_port, type_) = match self {
            Edge::Full => (0, 0, 0),
            Edge::Programmatic => (sys::cudaGraphKernelNodePortProgrammatic as u8, 0, programmatic),
            Edge::LaunchCompletion => (sys::cudaGraphKernelNodePortLaunchCompletion as u8, 0, programmatic),
            Edge::Other { from_port, to_port, kind } => (from_port, to_port, kind),
        };
        sys::cudaGraphEdgeData { from_port, to_port, type_, ..Default::default() }
    }

    fn from_raw(raw: &sys::cudaGraphEdgeData) -> Edge {
        [Edge::Full, Edge::Programmatic, Edge::LaunchCompletion]
            .into_iter()
            .find(|edge| edge.raw() == *raw)
            .unwrap_or(Edge::Other { from_port: raw.from_port, to_port: raw.to_port, kind: raw.type_ })
    }
}

/// One dependency of a kernel node: the node before it and what the edge waits for. Plain
/// dependencies come from any node (`Dependency::full`, or `From<&node>`); programmatic ones
/// only from kernel nodes, which the types enforce.
///
/// ```no_run
/// use cuda_graph::graph::{Dependency, Edge, Graph};
/// # fn f(graph: &Graph, kernel: cuda_graph::graph::KernelNode, fill: cuda_graph::graph::MemsetNode) {
/// let deps = [Dependency::from(&fill), Dependency::programmatic(&kernel)];
/// assert_eq!(deps[1].edge(), Edge::Programmatic);
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dependency {
    node: NodeRef,
    edge: Edge,
}

impl Dependency {
    pub(super) fn new(node: NodeRef, edge: Edge) -> Dependency {
        Dependency { node, edge }
    }

    /// A plain edge from `node`: the dependent waits for its completion.
    pub fn full(node: &dyn AsNode) -> Dependency {
        Dependency { node: node.as_node(), edge: Edge::Full }
    }

    /// A programmatic edge from the kernel node `node` (see [`Edge::Programmatic`]).
    pub fn programmatic(node: &KernelNode) -> Dependency {
        Dependency { node: node.as_node(), edge: Edge::Programmatic }
    }

    /// A launch-completion edge from the kernel node `node` (see [`Edge::LaunchCompletion`]).
    pub fn launch_completion(node: &KernelNode) -> Dependency {
        Dependency { node: node.as_node(), edge: Edge::LaunchCompletion }
    }

    /// The node depended on.
    pub fn node(&self) -> NodeRef {
        self.node
    }

    /// What the edge waits for.
    pub fn edge(&self) -> Edge {
        self.edge
    }
}

impl<T: AsNode> From<&T> for Dependency {
    fn from(node: &T) -> Dependency {
        Dependency::full(node)
    }
}

impl GraphBuilder {
    /// The nodes `node` depends on, each with its edge (`cudaGraphNodeGetDependencies`): a
    /// captured launch with programmatic stream serialization shows as an
    /// [`Edge::Programmatic`] dependency, for example. `node` must belong to this graph.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{Edge, Graph};
    /// let graph = Graph::new()?;
    /// let first = graph.add_empty(&[])?;
    /// let second = graph.add_empty(&[&first])?;
    /// let deps = graph.dependencies(&second)?;
    /// assert_eq!((deps.len(), deps[0].edge()), (1, Edge::Full));
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn dependencies(&self, node: &dyn AsNode) -> Result<Vec<Dependency>> {
        const CALL: &str = "GraphBuilder::dependencies";
        let node = node.as_node();
        let node = raw_deps(CALL, self.id, &[&node])?[0];
        self.core.locked(CALL, |state| {
            let raw = state.live(CALL, &[node])?[0];
            // SAFETY: `raw` is a live node of this graph (checked by id and epoch), locked.
            let list =
                unsafe { edge_list(raw, sys::cudaGraphNodeGetDependencies, "cudaGraphNodeGetDependencies") }?;
            Ok(list.into_iter().map(|(from, edge)| Dependency::new(self.node_ref(from), edge)).collect())
        })
    }
}

/// `cudaGraphNodeGetDependencies` or `cudaGraphNodeGetDependentNodes`.
pub(super) type EdgeQuery = unsafe extern "C" fn(
    sys::cudaGraphNode_t,
    *mut sys::cudaGraphNode_t,
    *mut sys::cudaGraphEdgeData,
    *mut usize,
) -> sys::cudaError_t;

/// The nodes `query` lists for `node`, each with its edge.
///
/// # Safety
/// `node` is a live node of a graph whose family the caller holds.
pub(super) unsafe fn edge_list(
    node: sys::cudaGraphNode_t, query: EdgeQuery, name: &'static str,
) -> Result<Vec<(sys::cudaGraphNode_t, Edge)>> {
    let mut count = 0;
    // SAFETY: `node` is live and held (the caller's promise); null arrays ask for the count.
    check(unsafe { query(node, ptr::null_mut(), ptr::null_mut(), &mut count) }, name)?;
    if count == 0 {
        return Ok(Vec::new());
    }
    let mut nodes = vec![ptr::null_mut(); count];
    let mut edges = vec![sys::cudaGraphEdgeData::default(); count];
    // SAFETY: as above; both arrays have room for `count` entries and CUDA writes at most that
    // many (fewer if edges went meanwhile, which the lock rules out).
    check(unsafe { query(node, nodes.as_mut_ptr(), edges.as_mut_ptr(), &mut count) }, name)?;
    Ok(nodes.into_iter().zip(&edges).take(count).map(|(node, edge)| (node, Edge::from_raw(edge))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_round_trip_through_cudas_edge_data() {
        for edge in [Edge::Full, Edge::Programmatic, Edge::LaunchCompletion] {
            assert_eq!(Edge::from_raw(&edge.raw()), edge);
        }
        let programmatic = Edge::Programmatic.raw();
        assert_eq!((programmatic.from_port, programmatic.to_port, programmatic.type_), (1, 0, 1));
        let completion = Edge::LaunchCompletion.raw();
        assert_eq!((completion.from_port, completion.type_), (2, 1));
        assert_eq!(Edge::Full.raw(), sys::cudaGraphEdgeData::default());
        let odd = sys::cudaGraphEdgeData { from_port: 1, to_port: 0, type_: 0, ..Default::default() };
        assert_eq!(Edge::from_raw(&odd), Edge::Other { from_port: 1, to_port: 0, kind: 0 });
    }

    #[test]
    fn dependencies_name_their_node_and_edge() {
        let node = NodeRef::new(ptr::null_mut(), 3, 3, 0);
        let kernel = KernelNode(node);
        assert_eq!(Dependency::programmatic(&kernel).edge(), Edge::Programmatic);
        assert_eq!(Dependency::launch_completion(&kernel).edge(), Edge::LaunchCompletion);
        assert_eq!(Dependency::from(&kernel), Dependency::full(&node));
        assert_eq!(Dependency::full(&node).node(), node);
    }
}
