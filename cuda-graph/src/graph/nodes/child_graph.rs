//! Child graph nodes: a node that runs CUDA's copy of another graph, set on an exec from
//! another graph of the same shape, and read back as a borrowed view.
//!
//! A child graph is added under the locks of both families (its own path, not the generic
//! add), so that what the child's nodes keep is read while nobody changes it.

use std::ptr;

use crate::runtime as sys;

use super::super::inspect::{node_readers, View};
use super::super::node::raw_deps;
use super::super::{
    lock_pair, AsNode, ChildGraph, CoreState, Graph, GraphBuilder, GraphExec, LaunchMode, NodeRef,
};
use super::{params_of, DeviceLaunchRule, Kind, NodeParams, ReadNode};
use crate::error::refusal::{EditRefusal, ExecRefusal};
use crate::error::{check, CudaError, Result};
use crate::memory::KeepAlive;

/// Child graph nodes.
pub(crate) struct ChildGraphSpec;

impl Kind for ChildGraphSpec {
    const CODE: u32 = sys::cudaGraphNodeType::cudaGraphNodeTypeGraph.0;
    const NAME: &'static str = "child graph";
    const DEVICE_LAUNCH: DeviceLaunchRule = DeviceLaunchRule::Allowed;
    const IN_CONDITIONAL_BODY: bool = true;
}

super::super::node::typed_nodes! {
    /// A node that runs a copy of another graph, from
    /// [`GraphBuilder::add_child_graph`](crate::graph::GraphBuilder::add_child_graph).
    ///
    /// ```no_run
    /// let child = cuda_graph::graph::Graph::new()?;
    /// child.add_empty(&[])?;
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let node = graph.add_child_graph(&child, &[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    ChildGraphNode;
}

/// A child graph node's parameters for a setter: a private copy of the graph CUDA reads
/// (alive through the call), and what its nodes keep.
struct ChildParams {
    graph: sys::cudaGraph_t,
    _copy: Option<RawClone>,
    keep: Vec<KeepAlive>,
    fence: bool,
}

impl ChildParams {
    /// The generic parameters of a node that clones `graph`.
    fn raw(graph: sys::cudaGraph_t) -> sys::cudaGraphNodeParams {
        let mut params = params_of::<ChildGraphSpec>();
        params.__bindgen_anon_1.graph = sys::cudaChildGraphNodeParams {
            graph,
            ownership: sys::cudaGraphChildGraphNodeOwnership::cudaGraphChildGraphOwnershipClone,
        };
        params
    }
}

// SAFETY: the parameters name the graph CUDA clones during the call (alive: the private copy is
// held until `with_raw` returns), and `keep` holds what that graph's nodes point at.
unsafe impl NodeParams for ChildParams {
    type Kind = ChildGraphSpec;
    type Node = ChildGraphNode;

    fn with_raw<R>(
        self, f: impl FnOnce(&mut sys::cudaGraphNodeParams, Vec<KeepAlive>) -> Result<R>,
    ) -> Result<R> {
        let result = f(&mut ChildParams::raw(self.graph), self.keep);
        drop(self._copy);
        result
    }

    fn node(node: NodeRef, _: &sys::cudaGraphNodeParams) -> ChildGraphNode {
        ChildGraphNode(node)
    }

    fn fence(&self) -> bool {
        self.fence
    }
}

impl GraphBuilder {
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
            return Err(CudaError::refused(CALL, EditRefusal::ChildIsItself));
        }
        self.expect_device(child.device(), CALL, "the child graph")?;
        let deps = raw_deps(CALL, self.id, deps)?;
        let _on_device = crate::device::CurrentFor::new(self.device())?;
        let (mut mine, theirs) = lock_pair(CALL, &self.core, child.core())?;
        if let Some(theirs) = &theirs {
            super::super::conditional::refuse_child_with_handles(CALL, theirs)?;
        }
        let deps = mine.live(CALL, &deps)?;
        let inherited: Vec<KeepAlive> = theirs.iter().flat_map(|t| t.keep_alive.iter().cloned()).collect();
        let host_work = theirs.as_ref().is_some_and(|t| t.host_work);
        let mut params = ChildParams::raw(child.as_raw());
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
}

impl<M: LaunchMode> GraphExec<M> {
    /// Makes child graph node `node` run with the parameters of `child`'s nodes in later
    /// launches of this exec (`cudaGraphExecNodeSetParams`). CUDA requires `child` to have the
    /// topology, and node order, of the graph the node holds, and checks what may change as
    /// [`update`](Self::update) does; a refusal is CUDA's error. The exec keeps alive what
    /// `child`'s nodes use; what the node used before lives until the launches queued before
    /// have completed.
    ///
    /// Refused before CUDA sees it: a `child` of this exec's own family, of another device,
    /// one that made conditional handles, or (for a [`DeviceLaunch`](crate::graph::DeviceLaunch) exec,
    /// whose nodes were checked at instantiation) any child at all: instantiate anew instead.
    ///
    /// ```no_run
    /// use cuda_graph::graph::Graph;
    /// let data = cuda_graph::DeviceBuffer::<u32>::zeroed(16)?;
    /// let child = |value: u32| -> cuda_graph::Result<Graph> {
    ///     let child = Graph::new()?;
    ///     child.add_memset(&data.ptr(), value, 16, &[])?;
    ///     Ok(child)
    /// };
    /// let graph = Graph::new()?;
    /// let node = graph.add_child_graph(&child(1)?, &[])?;
    /// let mut exec = graph.instantiate_default()?;
    /// exec.set_child_graph(&node, &child(2)?)?; // later launches write 2
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn set_child_graph(&mut self, node: &ChildGraphNode, child: &Graph) -> Result<()> {
        const CALL: &str = "GraphExec::set_child_graph";
        let device = self.source.device();
        let source = self.source.id();
        self.set_params(CALL, node, || {
            if M::DEVICE_LAUNCH {
                return Err(CudaError::refused(CALL, ExecRefusal::DeviceLaunchValidated));
            }
            if child.core().id() == source {
                return Err(CudaError::refused(CALL, ExecRefusal::ChildOfOwnFamily));
            }
            super::expect_same_device(CALL, device, child.device())?;
            // A private copy under the child's lock, so that CUDA reads a graph nobody else may
            // change while the exec's family is locked (never both locks at once).
            let (copy, keep, fence) = child.core().locked(CALL, |state| {
                super::super::conditional::refuse_child_with_handles(CALL, state)?;
                let keep: Vec<KeepAlive> = state.keep_alive.as_slice().to_vec();
                Ok((RawClone::of(child.as_raw())?, keep, state.execs_need_fence(child.device())))
            })?;
            Ok(ChildParams { graph: copy.0, _copy: Some(copy), keep, fence })
        })
    }
}

/// A `cudaGraphClone` copy owned here alone, destroyed when dropped.
struct RawClone(sys::cudaGraph_t);

impl RawClone {
    /// Clones `graph`; its family's lock is held by the caller.
    fn of(graph: sys::cudaGraph_t) -> Result<RawClone> {
        let mut raw = ptr::null_mut();
        // SAFETY: `graph` is alive and locked by the caller; `raw` is a valid out-pointer.
        check(unsafe { sys::cudaGraphClone(&mut raw, graph) }, "cudaGraphClone")?;
        Ok(RawClone(raw))
    }
}

impl Drop for RawClone {
    fn drop(&mut self) {
        // SAFETY: the clone is ours alone and destroyed once; CUDA copied what it needed from
        // it during the set call.
        let status = unsafe { sys::cudaGraphDestroy(self.0) };
        crate::release::record_drop_error(status, "cudaGraphDestroy");
    }
}

impl<'a> ReadNode<'a> for ChildGraph<'a> {
    type Kind = ChildGraphSpec;

    fn read(
        view: &View<'a>, _: &CoreState, _: &'static str, node: sys::cudaGraphNode_t,
    ) -> Result<ChildGraph<'a>> {
        let mut graph = ptr::null_mut();
        check(
            // SAFETY: `node` is a live child-graph node of a family held here; `graph` is
            // writable. The graph CUDA returns belongs to the node; the view made of it
            // reads nothing once a node of the family was removed (`View::locked`).
            unsafe { sys::cudaGraphChildGraphNodeGetGraph(node, &mut graph) },
            "cudaGraphChildGraphNodeGetGraph",
        )?;
        Ok(view.child(graph))
    }
}

node_readers! {
    impl GraphBuilder;
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

node_readers! {
    impl<'a> ChildGraph;
    /// The graph inside the child-graph node `node` of this view.
    fn child_graph -> ChildGraph<'a>;
}
