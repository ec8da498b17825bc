//! Reading a graph back: a node's kind, a memcpy node's parameters (each endpoint with the
//! kind of memory it is), and the graph inside a child-graph node, as a borrowed view.
//!
//! The readers take any node handle and check it before CUDA sees it: a node of another graph
//! is refused, and so is a node of the wrong kind (asking for the memcpy parameters of a
//! kernel node, say). Each call holds the family's lock, like the calls that add nodes.
//! Parameters are read per kind (`memcpy_params` here; other kinds follow the same shape).
//!
//! ```no_run
//! use cuda_graph::graph::{Graph, NodeKind};
//! use cuda_graph::DeviceBuffer;
//! let (a, b) = (DeviceBuffer::<u32>::zeroed(4)?, DeviceBuffer::<u32>::zeroed(4)?);
//! let graph = Graph::new()?;
//! graph.add_memcpy(&b.ptr(), &a.ptr(), 4, &[])?;
//! for info in graph.nodes()? {
//!     if info.kind() == NodeKind::Memcpy {
//!         let params = graph.memcpy_params(&info)?;
//!         println!("{info}: {} bytes from {}", params.bytes(), params.source);
//!     }
//! }
//! # Ok::<(), cuda_graph::CudaError>(())
//! ```

use std::fmt;
use std::marker::PhantomData;

use crate::runtime as sys;

use super::node::kind_of;
use super::nodes::{Kind, ReadNode};
use super::{list_nodes, next_id, AsNode, CoreState, GraphBuilder, GraphCore, NodeInfo, NodeKind, NodeRef};
use crate::error::refusal::NodeRefusal;
use crate::error::{check, CudaError, Result};

/// Public readers of one node of a graph or child-graph view, each `fn name -> Output;` with
/// its docs: `Owner::name(&self, node)` reads `node` through the owner's [`View`] (`view()`)
/// with the generic reader, [`View::read`], of `Output` (a [`ReadNode`]), naming the call
/// `"Owner::name"` in errors.
macro_rules! node_readers {
    (impl$(<$lt:lifetime>)? $owner:ident; $($(#[$doc:meta])* fn $name:ident -> $out:ty;)*) => {
        impl$(<$lt>)? $owner$(<$lt>)? {
            $(
                $(#[$doc])*
                pub fn $name(&self, node: &dyn AsNode) -> Result<$out> {
                    self.view().read(concat!(stringify!($owner), "::", stringify!($name)), node)
                }
            )*
        }
    };
}
pub(super) use node_readers;

/// A graph as the readers see it: a graph or body of a family, or a child graph inside one.
#[derive(Clone, Copy)]
pub(super) struct View<'a> {
    raw: sys::cudaGraph_t,
    /// The id its nodes carry (a child graph's view has a fresh one).
    id: u64,
    /// The family id its nodes carry (a child graph's view: its own id, so no exec or
    /// builder of the family takes them).
    root: u64,
    core: &'a GraphCore,
    /// For a child graph's view, the family's removal epoch when it was made: after a node
    /// removal (maybe of the child-graph node, destroying the graph viewed) it reads nothing.
    epoch: Option<u64>,
}

impl<'a> View<'a> {
    fn node_ref(&self, raw: sys::cudaGraphNode_t) -> NodeRef {
        NodeRef::new(raw, self.id, self.root, self.core.epoch())
    }

    /// Runs `f` under the family's lock, once the viewed graph is known to be alive.
    pub(super) fn locked<R>(&self, call: &'static str, f: impl FnOnce(&CoreState) -> Result<R>) -> Result<R> {
        self.core.locked(call, |state| {
            if self.epoch.is_some_and(|epoch| epoch != self.core.epoch()) {
                return Err(CudaError::refused(call, NodeRefusal::StaleView));
            }
            f(state)
        })
    }

    /// `node` as a raw handle, once checked to be a live node of this graph; `state` is the
    /// family's, locked.
    pub(super) fn own(
        &self, state: &CoreState, call: &'static str, node: &dyn AsNode,
    ) -> Result<sys::cudaGraphNode_t> {
        let node = node.as_node();
        if node.graph_id() != self.id {
            return Err(CudaError::refused(
                call,
                NodeRefusal::OfAnotherGraph { node_graph: node.graph_id(), graph: self.id },
            ));
        }
        Ok(state.live(call, &[node])?[0])
    }

    /// `node`, checked to be a live node of this graph of kind `want`; `state` is the
    /// family's, locked.
    pub(super) fn own_kind(
        &self, state: &CoreState, call: &'static str, node: &dyn AsNode, want: NodeKind,
    ) -> Result<sys::cudaGraphNode_t> {
        let raw = self.own(state, call, node)?;
        let kind = kind_of(raw)?;
        if kind != want {
            return Err(CudaError::refused(
                call,
                NodeRefusal::WrongKind { found: kind.to_string(), wanted: want.to_string() },
            ));
        }
        Ok(raw)
    }

    fn nodes(&self, call: &'static str) -> Result<Vec<NodeInfo>> {
        self.locked(call, |_| {
            let (status, raw) = list_nodes(self.raw);
            check(status, "cudaGraphGetNodes")?;
            raw.iter().enumerate().map(|(index, &node)| NodeInfo::query(self.node_ref(node), index)).collect()
        })
    }

    pub(super) fn node_kind(&self, call: &'static str, node: &dyn AsNode) -> Result<NodeKind> {
        self.locked(call, |state| kind_of(self.own(state, call, node)?))
    }

    /// The generic reader: `node`, checked to be a live node of this graph of `R`'s kind, read
    /// as `R` under the family's lock.
    pub(super) fn read<R: ReadNode<'a>>(&self, call: &'static str, node: &dyn AsNode) -> Result<R> {
        self.locked(call, |state| {
            let raw = self.own_kind(state, call, node, NodeKind::from_code(<R::Kind as Kind>::CODE))?;
            R::read(self, state, call, raw)
        })
    }

    /// A read-only view of `raw`, a graph inside a node of this family (a child graph or a
    /// conditional body), valid until a node of the family is removed.
    pub(super) fn child(&self, raw: sys::cudaGraph_t) -> ChildGraph<'a> {
        let id = next_id();
        let epoch = Some(self.core.epoch());
        ChildGraph { view: View { raw, id, root: id, core: self.core, epoch }, _not_send: PhantomData }
    }
}

impl GraphBuilder {
    pub(super) fn view(&self) -> View<'_> {
        View { raw: self.raw, id: self.id, root: self.core.id(), core: &self.core, epoch: None }
    }
}

/// The graph inside a child-graph node, borrowed from the graph that holds the node: read
/// its nodes, their kinds and parameters, and the child graphs inside it, to any depth.
///
/// Its nodes are for this view's readers only: each view (even of the same child) names its
/// nodes afresh, and builders and execs refuse them.
///
/// ```no_run
/// use cuda_graph::graph::{Graph, NodeKind};
/// let inner = Graph::new()?;
/// inner.add_empty(&[])?;
/// let outer = Graph::new()?;
/// outer.add_child_graph(&inner, &[])?;
/// let graph = Graph::new()?;
/// let node = graph.add_child_graph(&outer, &[])?;
/// let outer_copy = graph.child_graph(&node)?;
/// let nested = &outer_copy.nodes()?[0];
/// assert_eq!(nested.kind(), NodeKind::ChildGraph);
/// assert_eq!(outer_copy.child_graph(nested)?.node_count()?, 1);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Clone, Copy)]
pub struct ChildGraph<'a> {
    pub(super) view: View<'a>,
    /// Like the builder it borrows: one thread at a time.
    _not_send: PhantomData<*const ()>,
}

impl fmt::Debug for ChildGraph<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildGraph").field("id", &self.view.id).field("family", &self.view.core.id()).finish()
    }
}

impl<'a> ChildGraph<'a> {
    /// The view this child graph reads through.
    pub(super) fn view(&self) -> View<'a> {
        self.view
    }

    /// Every node of the child graph with its kind (child graphs inside it not included),
    /// as [`GraphBuilder::nodes`] lists them.
    pub fn nodes(&self) -> Result<Vec<NodeInfo>> {
        self.view.nodes("ChildGraph::nodes")
    }

    /// How many nodes the child graph has.
    pub fn node_count(&self) -> Result<usize> {
        self.view.locked("ChildGraph::node_count", |_| {
            let (status, raw) = list_nodes(self.view.raw);
            check(status, "cudaGraphGetNodes")?;
            Ok(raw.len())
        })
    }
}

impl GraphBuilder {
    /// The kind of `node`, a node of this graph (`cudaGraphNodeGetType`).
    ///
    /// ```no_run
    /// use cuda_graph::graph::{Graph, NodeKind};
    /// let graph = Graph::new()?;
    /// let empty = graph.add_empty(&[])?;
    /// assert_eq!(graph.node_kind(&empty)?, NodeKind::Empty);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn node_kind(&self, node: &dyn AsNode) -> Result<NodeKind> {
        self.view().node_kind("GraphBuilder::node_kind", node)
    }
}

impl ChildGraph<'_> {
    /// The kind of `node`, a node of this view.
    pub fn node_kind(&self, node: &dyn AsNode) -> Result<NodeKind> {
        self.view().node_kind("ChildGraph::node_kind", node)
    }
}
