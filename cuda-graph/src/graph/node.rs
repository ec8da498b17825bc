//! Node handles: one `Copy` type per node kind, each knowing the graph it belongs to.

use std::fmt;

use crate::runtime as sys;

use super::NodeKind;
use crate::error::refusal::NodeRefusal;
use crate::error::{CudaError, Result};

/// A node of some graph, of any kind: what every typed node handle converts to.
///
/// It remembers the graph (or conditional body) it was added to, so giving it to another
/// graph, or to an exec of another graph, is refused with
/// [`CudaError::InvalidArgument`] instead of reaching CUDA.
///
/// ```no_run
/// use cuda_graph::graph::{AsNode, Graph};
/// let graph = Graph::new()?;
/// let node = graph.add_empty(&[])?.as_node();
/// graph.add_empty(&[&node])?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
///
/// Two handles are equal when they name the same node of the same graph, whenever each was
/// made. A handle to a removed node may compare equal to a node CUDA later puts at the same
/// address; every call still refuses the stale one.
#[derive(Clone, Copy)]
pub struct NodeRef {
    raw: sys::cudaGraphNode_t,
    graph: u64,
    root: u64,
    /// The family's removal epoch when the handle was made: a removal of `raw` in a later
    /// epoch means the node this handle named is gone (see `edit`).
    epoch: u64,
}

// SAFETY: a node handle is an identifier; it is only passed to CUDA after its graph id is
// checked against a graph (or exec) that keeps the node alive, under that family's lock.
unsafe impl Send for NodeRef {}
// SAFETY: as above; `&NodeRef` exposes only copies of the identifier.
unsafe impl Sync for NodeRef {}

impl PartialEq for NodeRef {
    fn eq(&self, other: &NodeRef) -> bool {
        (self.raw, self.graph) == (other.raw, other.graph)
    }
}

impl Eq for NodeRef {}

impl std::hash::Hash for NodeRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.raw, self.graph).hash(state);
    }
}

impl fmt::Debug for NodeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NodeRef({:p} in graph #{})", self.raw, self.graph)
    }
}

impl NodeRef {
    pub(crate) fn new(raw: sys::cudaGraphNode_t, graph: u64, root: u64, epoch: u64) -> NodeRef {
        NodeRef { raw, graph, root, epoch }
    }

    /// The raw node handle, for calls this crate does not wrap. Its graph still owns it.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{AsNode, Graph};
    /// let graph = Graph::new()?;
    /// assert!(!graph.add_empty(&[])?.as_node().as_raw().is_null());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn as_raw(&self) -> sys::cudaGraphNode_t {
        self.raw
    }

    /// The id of the family (the root graph) this node belongs to.
    pub(crate) fn root_id(&self) -> u64 {
        self.root
    }

    /// The id of the graph (root or body) this node was added to.
    pub(crate) fn graph_id(&self) -> u64 {
        self.graph
    }

    /// The family's removal epoch when this handle was made.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch
    }
}

/// Anything that names a node: every typed node handle, [`NodeRef`] and [`NodeInfo`].
/// Dependency lists are `&[&dyn AsNode]`, so nodes of different kinds mix freely.
///
/// ```no_run
/// use cuda_graph::graph::{AsNode, Graph};
/// let graph = Graph::new()?;
/// let a = graph.add_empty(&[])?;
/// let deps: [&dyn AsNode; 1] = [&a];
/// graph.add_empty(&deps)?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub trait AsNode {
    /// The node, untyped.
    fn as_node(&self) -> NodeRef;
}

impl AsNode for NodeRef {
    fn as_node(&self) -> NodeRef {
        *self
    }
}

/// Declares typed node handles, each `Name;` with its docs: a `Copy` newtype of [`NodeRef`]
/// that is [`AsNode`]. Each kind's file (`graph::nodes`) declares its own.
macro_rules! typed_nodes {
    ($($(#[$doc:meta])* $name:ident;)*) => { $(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct $name(pub(crate) NodeRef);

        impl AsNode for $name {
            fn as_node(&self) -> NodeRef {
                self.0
            }
        }
    )* };
}
pub(super) use typed_nodes;

/// One node as [`GraphBuilder::nodes`](super::GraphBuilder::nodes) lists it: its handle,
/// kind, position in the list and, for kernels, the kernel's name. `Display` names it, e.g.
/// ``node 2 (kernel `fill`)``.
///
/// ```no_run
/// let graph = cuda_graph::graph::Graph::new()?;
/// graph.add_empty(&[])?;
/// let info = &graph.nodes()?[0];
/// assert_eq!(info.to_string(), "node 0 (empty)");
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    node: NodeRef,
    kind: NodeKind,
    index: usize,
    kernel_name: Option<String>,
}

impl NodeInfo {
    /// Reads the kind (and kernel name) of `node`; the caller holds the family lock.
    pub(crate) fn query(node: NodeRef, index: usize) -> Result<NodeInfo> {
        let kind = kind_of(node.raw)?;
        let kernel_name = if kind == NodeKind::Kernel { kernel_name(node.raw)? } else { None };
        Ok(NodeInfo { node, kind, index, kernel_name })
    }

    /// The node's kind.
    pub fn kind(&self) -> NodeKind {
        self.kind
    }

    /// Its position in the list `nodes()` returned.
    pub fn index(&self) -> usize {
        self.index
    }

    /// For kernel nodes, the kernel's (mangled) name (`cuFuncGetName`), when CUDA knows it.
    pub fn kernel_name(&self) -> Option<&str> {
        self.kernel_name.as_deref()
    }
}

impl AsNode for NodeInfo {
    fn as_node(&self) -> NodeRef {
        self.node
    }
}

impl fmt::Display for NodeInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kernel_name {
            Some(name) => write!(f, "node {} ({} `{name}`)", self.index, self.kind),
            None => write!(f, "node {} ({})", self.index, self.kind),
        }
    }
}

/// The kind of a live node.
pub(crate) fn kind_of(node: sys::cudaGraphNode_t) -> Result<NodeKind> {
    // The driver's answer: the runtime's fails for the kinds only the driver makes. Callers
    // pass a node of a live graph (checked by id, held by its family).
    Ok(NodeKind::from_raw(crate::driver::node_type(node)?))
}

/// The kernel's name of the kernel node `node` (live, held by the caller), where CUDA knows it.
pub(crate) fn kernel_name(node: sys::cudaGraphNode_t) -> Result<Option<String>> {
    // SAFETY: callers pass a live kernel node of a graph they hold.
    let read = unsafe { super::kernel_node::read(node) }?;
    super::kernel_node::name(read.function)
}

/// Checks that every dependency belongs to the graph `graph_id` and returns them; whether
/// they are still in it is checked under the family's lock (`CoreState::live`).
pub(crate) fn raw_deps(call: &'static str, graph_id: u64, deps: &[&dyn AsNode]) -> Result<Vec<NodeRef>> {
    deps.iter()
        .enumerate()
        .map(|(i, dep)| {
            let node = dep.as_node();
            if node.graph == graph_id {
                Ok(node)
            } else {
                Err(CudaError::refused(
                    call,
                    NodeRefusal::DependencyOfAnotherGraph {
                        index: i,
                        node_graph: node.graph,
                        graph: graph_id,
                    },
                ))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr;

    #[test]
    fn dependencies_of_another_graph_are_refused() {
        let mine = NodeRef::new(ptr::null_mut(), 7, 7, 0);
        let theirs = NodeRef::new(ptr::null_mut(), 8, 8, 0);
        assert_eq!(raw_deps("add", 7, &[&mine]).unwrap().len(), 1);
        let err = raw_deps("add", 7, &[&mine, &theirs]).unwrap_err();
        assert!(
            matches!(
                err.refusal(),
                Some(crate::Refusal::Node(NodeRefusal::DependencyOfAnotherGraph {
                    index: 1,
                    node_graph: 8,
                    graph: 7
                }))
            ),
            "{err}"
        );
    }

    #[test]
    fn node_info_names_the_node() {
        let info = NodeInfo {
            node: NodeRef::new(ptr::null_mut(), 1, 1, 0),
            kind: NodeKind::Kernel,
            index: 3,
            kernel_name: None,
        };
        assert_eq!(info.to_string(), "node 3 (kernel)");
        let named = NodeInfo { kernel_name: Some("fill".into()), ..info };
        assert_eq!(named.to_string(), "node 3 (kernel `fill`)");
    }
}
