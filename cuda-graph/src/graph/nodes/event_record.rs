//! Event record nodes: record an event as a step of the graph; the event is set on an exec.

use std::sync::Arc;

use crate::runtime as sys;

use super::super::{AsNode, GraphBuilder, GraphExec, LaunchMode, NodeRef};
use super::{params_of, DeviceLaunchRule, Kind, NodeParams};
use crate::error::Result;
use crate::event::Event;
use crate::memory::KeepAlive;

/// Event record nodes.
pub(crate) struct EventRecordSpec;

impl Kind for EventRecordSpec {
    const CODE: u32 = sys::cudaGraphNodeType::cudaGraphNodeTypeEventRecord.0;
    const NAME: &'static str = "event record";
    const DEVICE_LAUNCH: DeviceLaunchRule =
        DeviceLaunchRule::Refused("CUDA 13.0 refuses it with cudaErrorInvalidValue");
    const IN_CONDITIONAL_BODY: bool = false;
}

/// A node that records an event, from [`GraphBuilder::add_event_record`].
///
/// ```no_run
/// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::EventRecordNode) -> cuda_graph::Result<()> {
/// graph.add_empty(&[&node])?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventRecordNode(pub(crate) NodeRef);

impl AsNode for EventRecordNode {
    fn as_node(&self) -> NodeRef {
        self.0
    }
}

/// The event the node uses, which it keeps.
struct RecordParams(Arc<Event>);

// SAFETY: the parameters name the event, which `keep` holds.
unsafe impl NodeParams for RecordParams {
    type Kind = EventRecordSpec;
    type Node = EventRecordNode;

    fn with_raw<R>(
        self, f: impl FnOnce(&mut sys::cudaGraphNodeParams, Vec<KeepAlive>) -> Result<R>,
    ) -> Result<R> {
        let mut params = params_of::<EventRecordSpec>();
        params.__bindgen_anon_1.eventRecord = sys::cudaEventRecordNodeParams { event: self.0.as_raw() };
        f(&mut params, vec![self.0])
    }

    fn node(node: NodeRef, _: &sys::cudaGraphNodeParams) -> EventRecordNode {
        EventRecordNode(node)
    }

    fn fence(&self) -> bool {
        true
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
        self.add_params("GraphBuilder::add_event_record", RecordParams(event.clone()), deps)
    }
}

impl<M: LaunchMode> GraphExec<M> {
    /// Makes event record node `node` record `event` in later launches of this exec
    /// (`cudaGraphExecNodeSetParams`); the graph is not changed. The exec shares the event;
    /// the one it replaces is kept until the launches queued before have completed. Refused,
    /// naming both devices, for an event of another device than the exec's.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use cuda_graph::graph::Graph;
    /// let (first, second) = (Arc::new(cuda_graph::Event::new()?), Arc::new(cuda_graph::Event::new()?));
    /// let graph = Graph::new()?;
    /// let record = graph.add_event_record(&first, &[])?;
    /// let mut exec = graph.instantiate_default()?;
    /// exec.set_event_record(&record, &second)?; // later launches record `second`
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn set_event_record(&mut self, node: &EventRecordNode, event: &Arc<Event>) -> Result<()> {
        const CALL: &str = "GraphExec::set_event_record";
        let device = self.source.device();
        self.set_params(CALL, node, || {
            super::expect_same_device(CALL, device, event.device())?;
            Ok(RecordParams(event.clone()))
        })
    }
}
