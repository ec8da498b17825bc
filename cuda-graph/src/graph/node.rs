//! Node handles: one `Copy` type per node kind, each knowing the graph it belongs to.

use std::fmt;

use crate::runtime as sys;

use crate::error::{check, CudaError, Result};

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

typed_nodes! {
    /// A kernel launch node, from [`GraphBuilder::add_kernel`](super::GraphBuilder::add_kernel);
    /// its exec parameters change with [`GraphExec::set_kernel_params`](super::GraphExec::set_kernel_params).
    ///
    /// ```no_run
    /// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::KernelNode) -> cuda_graph::Result<()> {
    /// graph.add_empty(&[&node])?; // runs after the kernel
    /// # Ok(()) }
    /// ```
    KernelNode;
    /// A memory copy node, from [`GraphBuilder::add_memcpy`](super::GraphBuilder::add_memcpy).
    ///
    /// ```no_run
    /// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::MemcpyNode) -> cuda_graph::Result<()> {
    /// graph.add_empty(&[&node])?; // runs after the copy
    /// # Ok(()) }
    /// ```
    MemcpyNode;
    /// A memset node, from [`GraphBuilder::add_memset`](super::GraphBuilder::add_memset).
    ///
    /// ```no_run
    /// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::MemsetNode) -> cuda_graph::Result<()> {
    /// graph.add_empty(&[&node])?; // runs after the memset
    /// # Ok(()) }
    /// ```
    MemsetNode;
    /// A node that does nothing, from [`GraphBuilder::add_empty`](super::GraphBuilder::add_empty):
    /// a join point for dependencies.
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let join = graph.add_empty(&[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    EmptyNode;
    /// A node that runs a copy of another graph, from
    /// [`GraphBuilder::add_child_graph`](super::GraphBuilder::add_child_graph).
    ///
    /// ```no_run
    /// let child = cuda_graph::graph::Graph::new()?;
    /// child.add_empty(&[])?;
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let node = graph.add_child_graph(&child, &[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    ChildGraphNode;
    /// A node that frees graph-allocated memory, from
    /// [`GraphBuilder::add_mem_free`](super::GraphBuilder::add_mem_free).
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let alloc = graph.add_mem_alloc::<f32>(1024, &[])?;
    /// let free = graph.add_mem_free(&alloc, &[&alloc])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    MemFreeNode;
}

/// The kind of a node (`cudaGraphNodeType`).
///
/// ```
/// use cuda_graph::graph::NodeKind;
/// assert_eq!(NodeKind::Host.to_string(), "host");
/// assert_eq!(NodeKind::from_raw(cuda_graph::sys::cudaGraphNodeType(0)), NodeKind::Kernel);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NodeKind {
    /// A kernel launch.
    Kernel,
    /// A memory copy.
    Memcpy,
    /// A memset.
    Memset,
    /// A host function.
    Host,
    /// A child graph.
    ChildGraph,
    /// An empty node.
    Empty,
    /// Waits for an event.
    EventWait,
    /// Records an event.
    EventRecord,
    /// Signals external semaphores.
    ExternalSemaphoreSignal,
    /// Waits on external semaphores.
    ExternalSemaphoreWait,
    /// Allocates graph memory.
    MemAlloc,
    /// Frees graph memory.
    MemFree,
    /// A conditional node (IF, IF/ELSE, WHILE or SWITCH).
    Conditional,
    /// A kind this crate does not know.
    Unknown(u32),
}

impl NodeKind {
    /// Maps `cudaGraphNodeType`.
    pub fn from_raw(raw: sys::cudaGraphNodeType) -> NodeKind {
        use sys::cudaGraphNodeType as T;
        match raw {
            T::cudaGraphNodeTypeKernel => NodeKind::Kernel,
            T::cudaGraphNodeTypeMemcpy => NodeKind::Memcpy,
            T::cudaGraphNodeTypeMemset => NodeKind::Memset,
            T::cudaGraphNodeTypeHost => NodeKind::Host,
            T::cudaGraphNodeTypeGraph => NodeKind::ChildGraph,
            T::cudaGraphNodeTypeEmpty => NodeKind::Empty,
            T::cudaGraphNodeTypeWaitEvent => NodeKind::EventWait,
            T::cudaGraphNodeTypeEventRecord => NodeKind::EventRecord,
            T::cudaGraphNodeTypeExtSemaphoreSignal => NodeKind::ExternalSemaphoreSignal,
            T::cudaGraphNodeTypeExtSemaphoreWait => NodeKind::ExternalSemaphoreWait,
            T::cudaGraphNodeTypeMemAlloc => NodeKind::MemAlloc,
            T::cudaGraphNodeTypeMemFree => NodeKind::MemFree,
            T::cudaGraphNodeTypeConditional => NodeKind::Conditional,
            other => NodeKind::Unknown(other.0),
        }
    }

    /// Maps a `cudaGraphNodeType` value given as a number.
    ///
    /// ```
    /// use cuda_graph::graph::NodeKind;
    /// assert_eq!(NodeKind::from_code(4), NodeKind::ChildGraph);
    /// ```
    pub fn from_code(code: u32) -> NodeKind {
        NodeKind::from_raw(sys::cudaGraphNodeType(code))
    }
}

impl fmt::Display for NodeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NodeKind::Kernel => "kernel",
            NodeKind::Memcpy => "memcpy",
            NodeKind::Memset => "memset",
            NodeKind::Host => "host",
            NodeKind::ChildGraph => "child graph",
            NodeKind::Empty => "empty",
            NodeKind::EventWait => "event wait",
            NodeKind::EventRecord => "event record",
            NodeKind::ExternalSemaphoreSignal => "external semaphore signal",
            NodeKind::ExternalSemaphoreWait => "external semaphore wait",
            NodeKind::MemAlloc => "memory alloc",
            NodeKind::MemFree => "memory free",
            NodeKind::Conditional => "conditional",
            NodeKind::Unknown(code) => return write!(f, "unknown ({code})"),
        })
    }
}

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
    let mut raw = sys::cudaGraphNodeType(0);
    // SAFETY: callers pass a node of a live graph (checked by id, held by its family).
    check(unsafe { sys::cudaGraphNodeGetType(node, &mut raw) }, "cudaGraphNodeGetType")?;
    Ok(NodeKind::from_raw(raw))
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
                Err(CudaError::invalid(
                    call,
                    format!(
                        "dependency {i} is a node of another graph (#{}, not #{graph_id}); a node can depend \
                         only on nodes of the graph or body it is added to",
                        node.graph
                    ),
                ))
            }
        })
        .collect()
}

/// A memory allocation node, from [`GraphBuilder::add_mem_alloc`](super::GraphBuilder::add_mem_alloc):
/// the address it allocates is fixed for the graph's life, and usable by nodes ordered after
/// it and before the matching free (or, without a free node, until freed after the launch).
///
/// ```no_run
/// let graph = cuda_graph::graph::Graph::new()?;
/// let alloc = graph.add_mem_alloc::<u32>(256, &[])?;
/// assert_eq!(alloc.bytes(), 1024);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MemAllocNode {
    pub(crate) node: NodeRef,
    pub(crate) addr: u64,
    pub(crate) bytes: usize,
}

impl AsNode for MemAllocNode {
    fn as_node(&self) -> NodeRef {
        self.node
    }
}

impl MemAllocNode {
    /// The device address the node allocates.
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// The allocation's size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// A typed pointer to the allocation (`bytes / size_of::<T>()` elements), for the nodes
    /// that use it. It keeps nothing alive.
    ///
    /// # Safety
    /// The memory exists only while the graph runs, between this node and its free node:
    /// use the pointer only in nodes of this graph ordered after this node (and before the
    /// free node) by full edges, never in launches or graphs elsewhere. A programmatic edge
    /// ([`Edge::Programmatic`](super::Edge::Programmatic)) orders memory only through the
    /// dependent kernel's wait, so it does not count as ordering here.
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let alloc = graph.add_mem_alloc::<u32>(256, &[])?;
    /// // SAFETY: used only by the memset that depends on the alloc node.
    /// let scratch = unsafe { alloc.ptr::<u32>() };
    /// let fill = graph.add_memset(&scratch, 0u32, 256, &[&alloc])?;
    /// graph.add_mem_free(&alloc, &[&fill])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn ptr<T: crate::DeviceRepr>(&self) -> crate::DevicePtr<T> {
        // SAFETY: the caller promises to use the address only where the graph keeps it valid.
        unsafe { crate::DevicePtr::from_raw(self.addr, self.bytes / size_of::<T>().max(1)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr;

    #[test]
    fn every_kind_maps_and_prints() {
        for raw in 0..14u32 {
            let kind = NodeKind::from_raw(sys::cudaGraphNodeType(raw));
            assert!(!kind.to_string().is_empty());
        }
        assert_eq!(NodeKind::from_raw(sys::cudaGraphNodeType(13)), NodeKind::Conditional);
        assert_eq!(NodeKind::from_raw(sys::cudaGraphNodeType(12)), NodeKind::Unknown(12));
        assert_eq!(NodeKind::Unknown(99).to_string(), "unknown (99)");
    }

    #[test]
    fn dependencies_of_another_graph_are_refused() {
        let mine = NodeRef::new(ptr::null_mut(), 7, 7, 0);
        let theirs = NodeRef::new(ptr::null_mut(), 8, 8, 0);
        assert_eq!(raw_deps("add", 7, &[&mine]).unwrap().len(), 1);
        let err = raw_deps("add", 7, &[&mine, &theirs]).unwrap_err();
        assert!(err.to_string().contains("dependency 1 is a node of another graph (#8, not #7)"), "{err}");
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
