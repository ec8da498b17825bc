//! Memory alloc nodes: graph memory allocated from the device's graph pool, at an address
//! fixed for the graph's life.

use crate::runtime as sys;

use super::super::{AsNode, GraphBuilder, NodeRef};
use super::{checked_bytes, params_of, DeviceLaunchRule, Kind, NodeParams};
use crate::error::refusal::Unremovable;
use crate::error::Result;
use crate::memory::{DeviceRepr, KeepAlive};

/// Memory alloc nodes.
pub(crate) struct MemAllocSpec;

impl Kind for MemAllocSpec {
    const CODE: u32 = sys::cudaGraphNodeType::cudaGraphNodeTypeMemAlloc.0;
    const NAME: &'static str = "memory alloc";
    const DEVICE_LAUNCH: DeviceLaunchRule =
        DeviceLaunchRule::Refused("CUDA 13.0 refuses it with cudaErrorInvalidValue");
    const IN_CONDITIONAL_BODY: bool = false;
    const NOT_REMOVABLE: Option<Unremovable> = Some(Unremovable::MemoryNode);
}

/// A memory allocation node, from [`GraphBuilder::add_mem_alloc`](crate::graph::GraphBuilder::add_mem_alloc):
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
    /// ([`Edge::Programmatic`](crate::graph::Edge::Programmatic)) orders memory only through the
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

/// An allocation of `bytes` on the device of ordinal `device`.
struct AllocParams {
    bytes: usize,
    device: i32,
}

// SAFETY: an alloc node's parameters point at nothing; CUDA writes the address into them.
unsafe impl NodeParams for AllocParams {
    type Kind = MemAllocSpec;
    type Node = MemAllocNode;

    fn with_raw<R>(
        self, f: impl FnOnce(&mut sys::cudaGraphNodeParams, Vec<KeepAlive>) -> Result<R>,
    ) -> Result<R> {
        let mut params = params_of::<MemAllocSpec>();
        params.__bindgen_anon_1.alloc = sys::cudaMemAllocNodeParamsV2 {
            poolProps: sys::cudaMemPoolProps {
                allocType: sys::cudaMemAllocationType::cudaMemAllocationTypePinned,
                location: sys::cudaMemLocation {
                    type_: sys::cudaMemLocationType::cudaMemLocationTypeDevice,
                    id: self.device,
                },
                ..Default::default()
            },
            bytesize: self.bytes,
            ..Default::default()
        };
        f(&mut params, Vec::new())
    }

    fn node(node: NodeRef, raw: &sys::cudaGraphNodeParams) -> MemAllocNode {
        // SAFETY: cudaGraphAddNode wrote the allocation's address into the alloc member.
        let alloc = unsafe { raw.__bindgen_anon_1.alloc };
        MemAllocNode { node, addr: alloc.dptr as u64, bytes: alloc.bytesize }
    }
}

impl GraphBuilder {
    /// Adds a node that allocates `len` elements of `T` from the graph's device's graph
    /// memory pool (`cudaGraphNodeTypeMemAlloc`). Free it with [`add_mem_free`](Self::add_mem_free)
    /// in this graph, or instantiate with `auto_free_on_launch`. CUDA refuses these in
    /// conditional bodies.
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let alloc = graph.add_mem_alloc::<f64>(4096, &[])?;
    /// graph.add_mem_free(&alloc, &[&alloc])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_mem_alloc<T: DeviceRepr>(&self, len: usize, deps: &[&dyn AsNode]) -> Result<MemAllocNode> {
        const CALL: &str = "GraphBuilder::add_mem_alloc";
        let bytes = checked_bytes(CALL, len, size_of::<T>(), &[])?;
        self.add_params(CALL, AllocParams { bytes, device: self.device().ordinal() }, deps)
    }
}
