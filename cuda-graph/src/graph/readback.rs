//! Reading node parameters back by kind, beside `inspect`'s memcpy reader: a memset node's
//! fill, a kernel node's function and launch configuration, a conditional node's handle and
//! bodies (as read-only views). Each reader refuses a node of another graph, a removed node
//! and a node of another kind before CUDA sees it.

use crate::runtime as sys;

use super::inspect::{node_readers, View};
use super::{AsNode, ChildGraph, ConditionalHandle, ConditionalKind, GraphBuilder, MemcpyParams, NodeKind};
use crate::error::{check, CudaError, Result};
use crate::kernel::{Kernel, KernelArgs, LaunchConfig};
use crate::memory::MemoryKind;

/// What a memset node fills (`cudaGraphMemsetNodeGetParams`).
///
/// ```no_run
/// use cuda_graph::{graph::Graph, DeviceBuffer};
/// let data = DeviceBuffer::<u32>::zeroed(64)?;
/// let graph = Graph::new()?;
/// let fill = graph.add_memset(&data.ptr(), 7u32, 64, &[])?;
/// let params = graph.memset_params(&fill)?;
/// assert_eq!((params.value, params.element_size, params.width), (7, 4, 64));
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemsetParams {
    /// The address filled.
    pub addr: u64,
    /// What kind of memory `addr` is.
    pub memory: MemoryKind,
    /// The value's bits (zero-extended to 32).
    pub value: u32,
    /// Bytes per element: 1, 2 or 4.
    pub element_size: u32,
    /// Elements per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Bytes from one row to the next (unused for one row).
    pub pitch: usize,
}

/// What a kernel node launches (read through the driver's `cuGraphKernelNodeGetParams`, which,
/// unlike the runtime's call, reads nodes of module and library kernels too): its name and
/// the launch configuration. The argument values are not read back (CUDA hands out only
/// untyped pointers to them).
///
/// ```no_run
/// use cuda_graph::graph::Graph;
/// use cuda_graph::kernel::{Kernel, LaunchConfig};
/// use cuda_graph::DevicePtr;
/// fn check(fill: &Kernel<(DevicePtr<u32>, u32)>, out: DevicePtr<u32>) -> cuda_graph::Result<()> {
///     let graph = Graph::new()?;
///     let node = graph.add_kernel(fill, LaunchConfig::new(4, 256), (out, 9), &[])?;
///     let params = graph.kernel_params(&node)?;
///     assert_eq!(params.config, LaunchConfig::new(4, 256));
///     assert!(params.launches(fill)?);
///     Ok(())
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct KernelNodeParams {
    /// Grid, block and dynamic shared memory.
    pub config: LaunchConfig,
    /// The kernel's (mangled) name (`cuFuncGetName`), when CUDA knows it.
    pub name: Option<String>,
    read: super::kernel_node::KernelNodeRead,
}

impl KernelNodeParams {
    /// Whether the node launches `kernel`.
    pub fn launches<A: KernelArgs>(&self, kernel: &Kernel<A>) -> Result<bool> {
        super::kernel_node::launches(&self.read, kernel.function()?, kernel.is_loaded())
    }
}

/// What a conditional node was made with: its kind, the handle it tests and its bodies, each
/// as a read-only [`ChildGraph`] view (nodes are added to bodies through the builders
/// `add_if` and friends returned).
///
/// ```no_run
/// use cuda_graph::graph::{ConditionalKind, Graph};
/// let graph = Graph::new()?;
/// let handle = graph.conditional_handle(Some(1))?;
/// let (node, body) = graph.add_while(&handle, &[])?;
/// body.add_empty(&[])?;
/// let params = graph.conditional_params(&node)?;
/// assert_eq!((params.kind, params.tests(&handle)), (ConditionalKind::While, true));
/// assert_eq!(params.bodies[0].node_count()?, 1);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct ConditionalParams<'a> {
    /// IF, IF/ELSE, WHILE or SWITCH.
    pub kind: ConditionalKind,
    /// Its bodies, in CUDA's order (IF/ELSE: the IF body first).
    pub bodies: Vec<ChildGraph<'a>>,
    handle: u64,
}

impl ConditionalParams<'_> {
    /// Whether the node tests `handle`.
    pub fn tests(&self, handle: &ConditionalHandle) -> bool {
        handle.raw_value() == self.handle
    }
}

/// A node kind's parameter getter (`cudaGraphMemsetNodeGetParams`, ...).
type Getter<P> = unsafe extern "C" fn(sys::cudaGraphNode_t, *mut P) -> sys::cudaError_t;

/// The raw parameters of one node kind, and that kind's getter.
///
/// # Safety
/// `GET` reads the parameters of a node of kind `KIND` into a `Self`.
unsafe trait RawParams: Default {
    const KIND: NodeKind;
    /// The getter, and its name for errors.
    const GET: (Getter<Self>, &'static str);
}

// SAFETY: `cudaGraphMemsetNodeGetParams` reads a memset node into a `cudaMemsetParams`.
unsafe impl RawParams for sys::cudaMemsetParams {
    const KIND: NodeKind = NodeKind::Memset;
    const GET: (Getter<Self>, &'static str) =
        (sys::cudaGraphMemsetNodeGetParams, "cudaGraphMemsetNodeGetParams");
}

impl<'a> View<'a> {
    /// Reads the raw parameters of `node`, a node of `P`'s kind of this view, under the
    /// family's lock, and hands the node and them to `then`, still under the lock.
    fn read_params<P: RawParams, R>(
        &self, call: &'static str, node: &dyn AsNode, then: impl FnOnce(sys::cudaGraphNode_t, P) -> Result<R>,
    ) -> Result<R> {
        self.locked(call, |state| {
            let node = self.own_kind(state, call, node, P::KIND)?;
            let mut raw = P::default();
            let (get, get_call) = P::GET;
            // SAFETY: a live node of `P::KIND` of a family held here (checked), which `get`
            // reads into a `P` (`RawParams`' promise); `raw` is writable.
            check(unsafe { get(node, &mut raw) }, get_call)?;
            then(node, raw)
        })
    }

    fn memset_params(&self, call: &'static str, node: &dyn AsNode) -> Result<MemsetParams> {
        self.read_params(call, node, |_, raw: sys::cudaMemsetParams| {
            Ok(MemsetParams {
                addr: raw.dst as u64,
                memory: MemoryKind::of(raw.dst as u64)?,
                value: raw.value,
                element_size: raw.elementSize,
                width: raw.width,
                height: raw.height,
                pitch: raw.pitch,
            })
        })
    }

    fn kernel_params(&self, call: &'static str, node: &dyn AsNode) -> Result<KernelNodeParams> {
        self.locked(call, |state| {
            let node = self.own_kind(state, call, node, NodeKind::Kernel)?;
            // SAFETY: a live kernel node of a family held here (checked just above).
            let read = unsafe { super::kernel_node::read(node) }?;
            let name = super::kernel_node::name(read.function)?;
            Ok(KernelNodeParams { config: read.config, name, read })
        })
    }

    fn conditional_params(&self, call: &'static str, node: &dyn AsNode) -> Result<ConditionalParams<'a>> {
        let (kind, handle, bodies) = self.locked(call, |state| {
            let node = self.own_kind(state, call, node, NodeKind::Conditional)?;
            let recorded = state.conditionals.get(&(node as usize)).ok_or_else(|| {
                CudaError::invalid(
                    call,
                    "the conditional node was not added by this crate, so its parameters are unknown",
                )
            })?;
            Ok((recorded.kind, recorded.handle, recorded.bodies.clone()))
        })?;
        let bodies = bodies.into_iter().map(|raw| self.child(raw as sys::cudaGraph_t)).collect();
        Ok(ConditionalParams { kind, bodies, handle })
    }
}

node_readers! {
    impl GraphBuilder;
    /// What the memset node `node` of this graph fills. Refused for a node of another graph
    /// or of another kind.
    ///
    /// ```no_run
    /// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::MemsetNode) -> cuda_graph::Result<()> {
    /// println!("fills {} elements", graph.memset_params(&node)?.width);
    /// # Ok(()) }
    /// ```
    fn memset_params -> MemsetParams;
    /// What the kernel node `node` of this graph launches and how (see [`KernelNodeParams`]).
    ///
    /// ```no_run
    /// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::KernelNode) -> cuda_graph::Result<()> {
    /// println!("{:?}", graph.kernel_params(&node)?.config);
    /// # Ok(()) }
    /// ```
    fn kernel_params -> KernelNodeParams;
    /// The kind, handle and bodies of the conditional node `node` of this graph (see
    /// [`ConditionalParams`]). The body views read nothing once a node of the family was
    /// removed.
    ///
    /// ```no_run
    /// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::ConditionalNode) -> cuda_graph::Result<()> {
    /// println!("{} bodies", graph.conditional_params(&node)?.bodies.len());
    /// # Ok(()) }
    /// ```
    fn conditional_params -> ConditionalParams<'_>;
}

node_readers! {
    impl<'a> ChildGraph;
    /// What the memset node `node` of this view fills (see [`GraphBuilder::memset_params`]).
    fn memset_params -> MemsetParams;
    /// What the kernel node `node` of this view launches (see [`GraphBuilder::kernel_params`]).
    fn kernel_params -> KernelNodeParams;
    /// The conditional node `node` of this view (a conditional body's nested conditional).
    fn conditional_params -> ConditionalParams<'a>;
    /// The kind of `node`, a node of this view.
    fn node_kind -> NodeKind;
    /// What the memcpy node `node` of this view copies (see [`GraphBuilder::memcpy_params`]).
    fn memcpy_params -> MemcpyParams;
    /// The graph inside the child-graph node `node` of this view.
    fn child_graph -> ChildGraph<'a>;
}
