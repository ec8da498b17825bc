//! Host nodes: a Rust function the graph calls on the host, set on an exec.

use std::sync::Arc;

use crate::runtime as sys;

use super::super::{AsNode, GraphBuilder, GraphExec, LaunchMode, NodeRef};
use super::{params_of, DeviceLaunchRule, Kind, NodeParams};
use crate::error::Result;
use crate::host_fn::HostCallback;
use crate::memory::KeepAlive;

/// Host nodes.
pub(crate) struct HostSpec;

impl Kind for HostSpec {
    const CODE: u32 = sys::cudaGraphNodeType::cudaGraphNodeTypeHost.0;
    const NAME: &'static str = "host";
    const DEVICE_LAUNCH: DeviceLaunchRule =
        DeviceLaunchRule::Refused("CUDA 13.0 refuses it with cudaErrorInvalidValue");
    const IN_CONDITIONAL_BODY: bool = false;
}

/// A host function node, from [`GraphBuilder::add_host`].
///
/// ```no_run
/// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::HostNode) -> cuda_graph::Result<()> {
/// graph.add_empty(&[&node])?; // runs after the host function returned
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HostNode(pub(crate) NodeRef);

impl AsNode for HostNode {
    fn as_node(&self) -> NodeRef {
        self.0
    }
}

/// A host node's parameters: the function, which the node keeps.
struct HostParams(HostCallback);

// SAFETY: the parameters point at the callback's trampoline and data, which `keep` holds (the
// callback itself).
unsafe impl NodeParams for HostParams {
    type Kind = HostSpec;
    type Node = HostNode;
    const HOST_WORK: bool = true;

    fn with_raw<R>(
        self, f: impl FnOnce(&mut sys::cudaGraphNodeParams, Vec<KeepAlive>) -> Result<R>,
    ) -> Result<R> {
        let (fn_, user_data) = self.0.raw_parts();
        let mut params = params_of::<HostSpec>();
        params.__bindgen_anon_1.host = sys::cudaHostNodeParamsV2 { fn_, userData: user_data };
        let keep: Vec<KeepAlive> = vec![Arc::new(self.0)];
        f(&mut params, keep)
    }

    fn node(node: NodeRef, _: &sys::cudaGraphNodeParams) -> HostNode {
        HostNode(node)
    }

    fn fence(&self) -> bool {
        true
    }
}

impl GraphBuilder {
    /// Adds a node that calls `f` on a CUDA thread each time the graph runs, once its
    /// dependencies finished; nodes after it wait for it to return (`cudaGraphNodeTypeHost`).
    ///
    /// `f` must not call CUDA (CUDA forbids it). A panic in `f` is caught and reported by
    /// [`take_unreported_errors`](crate::take_unreported_errors); the graph goes on. `f` lives as
    /// long as the graph and its execs, and an exec of a graph with host functions waits, when
    /// dropped, for its last launch. CUDA refuses host nodes in conditional bodies and in
    /// device-launch graphs.
    ///
    /// ```no_run
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::sync::Arc;
    /// let runs = Arc::new(AtomicU32::new(0));
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let counter = runs.clone();
    /// graph.add_host(move || { counter.fetch_add(1, Ordering::SeqCst); }, &[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_host<F>(&self, f: F, deps: &[&dyn AsNode]) -> Result<HostNode>
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.add_params("GraphBuilder::add_host", HostParams(HostCallback::new(f)), deps)
    }
}

impl<M: LaunchMode> GraphExec<M> {
    /// Makes host node `node` call `f` in later launches of this exec
    /// (`cudaGraphExecNodeSetParams`; CUDA allows any change). `f` follows
    /// [`GraphBuilder::add_host`](crate::graph::GraphBuilder::add_host)'s rules: it must not call
    /// CUDA, and a panic is caught. The function it replaces lives until the launches queued
    /// before, which may still call it, have completed.
    ///
    /// ```no_run
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::sync::Arc;
    /// use cuda_graph::graph::Graph;
    /// let graph = Graph::new()?;
    /// let host = graph.add_host(|| {}, &[])?;
    /// let mut exec = graph.instantiate_default()?;
    /// let runs = Arc::new(AtomicU32::new(0));
    /// let counter = runs.clone();
    /// exec.set_host(&host, move || { counter.fetch_add(1, Ordering::SeqCst); })?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn set_host<F>(&mut self, node: &HostNode, f: F) -> Result<()>
    where
        F: Fn() + Send + Sync + 'static,
    {
        const CALL: &str = "GraphExec::set_host";
        self.set_params(CALL, node, || Ok(HostParams(HostCallback::new(f))))
    }
}
