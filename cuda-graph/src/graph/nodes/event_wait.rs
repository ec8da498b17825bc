//! Event wait nodes: wait for an event as a step of the graph; the event is set on an exec.

use std::sync::Arc;

use crate::runtime as sys;

use super::super::{AsNode, GraphBuilder, GraphExec, LaunchMode, NodeRef};
use super::{params_of, DeviceLaunchRule, Kind, NodeParams};
use crate::error::Result;
use crate::event::Event;
use crate::memory::KeepAlive;

/// Event wait nodes.
pub(crate) struct EventWaitSpec;

impl Kind for EventWaitSpec {
    const CODE: u32 = sys::cudaGraphNodeType::cudaGraphNodeTypeWaitEvent.0;
    const NAME: &'static str = "event wait";
    const DEVICE_LAUNCH: DeviceLaunchRule = DeviceLaunchRule::Refused(
        "CUDA does not allow event and memory nodes in device-launch graphs (cudaErrorInvalidValue)",
    );
    const IN_CONDITIONAL_BODY: bool = false;
}

/// A node that waits for an event, from [`GraphBuilder::add_event_wait`].
///
/// ```no_run
/// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::EventWaitNode) -> cuda_graph::Result<()> {
/// graph.add_empty(&[&node])?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventWaitNode(pub(crate) NodeRef);

impl AsNode for EventWaitNode {
    fn as_node(&self) -> NodeRef {
        self.0
    }
}

/// The event the node uses, which it keeps.
struct WaitParams(Arc<Event>);

// SAFETY: the parameters name the event, which `keep` holds.
unsafe impl NodeParams for WaitParams {
    type Kind = EventWaitSpec;
    type Node = EventWaitNode;

    fn with_raw<R>(
        self, f: impl FnOnce(&mut sys::cudaGraphNodeParams, Vec<KeepAlive>) -> Result<R>,
    ) -> Result<R> {
        let mut params = params_of::<EventWaitSpec>();
        params.__bindgen_anon_1.eventWait = sys::cudaEventWaitNodeParams { event: self.0.as_raw() };
        f(&mut params, vec![self.0])
    }

    fn node(node: NodeRef, _: &sys::cudaGraphNodeParams) -> EventWaitNode {
        EventWaitNode(node)
    }

    fn fence(&self) -> bool {
        true
    }
}

impl GraphBuilder {
    /// Adds a node that waits until `event` has completed (its most recent record when the
    /// node runs) before its dependents run (`cudaGraphNodeTypeWaitEvent`). The graph shares
    /// the event.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// let ready = Arc::new(cuda_graph::Event::new()?);
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let wait = graph.add_event_wait(&ready, &[])?;
    /// graph.add_empty(&[&wait])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_event_wait(&self, event: &Arc<Event>, deps: &[&dyn AsNode]) -> Result<EventWaitNode> {
        self.add_params("GraphBuilder::add_event_wait", WaitParams(event.clone()), deps)
    }
}

impl<M: LaunchMode> GraphExec<M> {
    /// Makes event wait node `node` wait for `event` in later launches of this exec
    /// (`cudaGraphExecNodeSetParams`). Any device's event may be waited for. The exec shares
    /// the event; the one it replaces is kept until the launches queued before completed.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use cuda_graph::graph::Graph;
    /// let (first, second) = (Arc::new(cuda_graph::Event::new()?), Arc::new(cuda_graph::Event::new()?));
    /// let graph = Graph::new()?;
    /// let wait = graph.add_event_wait(&first, &[])?;
    /// let mut exec = graph.instantiate_default()?;
    /// exec.set_event_wait(&wait, &second)?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn set_event_wait(&mut self, node: &EventWaitNode, event: &Arc<Event>) -> Result<()> {
        const CALL: &str = "GraphExec::set_event_wait";
        self.set_params(CALL, node, || Ok(WaitParams(event.clone())))
    }
}
