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
use std::ptr;

use crate::runtime as sys;

use super::node::kind_of;
use super::{list_nodes, next_id, AsNode, CoreState, GraphBuilder, GraphCore, NodeInfo, NodeKind, NodeRef};
use crate::error::{check, CudaError, Result};
use crate::memory::MemoryKind;

/// What a memcpy node copies (`cudaGraphMemcpyNodeGetParams`), from
/// [`GraphBuilder::memcpy_params`] or [`ChildGraph::memcpy_params`].
///
/// ```no_run
/// use cuda_graph::{graph::Graph, memory::MemoryKind, DeviceBuffer};
/// let (a, b) = (DeviceBuffer::<u32>::zeroed(4)?, DeviceBuffer::<u32>::zeroed(4)?);
/// let graph = Graph::new()?;
/// let copy = graph.add_memcpy(&b.ptr(), &a.ptr(), 4, &[])?;
/// let params = graph.memcpy_params(&copy)?;
/// assert_eq!(params.source.memory(), Some(MemoryKind::Device));
/// assert_eq!(params.bytes(), 16);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemcpyParams {
    /// Where the copy reads.
    pub source: MemcpyEndpoint,
    /// Where the copy writes.
    pub destination: MemcpyEndpoint,
    /// Width (bytes for linear memory, elements for arrays), height and depth of the copy.
    pub extent: [usize; 3],
    /// The direction the node was given.
    pub direction: MemcpyDirection,
}

impl MemcpyParams {
    /// Bytes copied when both sides are linear memory (width × height × depth).
    pub fn bytes(&self) -> usize {
        self.extent.iter().product()
    }

    /// The endpoints, named: `[("source", ..), ("destination", ..)]`.
    ///
    /// ```no_run
    /// # fn f(params: cuda_graph::graph::MemcpyParams) {
    /// for (side, endpoint) in params.sides() {
    ///     println!("{side}: {endpoint}");
    /// }
    /// # }
    /// ```
    pub fn sides(&self) -> [(&'static str, MemcpyEndpoint); 2] {
        [("source", self.source), ("destination", self.destination)]
    }

    /// Reads the node's parameters and the kind of memory of each linear endpoint; the caller
    /// holds the node's family and has checked that it is a live memcpy node.
    fn read(node: sys::cudaGraphNode_t) -> Result<MemcpyParams> {
        let mut raw = sys::cudaMemcpy3DParms::default();
        check(
            // SAFETY: `node` is a live memcpy node of a family the caller holds (checked by
            // graph id and kind); `raw` is writable.
            unsafe { sys::cudaGraphMemcpyNodeGetParams(node, &mut raw) },
            "cudaGraphMemcpyNodeGetParams",
        )?;
        let endpoint = |array: sys::cudaArray_t, at: sys::cudaPitchedPtr, pos: sys::cudaPos| {
            let position = [pos.x, pos.y, pos.z];
            if !array.is_null() {
                return Ok(MemcpyEndpoint::Array { position });
            }
            let memory = MemoryKind::of(at.ptr as u64)?;
            Ok::<_, CudaError>(MemcpyEndpoint::Linear {
                addr: at.ptr as u64,
                pitch: at.pitch,
                memory,
                position,
            })
        };
        Ok(MemcpyParams {
            source: endpoint(raw.srcArray, raw.srcPtr, raw.srcPos)?,
            destination: endpoint(raw.dstArray, raw.dstPtr, raw.dstPos)?,
            extent: [raw.extent.width, raw.extent.height, raw.extent.depth],
            direction: MemcpyDirection::from_code(raw.kind.0),
        })
    }
}

/// One side of a memcpy node.
///
/// ```
/// use cuda_graph::{graph::MemcpyEndpoint, memory::MemoryKind};
/// let side = MemcpyEndpoint::Linear { addr: 0x7000, pitch: 16, memory: MemoryKind::Pinned, position: [0; 3] };
/// assert_eq!(side.memory(), Some(MemoryKind::Pinned));
/// assert_eq!(side.to_string(), "pinned host memory at 0x7000");
/// assert_eq!(MemcpyEndpoint::Array { position: [0; 3] }.memory(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemcpyEndpoint {
    /// Linear (pitched) memory.
    Linear {
        /// The base address.
        addr: u64,
        /// Bytes per row.
        pitch: usize,
        /// What kind of memory `addr` is (`cudaPointerGetAttributes`).
        memory: MemoryKind,
        /// Offset of the copied region from `addr`: x in bytes, y in rows, z in slices.
        position: [usize; 3],
    },
    /// A CUDA array.
    Array {
        /// Offset of the copied region in the array, in elements.
        position: [usize; 3],
    },
}

impl MemcpyEndpoint {
    /// The kind of memory of a linear endpoint; `None` for a CUDA array.
    pub fn memory(&self) -> Option<MemoryKind> {
        match self {
            MemcpyEndpoint::Linear { memory, .. } => Some(*memory),
            MemcpyEndpoint::Array { .. } => None,
        }
    }
}

impl fmt::Display for MemcpyEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemcpyEndpoint::Linear { addr, memory, .. } => write!(f, "{memory} memory at {addr:#x}"),
            MemcpyEndpoint::Array { .. } => f.write_str("a CUDA array"),
        }
    }
}

/// The direction a memcpy node was given (`cudaMemcpyKind`).
///
/// ```
/// use cuda_graph::graph::MemcpyDirection;
/// assert_eq!(MemcpyDirection::from_code(1), MemcpyDirection::HostToDevice);
/// assert_eq!(MemcpyDirection::from_code(4), MemcpyDirection::Inferred);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MemcpyDirection {
    /// Host to host.
    HostToHost,
    /// Host to device.
    HostToDevice,
    /// Device to host.
    DeviceToHost,
    /// Device to device.
    DeviceToDevice,
    /// Inferred by CUDA from the addresses (`cudaMemcpyDefault`).
    Inferred,
    /// A value this crate does not know.
    Unknown(u32),
}

impl MemcpyDirection {
    /// Maps a `cudaMemcpyKind` value.
    pub fn from_code(code: u32) -> MemcpyDirection {
        use sys::cudaMemcpyKind as K;
        match sys::cudaMemcpyKind(code) {
            K::cudaMemcpyHostToHost => MemcpyDirection::HostToHost,
            K::cudaMemcpyHostToDevice => MemcpyDirection::HostToDevice,
            K::cudaMemcpyDeviceToHost => MemcpyDirection::DeviceToHost,
            K::cudaMemcpyDeviceToDevice => MemcpyDirection::DeviceToDevice,
            K::cudaMemcpyDefault => MemcpyDirection::Inferred,
            _ => MemcpyDirection::Unknown(code),
        }
    }
}

/// Public readers of one node of a graph or child-graph view, each `fn name -> Output;` with
/// its docs: `Owner::name(&self, node)` asks the owner's [`View`] (`view()`) for `node`, naming
/// the call `"Owner::name"` in errors.
macro_rules! node_readers {
    (impl$(<$lt:lifetime>)? $owner:ident; $($(#[$doc:meta])* fn $name:ident -> $out:ty;)*) => {
        impl$(<$lt>)? $owner$(<$lt>)? {
            $(
                $(#[$doc])*
                pub fn $name(&self, node: &dyn AsNode) -> Result<$out> {
                    self.view().$name(concat!(stringify!($owner), "::", stringify!($name)), node)
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
                return Err(CudaError::invalid(
                    call,
                    "a node was removed from the graph since this child-graph view was made: read it again",
                ));
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
            return Err(CudaError::invalid(
                call,
                format!("the node belongs to another graph (#{}, not #{})", node.graph_id(), self.id),
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
            return Err(CudaError::invalid(call, format!("the node is a {kind} node, not a {want} node")));
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

    pub(super) fn memcpy_params(&self, call: &'static str, node: &dyn AsNode) -> Result<MemcpyParams> {
        self.locked(call, |state| MemcpyParams::read(self.own_kind(state, call, node, NodeKind::Memcpy)?))
    }

    pub(super) fn child_graph(&self, call: &'static str, node: &dyn AsNode) -> Result<ChildGraph<'a>> {
        let raw = self.locked(call, |state| {
            let node = self.own_kind(state, call, node, NodeKind::ChildGraph)?;
            let mut graph = ptr::null_mut();
            check(
                // SAFETY: `node` is a live child-graph node of a family held here; `graph` is
                // writable. The graph CUDA returns belongs to the node; the view made of it
                // reads nothing once a node of the family was removed (`View::locked`).
                unsafe { sys::cudaGraphChildGraphNodeGetGraph(node, &mut graph) },
                "cudaGraphChildGraphNodeGetGraph",
            )?;
            Ok(graph)
        })?;
        Ok(self.child(raw))
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

node_readers! {
    impl GraphBuilder;
    /// The kind of `node`, a node of this graph (`cudaGraphNodeGetType`).
    ///
    /// ```no_run
    /// use cuda_graph::graph::{Graph, NodeKind};
    /// let graph = Graph::new()?;
    /// let empty = graph.add_empty(&[])?;
    /// assert_eq!(graph.node_kind(&empty)?, NodeKind::Empty);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    fn node_kind -> NodeKind;
    /// What the memcpy node `node` of this graph copies, with the kind of memory of each
    /// side. Refused for a node of another graph or of another kind.
    ///
    /// ```no_run
    /// use cuda_graph::{graph::Graph, memory::MemoryKind, DeviceBuffer, PinnedBuffer};
    /// let input = PinnedBuffer::from_slice(&[1u32, 2, 3])?;
    /// let device = DeviceBuffer::<u32>::zeroed(3)?;
    /// let graph = Graph::new()?;
    /// let upload = graph.add_memcpy_from_host(&device.ptr(), &input, 3, &[])?;
    /// let params = graph.memcpy_params(&upload)?;
    /// assert_eq!(params.source.memory(), Some(MemoryKind::Pinned));
    /// assert_eq!(params.destination.memory(), Some(MemoryKind::Device));
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    fn memcpy_params -> MemcpyParams;
    /// The graph inside the child-graph node `node` of this graph, to read (CUDA's copy,
    /// made when the node was added). Refused for a node of another graph or of another kind.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{Graph, NodeKind};
    /// let child = Graph::new()?;
    /// child.add_empty(&[])?;
    /// let graph = Graph::new()?;
    /// let node = graph.add_child_graph(&child, &[])?;
    /// let inside = graph.child_graph(&node)?;
    /// assert_eq!(inside.nodes()?[0].kind(), NodeKind::Empty);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    fn child_graph -> ChildGraph<'_>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_copy_direction_maps() {
        let directions: Vec<MemcpyDirection> = (0..6).map(MemcpyDirection::from_code).collect();
        assert_eq!(
            directions,
            [
                MemcpyDirection::HostToHost,
                MemcpyDirection::HostToDevice,
                MemcpyDirection::DeviceToHost,
                MemcpyDirection::DeviceToDevice,
                MemcpyDirection::Inferred,
                MemcpyDirection::Unknown(5),
            ]
        );
    }

    #[test]
    fn endpoints_name_their_memory_and_params_their_size() {
        let device =
            MemcpyEndpoint::Linear { addr: 0x10, pitch: 8, memory: MemoryKind::Device, position: [0; 3] };
        let array = MemcpyEndpoint::Array { position: [1, 0, 0] };
        assert_eq!(device.to_string(), "device memory at 0x10");
        assert_eq!(array.to_string(), "a CUDA array");
        assert_eq!((device.memory(), array.memory()), (Some(MemoryKind::Device), None));
        let params = MemcpyParams {
            source: device,
            destination: array,
            extent: [8, 2, 3],
            direction: MemcpyDirection::Inferred,
        };
        assert_eq!(params.bytes(), 48);
        assert_eq!(params.sides(), [("source", device), ("destination", array)]);
    }
}
