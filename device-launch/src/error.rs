//! The crate's host-side error type.
//!
//! One enum, [`Error`], for everything this crate's host calls can fail with: a CUDA call
//! ([`Error::Cuda`]), a graph that cannot be launched from the device, named node by node
//! ([`Error::UnsupportedNode`], [`Error::UnsupportedMemcpy`]), a launcher kernel started
//! outside a graph ([`Error::LauncherNotInGraph`]), the one rule checked at run time
//! ([`Error::HandlesOutstanding`]), and a device-side launch failure read back from an
//! [`ErrorSlot`](crate::ErrorSlot) ([`Error::Device`]). A dedicated enum lets callers and
//! tests match on the node's index and kind. Arguments refused before CUDA sees them (a queue's
//! capacity, a table of two devices, a pending launch count of 0) are
//! [`Error::Cuda`] holding `CudaError::InvalidArgument`, whose
//! [`Refusal`](cuda_graph::Refusal) says why.

use cuda_graph::graph::{Edge, NodeKind};
use cuda_graph::CudaError;

use crate::error_slot::DeviceLaunchError;
use crate::node_rules::{describe, refusal};

/// The result of this crate's host calls.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a host call of this crate failed.
///
/// ```
/// use cuda_graph::graph::NodeKind;
/// use device_launch::Error;
/// let err = Error::UnsupportedNode { index: 3, kind: NodeKind::Host };
/// assert_eq!(
///     err.to_string(),
///     "device-launch graphs may contain only kernel, memcpy and memset nodes; node 3 is a host node \
///      (CUDA 13.0 refuses it with cudaErrorInvalidValue)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A CUDA call failed (or `cuda-graph` refused an argument).
    #[error(transparent)]
    Cuda(#[from] CudaError),
    /// The graph has a node of a kind that device-launch graphs may not contain.
    #[error(
        "device-launch graphs may contain only kernel, memcpy and memset nodes; node {index} is {} \
         ({})",
        describe(*kind),
        refusal(*kind)
    )]
    UnsupportedNode {
        /// The node's position in [`GraphBuilder::nodes`](cuda_graph::graph::GraphBuilder::nodes).
        index: usize,
        /// Its kind.
        kind: NodeKind,
    },
    /// A child-graph node holds, at some depth, a node a device-launched graph may not hold
    /// (only when [`CHILD_GRAPH_NODES_ALLOWED`](crate::CHILD_GRAPH_NODES_ALLOWED)).
    #[error(
        "device-launch graphs may contain only kernel, memcpy and memset nodes, also inside child graphs; \
         node {index} (child graph) holds at {path:?} {problem}"
    )]
    UnsupportedInChildGraph {
        /// The child-graph node's position in [`GraphBuilder::nodes`](cuda_graph::graph::GraphBuilder::nodes).
        index: usize,
        /// The offending node's indices in the node lists of the child graphs, outermost first.
        path: Vec<usize>,
        /// What it is, or what it copies that is not allowed.
        problem: String,
    },
    /// A memcpy node copies from or to memory a device-launched graph cannot use.
    #[error(
        "device-launch graphs may copy only between device (or managed) memory; node {index} (memcpy) \
         {problem}"
    )]
    UnsupportedMemcpy {
        /// The node's position in [`GraphBuilder::nodes`](cuda_graph::graph::GraphBuilder::nodes).
        index: usize,
        /// What it copies that is not allowed.
        problem: String,
    },
    /// A kernel node depends on another through a programmatic (or launch-completion) edge,
    /// which a device-launched graph may not hold (only when
    /// [`PROGRAMMATIC_EDGES_ALLOWED`](crate::PROGRAMMATIC_EDGES_ALLOWED) is false).
    #[error(
        "device-launch graphs may not hold programmatic edges on this driver (PROGRAMMATIC_EDGES_ALLOWED); \
         node {index} (kernel) depends on node {from} through a {edge:?} edge: use a plain edge"
    )]
    UnsupportedEdge {
        /// The dependent node's position in [`GraphBuilder::nodes`](cuda_graph::graph::GraphBuilder::nodes).
        index: usize,
        /// The position of the node it depends on.
        from: usize,
        /// The edge.
        edge: Edge,
    },
    /// A kernel that launches graphs from the device was launched on a plain stream: CUDA
    /// 13.0 refuses that launch with `cudaErrorNotSupported` (801) and the kernel never runs.
    #[error(
        "kernel `{kernel}` launches graphs from the device, so it must itself run inside a graph: CUDA \
         refused its plain stream launch with cudaErrorNotSupported (801) and it did not run; launch it \
         with device_launch::launch_from_graph (or as a node of a graph) instead ({source})"
    )]
    LauncherNotInGraph {
        /// The kernel's name.
        kernel: &'static str,
        /// CUDA's error.
        source: CudaError,
    },
    /// [`DeviceExec::<Uploaded>::update`](crate::DeviceExec::update) (or `edit`) was called
    /// while graph nodes, launches or tables still hold a
    /// [`DeviceExecArg`](crate::DeviceExecArg) of the exec: they could launch it from the
    /// device after the update, before it is uploaded again.
    #[error(
        "cannot update a device graph while {holders} kernel argument(s) of it are alive (DeviceExecArg \
         in graph nodes, launches or DeviceExecTables): kernels could launch it from the device after \
         the update and before the next upload; drop the graphs and execs that hold them first"
    )]
    HandlesOutstanding {
        /// How many owners besides the exec itself hold it.
        holders: usize,
    },
    /// A device-side launch failed (read back from an [`ErrorSlot`](crate::ErrorSlot)).
    #[error(transparent)]
    Device(#[from] DeviceLaunchError),
}

impl Error {
    /// The CUDA status code, where the error carries one.
    ///
    /// ```
    /// let err = device_launch::Error::from(cuda_graph::CudaError::from_code(1, "cudaGraphLaunch"));
    /// assert_eq!(err.code(), Some(1));
    /// ```
    pub fn code(&self) -> Option<i32> {
        match self {
            Error::Cuda(err) | Error::LauncherNotInGraph { source: err, .. } => err.code(),
            Error::Device(err) => Some(err.code),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_nodes_are_named_with_their_kind_and_article() {
        let text = |kind| Error::UnsupportedNode { index: 2, kind }.to_string();
        assert!(
            text(NodeKind::Empty).contains("node 2 is an empty node (CUDA 13.0 refuses"),
            "{}",
            text(NodeKind::Empty)
        );
        assert!(text(NodeKind::EventRecord).contains("node 2 is an event record node"));
        assert!(text(NodeKind::ChildGraph).contains("add the child's nodes"));
        assert!(text(NodeKind::BatchMemOp).contains("a batch memory operation node"));
        assert!(text(NodeKind::Unknown(14)).contains("an unknown (14) node"));
        assert!(text(NodeKind::Unknown(77)).contains("does not know"));
    }

    #[test]
    fn a_refused_node_inside_a_child_graph_is_named_by_its_path() {
        let problem = format!("{} ({})", describe(NodeKind::Host), refusal(NodeKind::Host));
        let text = Error::UnsupportedInChildGraph { index: 3, path: vec![1, 0], problem }.to_string();
        assert!(
            text.contains("node 3 (child graph) holds at [1, 0] a host node (CUDA 13.0 refuses"),
            "{text}"
        );
    }

    #[test]
    fn the_outstanding_handles_error_names_the_rule() {
        let text = Error::HandlesOutstanding { holders: 2 }.to_string();
        assert!(text.contains("2 kernel argument(s)") && text.contains("before the next upload"), "{text}");
        assert_eq!(Error::HandlesOutstanding { holders: 2 }.code(), None);
    }
}
