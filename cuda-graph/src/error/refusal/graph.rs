//! The per-area reasons of the graph refusals ([`Refusal::Node`](super::Refusal::Node),
//! [`Refusal::Edit`](super::Refusal::Edit), [`Refusal::Conditional`](super::Refusal::Conditional),
//! [`Refusal::Exec`](super::Refusal::Exec)): which graph a node belongs to, what an edit may
//! change, the rules of conditional nodes, and what instantiation, launch and update of an exec
//! need. Node kinds are held by name (as `NodeKind` prints them), so this layer imports nothing
//! of the graph module.

use crate::CudaError;

/// A node handle the call cannot use: of another graph, removed, of another kind
/// ([`Refusal::Node`](super::Refusal::Node)).
///
/// ```
/// use cuda_graph::refusal::NodeRefusal;
/// use cuda_graph::{CudaError, Refusal};
/// let err = CudaError::InvalidArgument {
///     call: "GraphBuilder::add_empty",
///     reason: NodeRefusal::DependencyOfAnotherGraph { index: 0, node_graph: 3, graph: 4 }.into(),
/// };
/// assert!(matches!(
///     err.refusal(),
///     Some(Refusal::Node(NodeRefusal::DependencyOfAnotherGraph { index: 0, .. }))
/// ));
/// assert!(err.to_string().starts_with("GraphBuilder::add_empty: dependency 0 is a node of another graph"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NodeRefusal {
    /// The node was removed from its graph.
    #[error("the node was removed from its graph; a handle of a removed node names nothing")]
    Removed,
    /// A dependency given is a node of another graph (or body) than the one added to.
    #[error(
        "dependency {index} is a node of another graph (#{node_graph}, not #{graph}); a node can depend \
         only on nodes of the graph or body it is added to"
    )]
    DependencyOfAnotherGraph {
        /// The dependency's position in the list given.
        index: usize,
        /// The graph the node belongs to.
        node_graph: u64,
        /// The graph (or body) the node is added to.
        graph: u64,
    },
    /// The node belongs to another graph than the one asked.
    #[error("the node belongs to another graph (#{node_graph}, not #{graph})")]
    OfAnotherGraph {
        /// The graph the node belongs to.
        node_graph: u64,
        /// The graph asked.
        graph: u64,
    },
    /// The node is of another kind than the call reads.
    #[error("the node is a {found} node, not a {wanted} node")]
    WrongKind {
        /// The node's kind, as `NodeKind` prints it.
        found: String,
        /// The kind the call reads.
        wanted: String,
    },
    /// A child-graph view made before a node of its family was removed.
    #[error("a node was removed from the graph since this child-graph view was made: read it again")]
    StaleView,
    /// The node belongs to another graph family than the exec's source.
    #[error(
        "the node belongs to graph #{node_graph}, not to graph #{exec_graph} this exec was instantiated from"
    )]
    NotOfExecGraph {
        /// The node's root graph.
        node_graph: u64,
        /// The graph the exec was instantiated from.
        exec_graph: u64,
    },
    /// The node was added to its graph after the exec was instantiated.
    #[error("the node was added to its graph after this exec was instantiated")]
    AddedAfterInstantiation,
    /// The node passed as the original's is of another graph.
    #[error("the node is not a node of the original graph given")]
    NotOfOriginal,
    /// The node was added to the original after the clone was made.
    #[error("the node was added to the original after it was cloned")]
    AddedAfterClone,
    /// The node's copy in the clone was removed.
    #[error("the node's copy was removed from the clone")]
    CopyRemovedFromClone,
    /// The memory a free node would free was allocated by a node of another graph.
    #[error("the allocation was made by a node of another graph")]
    AllocationOfAnotherGraph,
    /// The conditional node's parameters were not recorded (it was not added by this crate).
    #[error("the conditional node was not added by this crate, so its parameters are unknown")]
    UnknownConditional,
}

/// A change to a graph (or an operation on one) that is refused
/// ([`Refusal::Edit`](super::Refusal::Edit)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditRefusal {
    /// A node removed from a graph an exec was instantiated from.
    #[error(
        "an exec was instantiated from this graph and CUDA names its nodes by the graph's: remove nodes \
         from a clone (Graph::clone_graph) instead"
    )]
    Instantiated,
    /// A node of a kind that cannot be removed.
    #[error("{0}")]
    NotRemovable(Unremovable),
    /// An edge (or a node with its edges) removed from a graph holding memory nodes.
    #[error(
        "the graph holds memory alloc or free nodes, whose ordering edges may not be removed (nor {what} \
         with its edges): edit a graph without them"
    )]
    BesideMemoryNodes {
        /// What was to be removed (`a node`, `an edge`).
        what: &'static str,
    },
    /// A programmatic edge into a node that is not a kernel node.
    #[error("programmatic edges lead only into kernel nodes")]
    ProgrammaticEdgeTarget,
    /// A batch memory operation node added with edges other than plain ones.
    #[error("batch memory operation nodes take plain dependencies only")]
    BatchMemOpEdges,
    /// A graph added to itself (or its family) as a child.
    #[error("a graph cannot contain itself (or its own family) as a child")]
    ChildIsItself,
    /// A call on a graph while this thread still captures a stream into it.
    #[error("a stream capture into this graph is still in progress on this thread; end it first")]
    CaptureInProgress,
    /// A graph that is not a clone of the original given.
    #[error("this graph was not cloned from the original given")]
    NotClonedFrom,
    /// A graph asked for its own copy of a node.
    #[error("a graph is not a clone of itself")]
    CloneOfItself,
    /// The temporary file a DOT description is written to has a path with a NUL byte.
    #[error("temporary path {path} contains a NUL byte")]
    DotPathNul {
        /// The path.
        path: String,
    },
    /// The DOT description CUDA wrote could not be read back.
    #[error("reading back {path}: {error}")]
    DotReadBack {
        /// The file's path.
        path: String,
        /// The kind of the I/O error.
        kind: std::io::ErrorKind,
        /// The operating system's error, as it prints.
        error: String,
    },
}

/// Why a node of some kind cannot be removed ([`EditRefusal::NotRemovable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum Unremovable {
    /// A conditional node, whose bodies have builders.
    #[error("a conditional node cannot be removed: its bodies would be destroyed under their builders")]
    Conditional,
    /// A memory alloc or free node: the nodes using its memory rely on the order it sets.
    #[error("a memory alloc or free node cannot be removed: nodes may use the memory it orders")]
    MemoryNode,
}

/// A rule of conditional nodes and their handles that the call breaks
/// ([`Refusal::Conditional`](super::Refusal::Conditional)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConditionalRefusal {
    /// A handle of a graph that is neither this one nor one enclosing it.
    #[error(
        "the conditional handle belongs to graph #{handle_graph}, which is neither this graph (#{graph}) \
         nor one enclosing it; create the handle with `conditional_handle` on this graph or its parent"
    )]
    HandleOfAnotherGraph {
        /// The graph whose handle it is.
        handle_graph: u64,
        /// The graph the node is added to.
        graph: u64,
    },
    /// A handle of the family that no conditional node tests.
    #[error(
        "conditional handle {handle} of the graph's family (in the order made) is tested by no conditional \
         node: a kernel setting it would set a condition the exec does not have (CUDA refuses to \
         instantiate such a graph, and does not check an update)"
    )]
    UntestedHandle {
        /// The handle's number in the order made, from 1.
        handle: usize,
    },
    /// A graph with conditional handles added as a child graph.
    #[error(
        "the child graph made {handles} conditional handle(s): a graph with conditional handles or nodes \
         cannot be a child graph (CUDA does not support it); add its nodes to a conditional body instead"
    )]
    ChildWithHandles {
        /// The handles the child made.
        handles: usize,
    },
    /// A SWITCH of no bodies.
    #[error("a SWITCH needs at least 1 body, got 0")]
    SwitchWithoutBodies,
    /// A SWITCH of more bodies than CUDA counts.
    #[error("{bodies} bodies is more than a SWITCH can have")]
    TooManyBodies {
        /// The bodies asked for.
        bodies: usize,
    },
    /// CUDA returned another number of bodies than asked.
    #[error("CUDA returned {returned} bodies, not {expected}")]
    BodyCount {
        /// The bodies CUDA returned.
        returned: usize,
        /// The bodies asked for.
        expected: usize,
    },
    /// CUDA created the node and returned no bodies.
    #[error("CUDA created the node but returned no body graphs")]
    NoBodies,
}

/// What an exec's instantiation, launch, update or adoption needs and lacks
/// ([`Refusal::Exec`](super::Refusal::Exec)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExecRefusal {
    /// A graph using pinned host memory instantiated for device launch.
    #[error(
        "the graph copies to or from a PinnedBuffer, which launches from the device could race host slices \
         of: instantiate it for HostLaunch"
    )]
    PinnedForDeviceLaunch,
    /// CUDA refused the instantiation, for a reason its result names.
    #[error(
        "{status}; {reason}{}",
        if !*node_named {
            String::new()
        } else if let Some(kind) = node_kind {
            format!(" (at a {kind} node)")
        } else {
            " (at a node CUDA named)".to_string()
        }
    )]
    Instantiate {
        /// The status CUDA returned.
        status: Box<CudaError>,
        /// What CUDA's instantiation result says.
        reason: InstantiateFailure,
        /// Whether CUDA named the node at fault.
        node_named: bool,
        /// That node's kind, as `NodeKind` prints it, when it could be read.
        node_kind: Option<String>,
    },
    /// A host launch of an exec into a stream being captured.
    #[error(
        "the stream is being captured: add the graph as a child graph node (GraphBuilder::add_child_graph) \
         instead of launching an exec into the capture"
    )]
    LaunchIntoCapture,
    /// A device-launch exec changed while its last launch could not be waited for.
    #[error(
        "the exec's last launch, which may still launch it again from the device, could not be waited for \
         (an earlier CUDA error, see take_unreported_errors or the stream's status); the exec was not \
         changed"
    )]
    LastLaunchUnwaited,
    /// A raw exec instantiated for device launch given where only host-launch ones are adopted.
    #[error("the exec was instantiated for device launch: only host-launch execs can be adopted")]
    DeviceLaunchNotAdoptable,
    /// A child graph node set in a device-launch exec.
    #[error("a device-launch exec's nodes were validated at instantiation; instantiate anew")]
    DeviceLaunchValidated,
    /// A child graph of the exec's own family set into it.
    #[error("the child is of this exec's own graph family")]
    ChildOfOwnFamily,
}

/// Why CUDA refused an instantiation, for the results that say more than "error"
/// ([`ExecRefusal::Instantiate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum InstantiateFailure {
    /// The graph's structure is invalid.
    #[error("the graph's structure is invalid (a cycle, say)")]
    InvalidStructure,
    /// A node's operation is not supported for device launch.
    #[error(
        "a node's operation is not supported for device launch (host, empty, event, child graph, memory and \
         conditional nodes are not)"
    )]
    NotForDeviceLaunch,
    /// A conditional body (or child graph) holds a node CUDA does not allow there.
    #[error(
        "a conditional node's body (or a child graph) holds a node CUDA does not allow there: bodies take \
         kernel, memcpy, memset, empty, child graph and conditional nodes, not event record or wait, host or \
         memory nodes (a collective captured into a body brings NCCL's event wait node unless \
         NCCL_GRAPH_MIXING_SUPPORT=0)"
    )]
    NotInBody,
    /// A node's operation is not supported.
    #[error("a node's operation is not supported here")]
    NotSupported,
    /// Device launch of a graph spanning devices or contexts.
    #[error("device launch does not support graphs whose nodes span several devices or contexts")]
    MultipleDevices,
    /// A conditional handle no conditional node uses.
    #[error("a conditional handle is not used by any conditional node")]
    HandleUnused,
}
