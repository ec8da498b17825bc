//! Adding nodes: kernel, memcpy, memset, empty, child graph, memory alloc and free.

use std::ptr;

use crate::runtime as sys;

use super::node::raw_deps;
use super::params::{node_params_of, Copy1D, Fill, KernelLaunch, MemsetElement};
use super::{lock_pair, AsNode, ChildGraphNode, EmptyNode, Graph, GraphBuilder, KernelNode, MemAllocNode};
use super::{MemFreeNode, MemcpyNode, MemsetNode, NodeRef};
use crate::error::{check, CudaError, Result};
use crate::kernel::{Kernel, KernelArgs, LaunchConfig};
use crate::memory::{DevicePtr, DeviceRepr, KeepAlive};

impl GraphBuilder {
    /// Adds a node described by `params` after `deps` (`cudaGraphAddNode`), keeping `keep`
    /// alive with the family. `params` must point only at memory `keep` owns (or CUDA copies).
    pub(crate) fn add_node(
        &self, call: &'static str, params: &mut sys::cudaGraphNodeParams, keep: Vec<KeepAlive>,
        deps: &[&dyn AsNode],
    ) -> Result<NodeRef> {
        self.add_node_with(call, params, keep, false, deps)
    }

    /// [`add_node`](Self::add_node); `host_work` marks a node that calls a host function.
    pub(crate) fn add_node_with(
        &self, call: &'static str, params: &mut sys::cudaGraphNodeParams, keep: Vec<KeepAlive>,
        host_work: bool, deps: &[&dyn AsNode],
    ) -> Result<NodeRef> {
        let deps = raw_deps(call, self.id, deps)?;
        self.insert_node(call, params, keep, host_work, &deps, None, |_| Ok(()))
    }

    /// Adds a node after the raw `deps` (nodes of this graph, checked by the caller), with
    /// `edges` (one per dependency; plain edges when `None`), then runs `finish` on it under
    /// the same lock (setting attributes, say): if `finish` fails, the node is removed again
    /// and nothing is kept. `params` must point only at memory `keep` owns (or CUDA copies).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn insert_node(
        &self, call: &'static str, params: &mut sys::cudaGraphNodeParams, keep: Vec<KeepAlive>,
        host_work: bool, deps: &[NodeRef], edges: Option<&[sys::cudaGraphEdgeData]>,
        finish: impl FnOnce(sys::cudaGraphNode_t) -> Result<()>,
    ) -> Result<NodeRef> {
        debug_assert!(edges.is_none_or(|edges| edges.len() == deps.len()));
        let edge_data = edges.map_or(ptr::null(), <[_]>::as_ptr);
        // Kernel nodes take the function of the current device: the graph's.
        let _on_device = crate::device::CurrentFor::new(self.core.device())?;
        self.core.locked(call, |state| {
            let deps = state.live(call, deps)?;
            let mut node = ptr::null_mut();
            check(
                // SAFETY: the graph is alive (the family owns it) and locked; `deps` are live
                // nodes of this graph (checked by id and epoch) and `edge_data` is null or one entry per
                // dependency. Every caller passes `params` zero-initialised but for its node
                // type's fields, whose pointers reach memory that `keep` (kept below, with the
                // family) owns or values CUDA copies during the call.
                unsafe {
                    sys::cudaGraphAddNode(&mut node, self.raw, deps.as_ptr(), edge_data, deps.len(), params)
                },
                "cudaGraphAddNode",
            )?;
            if let Err(err) = finish(node) {
                // SAFETY: `node` was just added to this locked graph and nothing else names it.
                let status = unsafe { sys::cudaGraphDestroyNode(node) };
                check(status, "cudaGraphDestroyNode")?;
                return Err(err);
            }
            state.keep_alive.extend(keep);
            state.host_work |= host_work;
            Ok(self.node_ref(node))
        })
    }

    /// Adds a node that does nothing: a join point for its dependencies.
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let (a, b) = (graph.add_empty(&[])?, graph.add_empty(&[])?);
    /// let join = graph.add_empty(&[&a, &b])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_empty(&self, deps: &[&dyn AsNode]) -> Result<EmptyNode> {
        let mut params = node_params_of(sys::cudaGraphNodeType::cudaGraphNodeTypeEmpty);
        self.add_node("GraphBuilder::add_empty", &mut params, Vec::new(), deps).map(EmptyNode)
    }

    /// Adds a launch of `kernel` with `args`, after `deps`. The configuration is validated
    /// and the kernel's parameters checked against its declaration first; the buffers the
    /// arguments point into stay alive with the graph and its execs.
    ///
    /// A [`ConditionalHandle`](super::ConditionalHandle) among `args` must come from this
    /// graph or one enclosing it (for a body); a handle of another graph is refused
    /// (`InvalidArgument`, naming both graphs), since CUDA leaves setting it from there
    /// undefined.
    ///
    /// ```no_run
    /// use cuda_graph::graph::Graph;
    /// use cuda_graph::kernel::{Kernel, LaunchConfig};
    /// use cuda_graph::{DeviceBuffer, DevicePtr};
    /// fn build(scale: &Kernel<(DevicePtr<f32>, u32, f32)>) -> cuda_graph::Result<Graph> {
    ///     let data = DeviceBuffer::<f32>::zeroed(1024)?;
    ///     let graph = Graph::new()?;
    ///     graph.add_kernel(scale, LaunchConfig::for_elements(1024, 256), (data.ptr(), 1024, 2.0), &[])?;
    ///     Ok(graph) // `data` is dropped here, but the graph keeps its memory
    /// }
    /// ```
    pub fn add_kernel<A: KernelArgs>(
        &self, kernel: &Kernel<A>, config: LaunchConfig, args: A, deps: &[&dyn AsNode],
    ) -> Result<KernelNode> {
        const CALL: &str = "GraphBuilder::add_kernel";
        let launch = KernelLaunch::new(CALL, kernel, &config, &args, &self.lineage, self.device())?;
        launch.with_node_params(|params, keep| self.add_node(CALL, params, keep, deps)).map(KernelNode)
    }

    /// Adds a copy of `len` elements from `src` to `dst`, both device memory. Both sides are
    /// checked to hold `len` elements, and stay alive with the graph.
    ///
    /// ```no_run
    /// let (a, b) = (cuda_graph::DeviceBuffer::from_slice(&[1u32, 2, 3])?, cuda_graph::DeviceBuffer::<u32>::zeroed(3)?);
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.add_memcpy(&b.ptr(), &a.ptr(), 3, &[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_memcpy<T: DeviceRepr>(
        &self, dst: &DevicePtr<T>, src: &DevicePtr<T>, len: usize, deps: &[&dyn AsNode],
    ) -> Result<MemcpyNode> {
        let copy = Copy1D::device("GraphBuilder::add_memcpy", dst, src, len)?;
        self.add_copy("GraphBuilder::add_memcpy", copy, deps)
    }

    pub(crate) fn add_copy(
        &self, call: &'static str, copy: Copy1D, deps: &[&dyn AsNode],
    ) -> Result<MemcpyNode> {
        let mut params = copy.node_params();
        self.add_node(call, &mut params, copy.keep, deps).map(MemcpyNode)
    }

    /// Adds a fill of the first `len` elements of `dst` with `value` (1-, 2- or 4-byte
    /// elements; see [`MemsetElement`]).
    ///
    /// ```no_run
    /// let data = cuda_graph::DeviceBuffer::<f32>::zeroed(100)?;
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.add_memset(&data.ptr(), 1.5f32, 100, &[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_memset<T: MemsetElement>(
        &self, dst: &DevicePtr<T>, value: T, len: usize, deps: &[&dyn AsNode],
    ) -> Result<MemsetNode> {
        let fill = Fill::new("GraphBuilder::add_memset", dst, value, len)?;
        crate::memory::check_owners_on(&fill.keep, self.device(), "GraphBuilder::add_memset")?;
        let mut params = fill.node_params();
        self.add_node("GraphBuilder::add_memset", &mut params, fill.keep, deps).map(MemsetNode)
    }

    /// Adds a node that runs a copy of `child` (CUDA clones it now: later changes to `child`
    /// do not reach this node). CUDA refuses children with conditional or memory nodes; a
    /// child that made conditional handles is refused here first, with the reason.
    ///
    /// ```no_run
    /// let child = cuda_graph::graph::Graph::new()?;
    /// child.add_empty(&[])?;
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.add_child_graph(&child, &[])?;
    /// graph.add_child_graph(&child, &[])?; // a second, independent copy
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_child_graph(&self, child: &Graph, deps: &[&dyn AsNode]) -> Result<ChildGraphNode> {
        const CALL: &str = "GraphBuilder::add_child_graph";
        if child.core().id() == self.core.id() {
            return Err(CudaError::invalid(
                CALL,
                "a graph cannot contain itself (or its own family) as a child",
            ));
        }
        self.expect_device(child.device(), CALL, "the child graph")?;
        let deps = raw_deps(CALL, self.id, deps)?;
        let _on_device = crate::device::CurrentFor::new(self.device())?;
        let (mut mine, theirs) = lock_pair(CALL, &self.core, child.core())?;
        if let Some(theirs) = &theirs {
            super::conditional::refuse_child_with_handles(CALL, theirs)?;
        }
        let deps = mine.live(CALL, &deps)?;
        let inherited: Vec<KeepAlive> = theirs.iter().flat_map(|t| t.keep_alive.iter().cloned()).collect();
        let host_work = theirs.as_ref().is_some_and(|t| t.host_work);
        let mut params = node_params_of(sys::cudaGraphNodeType::cudaGraphNodeTypeGraph);
        params.__bindgen_anon_1.graph = sys::cudaChildGraphNodeParams {
            graph: child.as_raw(),
            ownership: sys::cudaGraphChildGraphNodeOwnership::cudaGraphChildGraphOwnershipClone,
        };
        let mut node = ptr::null_mut();
        check(
            // SAFETY: both graphs are alive and locked; `deps` are nodes of this graph; CUDA
            // clones the child, which stays ours.
            unsafe {
                sys::cudaGraphAddNode(
                    &mut node,
                    self.raw,
                    deps.as_ptr(),
                    ptr::null(),
                    deps.len(),
                    &mut params,
                )
            },
            "cudaGraphAddNode",
        )?;
        // The clone points at what the child's nodes point at: keep all of it.
        mine.keep_alive.extend(inherited);
        mine.host_work |= host_work;
        Ok(ChildGraphNode(self.node_ref(node)))
    }

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
        let bytes = super::params::checked_bytes(CALL, len, size_of::<T>(), &[])?;
        let device = self.device().ordinal();
        let mut params = node_params_of(sys::cudaGraphNodeType::cudaGraphNodeTypeMemAlloc);
        params.__bindgen_anon_1.alloc = sys::cudaMemAllocNodeParamsV2 {
            poolProps: sys::cudaMemPoolProps {
                allocType: sys::cudaMemAllocationType::cudaMemAllocationTypePinned,
                location: sys::cudaMemLocation {
                    type_: sys::cudaMemLocationType::cudaMemLocationTypeDevice,
                    id: device,
                },
                ..Default::default()
            },
            bytesize: bytes,
            ..Default::default()
        };
        let node = self.add_node(CALL, &mut params, Vec::new(), deps)?;
        // SAFETY: cudaGraphAddNode wrote the allocation's address into the alloc member.
        let addr = unsafe { params.__bindgen_anon_1.alloc.dptr } as u64;
        Ok(MemAllocNode { node, addr, bytes })
    }

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
            return Err(CudaError::invalid(CALL, "the allocation was made by a node of another graph"));
        }
        let mut params = node_params_of(sys::cudaGraphNodeType::cudaGraphNodeTypeMemFree);
        params.__bindgen_anon_1.free =
            sys::cudaMemFreeNodeParams { dptr: alloc.addr as *mut std::ffi::c_void };
        self.add_node(CALL, &mut params, Vec::new(), deps).map(MemFreeNode)
    }
}
