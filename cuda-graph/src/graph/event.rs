//! Event nodes: record an event, or wait for one, as a step of the graph.

use std::sync::Arc;

use crate::runtime as sys;

use super::params::node_params_of;
use super::{AsNode, GraphBuilder, NodeRef};
use crate::error::Result;
use crate::event::Event;
use crate::memory::KeepAlive;

/// A node that records an event, from [`GraphBuilder::add_event_record`].
///
/// ```no_run
/// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::EventRecordNode) -> cuda_graph::Result<()> {
/// graph.add_empty(&[&node])?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventRecordNode(pub(crate) NodeRef);

/// A node that waits for an event, from [`GraphBuilder::add_event_wait`].
///
/// ```no_run
/// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::EventWaitNode) -> cuda_graph::Result<()> {
/// graph.add_empty(&[&node])?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventWaitNode(pub(crate) NodeRef);

impl AsNode for EventRecordNode {
    fn as_node(&self) -> NodeRef {
        self.0
    }
}

impl AsNode for EventWaitNode {
    fn as_node(&self) -> NodeRef {
        self.0
    }
}

impl GraphBuilder {
    /// Adds a node that records `event` when its dependencies have finished
    /// (`cudaGraphNodeTypeEventRecord`): other streams, or the host, can then wait for that
    /// point of the graph. The graph shares the event (hence the `Arc`).
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// let done = Arc::new(cuda_graph::Event::new()?);
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let work = graph.add_empty(&[])?;
    /// graph.add_event_record(&done, &[&work])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    ///
    /// Refused, naming both devices, for an event of another device than the graph's (any
    /// device's event may be waited for: [`add_event_wait`](Self::add_event_wait)).
    pub fn add_event_record(&self, event: &Arc<Event>, deps: &[&dyn AsNode]) -> Result<EventRecordNode> {
        self.expect_device(event.device(), "GraphBuilder::add_event_record", "the event")?;
        let mut params = node_params_of(sys::cudaGraphNodeType::cudaGraphNodeTypeEventRecord);
        params.__bindgen_anon_1.eventRecord = sys::cudaEventRecordNodeParams { event: event.as_raw() };
        let keep: Vec<KeepAlive> = vec![event.clone()];
        self.add_node("GraphBuilder::add_event_record", &mut params, keep, deps).map(EventRecordNode)
    }

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
        let mut params = node_params_of(sys::cudaGraphNodeType::cudaGraphNodeTypeWaitEvent);
        params.__bindgen_anon_1.eventWait = sys::cudaEventWaitNodeParams { event: event.as_raw() };
        let keep: Vec<KeepAlive> = vec![event.clone()];
        self.add_node("GraphBuilder::add_event_wait", &mut params, keep, deps).map(EventWaitNode)
    }
}
