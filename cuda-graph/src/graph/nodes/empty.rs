//! Empty nodes: join points for dependencies.

use crate::runtime as sys;

use super::super::{AsNode, GraphBuilder, NodeRef};
use super::{params_of, DeviceLaunchRule, Kind, NodeParams};
use crate::error::Result;
use crate::memory::KeepAlive;

/// Empty nodes.
pub(crate) struct EmptySpec;

impl Kind for EmptySpec {
    const CODE: u32 = sys::cudaGraphNodeType::cudaGraphNodeTypeEmpty.0;
    const NAME: &'static str = "empty";
    const DEVICE_LAUNCH: DeviceLaunchRule =
        DeviceLaunchRule::Refused("CUDA 13.0 refuses it with cudaErrorInvalidValue");
    const IN_CONDITIONAL_BODY: bool = true;
}

super::super::node::typed_nodes! {
    /// A node that does nothing, from [`GraphBuilder::add_empty`](crate::graph::GraphBuilder::add_empty):
    /// a join point for dependencies.
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let join = graph.add_empty(&[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    EmptyNode;
}

/// An empty node's parameters: none.
struct EmptyParams;

// SAFETY: an empty node's parameters point at nothing.
unsafe impl NodeParams for EmptyParams {
    type Kind = EmptySpec;
    type Node = EmptyNode;

    fn with_raw<R>(
        self, f: impl FnOnce(&mut sys::cudaGraphNodeParams, Vec<KeepAlive>) -> Result<R>,
    ) -> Result<R> {
        f(&mut params_of::<EmptySpec>(), Vec::new())
    }

    fn node(node: NodeRef, _: &sys::cudaGraphNodeParams) -> EmptyNode {
        EmptyNode(node)
    }
}

impl GraphBuilder {
    /// Adds a node that does nothing: a join point for its dependencies.
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let (a, b) = (graph.add_empty(&[])?, graph.add_empty(&[])?);
    /// let join = graph.add_empty(&[&a, &b])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_empty(&self, deps: &[&dyn AsNode]) -> Result<EmptyNode> {
        self.add_params("GraphBuilder::add_empty", EmptyParams, deps)
    }
}
