//! Memory free nodes: free what an alloc node of the same graph family allocated.

use crate::runtime as sys;

use super::super::{AsNode, GraphBuilder, MemAllocNode, NodeRef};
use super::{params_of, DeviceLaunchRule, Kind, NodeParams};
use crate::error::refusal::{NodeRefusal, Unremovable};
use crate::error::{CudaError, Result};
use crate::memory::KeepAlive;

/// Memory free nodes.
pub(crate) struct MemFreeSpec;

impl Kind for MemFreeSpec {
    const CODE: u32 = sys::cudaGraphNodeType::cudaGraphNodeTypeMemFree.0;
    const NAME: &'static str = "memory free";
    const DEVICE_LAUNCH: DeviceLaunchRule = DeviceLaunchRule::Refused(
        "CUDA does not allow event and memory nodes in device-launch graphs (cudaErrorInvalidValue)",
    );
    const IN_CONDITIONAL_BODY: bool = false;
    const NOT_REMOVABLE: Option<Unremovable> = Some(Unremovable::MemoryNode);
}

super::super::node::typed_nodes! {
    /// A node that frees graph-allocated memory, from
    /// [`GraphBuilder::add_mem_free`](crate::graph::GraphBuilder::add_mem_free).
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let alloc = graph.add_mem_alloc::<f32>(1024, &[])?;
    /// let free = graph.add_mem_free(&alloc, &[&alloc])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    MemFreeNode;
}

/// The address an alloc node of the family allocated.
struct FreeParams {
    addr: u64,
}

// SAFETY: a free node's parameters hold an address of the family's graph memory, no pointer
// the host follows.
unsafe impl NodeParams for FreeParams {
    type Kind = MemFreeSpec;
    type Node = MemFreeNode;

    fn with_raw<R>(
        self, f: impl FnOnce(&mut sys::cudaGraphNodeParams, Vec<KeepAlive>) -> Result<R>,
    ) -> Result<R> {
        let mut params = params_of::<MemFreeSpec>();
        params.__bindgen_anon_1.free =
            sys::cudaMemFreeNodeParams { dptr: self.addr as *mut std::ffi::c_void };
        f(&mut params, Vec::new())
    }

    fn node(node: NodeRef, _: &sys::cudaGraphNodeParams) -> MemFreeNode {
        MemFreeNode(node)
    }
}

impl GraphBuilder {
    /// Adds a node that frees the memory `alloc` allocated. `alloc` must be a node of this
    /// graph family; CUDA refuses a second free of the same allocation.
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let alloc = graph.add_mem_alloc::<u8>(1 << 20, &[])?;
    /// graph.add_mem_free(&alloc, &[&alloc])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_mem_free(&self, alloc: &MemAllocNode, deps: &[&dyn AsNode]) -> Result<MemFreeNode> {
        const CALL: &str = "GraphBuilder::add_mem_free";
        if alloc.node.root_id() != self.core.id() {
            return Err(CudaError::refused(CALL, NodeRefusal::AllocationOfAnotherGraph));
        }
        self.add_params(CALL, FreeParams { addr: alloc.addr }, deps)
    }
}
