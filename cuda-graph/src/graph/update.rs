//! Changing an exec after instantiation: the whole graph at once (`cudaGraphExecUpdate`,
//! with the reason when refused) or one node's parameters at a time.

use crate::runtime as sys;

use super::{AsNode, Graph, GraphExec, LaunchMode, NodeRef};
use crate::error::refusal::NodeRefusal;
use crate::error::{check, CudaError, Result, UpdateRefusal};
use crate::memory::KeepAlive;

impl<M: LaunchMode> GraphExec<M> {
    /// Updates every node's parameters from `graph`, which must have the same topology as
    /// the graph instantiated (`cudaGraphExecUpdate`). A refusal is
    /// [`CudaError::UpdateRefused`] with CUDA's reason, e.g. [`UpdateRefusal::TopologyChanged`],
    /// and the node of `graph` CUDA named (`cudaGraphExecUpdateResultInfo::errorNode`, with
    /// `errorFromNode` for a changed edge) as `graph.nodes()` lists it.
    /// The exec then keeps `graph`'s resources alive too; per-node setters still name nodes of
    /// the graph instantiated. Launches queued before the update still run with the earlier
    /// parameters (CUDA's rule): what they use (an earlier graph's host functions and
    /// buffers, what setters had set) is released only once they have completed, which a
    /// later update or setter checks without waiting (it waits for the exec's last launch
    /// only when more than 16 replaced sets are pending) and the exec's drop waits for.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{Graph, HostLaunch, UpdateRefusal};
    /// use cuda_graph::{CudaError, DeviceBuffer};
    /// let data = DeviceBuffer::<u32>::zeroed(16)?;
    /// let build = |value: u32| -> cuda_graph::Result<Graph> {
    ///     let graph = Graph::new()?;
    ///     graph.add_memset(&data.ptr(), value, 16, &[])?;
    ///     Ok(graph)
    /// };
    /// let mut exec = build(1)?.instantiate::<HostLaunch>(Default::default())?;
    /// exec.update(&build(2)?)?; // same shape, new value
    /// let bigger = build(3)?;
    /// bigger.add_empty(&[])?;
    /// match exec.update(&bigger) {
    ///     Err(CudaError::UpdateRefused { reason: UpdateRefusal::TopologyChanged, node }) => {
    ///         println!("refused at {node:?}"); // the node CUDA named, e.g. "node 1 (empty)"
    ///     }
    ///     other => panic!("{other:?}"),
    /// }
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    ///
    /// A device-launch exec ([`DeviceLaunch`](super::DeviceLaunch)) first waits for its last
    /// host launch, which may still relaunch it from the device (CUDA leaves changing an exec
    /// the device may be launching undefined); so do its per-node setters and
    /// [`set_node_enabled`](Self::set_node_enabled). Host-launch execs change at once.
    ///
    /// Refused, naming both devices, for a graph of another device than the exec's; and for a
    /// graph that made a conditional handle no conditional node of it tests (which CUDA would
    /// not instantiate, and whose kernels could set a condition the exec does not have). A
    /// graph rebuilt the same way, its handles made in the same order, updates an exec with
    /// conditional nodes; CUDA refuses one whose conditional nodes test other handles.
    pub fn update(&mut self, graph: &Graph) -> Result<()> {
        let device = self.source.device();
        graph.expect_device(device, "GraphExec::update", "the exec")?;
        self.wait_before_change("GraphExec::update")?;
        let mut info = sys::cudaGraphExecUpdateResultInfo::default();
        // The exec's device made current by asking CUDA (`with_current`), not from the
        // remembered device: other code may have switched devices, and the update binds the
        // kernel nodes' functions in the primary context of the device current for the call.
        let status = device.with_current(|| {
            graph.core().locked("GraphExec::update", |state| {
                super::exec::refuse_pinned_for_device_launch::<M>(state, "GraphExec::update")?;
                super::conditional::refuse_untested_handles("GraphExec::update", state)?;
                // Before any node may use what needs it, so that no launch goes unfenced.
                self.ensure_fence(state.execs_need_fence(device))?;
                // SAFETY: exec and graph are alive, the graph's family locked; `info` is writable.
                // `with_current` made the exec's device's primary context current.
                let status = unsafe { sys::bound::cudaGraphExecUpdate(self.raw, graph.as_raw(), &mut info) };
                // Named while the nodes CUDA points at are surely still the graph's.
                Ok((status, (status != sys::cudaError::cudaSuccess).then(|| name_error_node(graph, &info))))
            })
        })?;
        let (status, node) = status;
        // Even a refused update may have changed some nodes: keep what they may point at.
        if !self.params_from.iter().any(|core| core.id() == graph.core().id()) {
            self.params_from.push(graph.core().clone());
        }
        if status == sys::cudaError::cudaSuccess {
            // Every later launch uses `graph`'s parameters, but launches queued before still
            // use the others: retire them until those launches completed (see `retired`).
            for (_, keep) in self.overrides.drain() {
                self.retired.push_overrides(keep);
            }
            let (source, updated) = (self.source.id(), graph.core().id());
            let retired = &mut self.retired;
            self.params_from.retain(|core| {
                let kept = core.id() == source || core.id() == updated;
                if !kept {
                    retired.push_graph(core.clone());
                }
                kept
            });
        }
        self.release_retired();
        self.refresh_pinned();
        if status == sys::cudaError::cudaSuccess {
            return Ok(());
        }
        match UpdateRefusal::from_raw(info.result) {
            Some(reason) => Err(CudaError::UpdateRefused { reason, node: node.flatten() }),
            None => check(status, "cudaGraphExecUpdate"),
        }
    }

    /// Refuses nodes that are not of the graph this exec was instantiated from.
    pub(super) fn own_node(&self, call: &'static str, node: &dyn AsNode) -> Result<NodeRef> {
        let node = node.as_node();
        if node.root_id() == self.source.id() {
            Ok(node)
        } else {
            Err(CudaError::refused(
                call,
                NodeRefusal::NotOfExecGraph { node_graph: node.root_id(), exec_graph: self.source.id() },
            ))
        }
    }

    /// Runs `f` with the handle CUDA knows `node` (a node of the source graph) by in this
    /// exec, under the lock of every family whose nodes are involved: the source's, and for
    /// a reused exec the origin's (see `NodeAlias`).
    fn with_exec_node<R>(
        &self, call: &'static str, node: NodeRef, f: impl FnOnce(sys::cudaGraphNode_t) -> Result<R>,
    ) -> Result<R> {
        let Some(alias) = &self.alias else {
            return self.source.locked(call, |state| f(state.live(call, &[node])?[0]));
        };
        let origin_node = alias
            .origin_node(node.as_raw())
            .ok_or_else(|| CudaError::refused(call, NodeRefusal::AddedAfterInstantiation))?;
        let origin = alias.origin.graph();
        loop {
            let source_state = self.source.acquire(call)?;
            source_state.live(call, &[node])?;
            if let Some(_origin_state) = origin.try_acquire_idle() {
                return f(origin_node);
            }
            // Never hold one family while waiting for the other (a capture into it on
            // another thread may need the first): wait for the origin with nothing held.
            drop(source_state);
            drop(origin.acquire(call)?);
        }
    }

    /// Runs `f` (a CUDA call on this exec's node) under the families' locks, then keeps
    /// `keep` for `node` in place of what its earlier parameters needed, which is retired
    /// until the launches queued before (which still use it) completed. `fence`: what `keep`
    /// holds needs the launch fence whatever it is (host functions, events).
    pub(super) fn set_node(
        &mut self, call: &'static str, node: NodeRef, keep: Vec<KeepAlive>, fence: bool,
        f: impl FnOnce(sys::cudaGraphExec_t, sys::cudaGraphNode_t) -> Result<()>,
    ) -> Result<()> {
        let device = self.source.device();
        crate::memory::check_owners_on(&keep, device, call)?;
        self.wait_before_change(call)?;
        let foreign = crate::memory::any_foreign(&keep, device);
        self.ensure_fence(fence || foreign || keep.iter().any(crate::memory::free_is_queued))?;
        let raw = self.raw;
        if let Err(err) =
            device.with_current(|| self.with_exec_node(call, node, |exec_node| f(raw, exec_node)))
        {
            // A refused set may still have changed part of the node (a child graph's nodes):
            // keep what it may point at beside what the node kept before.
            self.overrides.entry(node).or_default().extend(keep);
            return Err(err);
        }
        if let Some(replaced) = self.overrides.insert(node, keep) {
            self.retired.push_overrides(replaced);
        }
        self.release_retired();
        self.refresh_pinned();
        Ok(())
    }

    /// Turns a node on or off in this exec (`cudaGraphNodeSetEnabled`): a disabled node does
    /// nothing when launched, as if empty. CUDA supports kernel, memcpy and memset nodes.
    ///
    /// ```no_run
    /// # fn f(exec: &mut cuda_graph::graph::GraphExec<cuda_graph::graph::HostLaunch>, node: cuda_graph::graph::KernelNode) -> cuda_graph::Result<()> {
    /// exec.set_node_enabled(&node, false)?;
    /// assert!(!exec.node_enabled(&node)?);
    /// # Ok(()) }
    /// ```
    pub fn set_node_enabled(&mut self, node: &dyn AsNode, enabled: bool) -> Result<()> {
        const CALL: &str = "GraphExec::set_node_enabled";
        let node = self.own_node(CALL, node)?;
        self.wait_before_change(CALL)?;
        let raw = self.raw;
        self.with_exec_node(CALL, node, |exec_node| {
            // SAFETY: exec alive; `exec_node` names a node of it (checked, kept, locked).
            check(
                unsafe { sys::cudaGraphNodeSetEnabled(raw, exec_node, enabled as u32) },
                "cudaGraphNodeSetEnabled",
            )
        })?;
        if !enabled {
            self.note_node_disabled();
        }
        Ok(())
    }

    /// Whether a node is enabled in this exec (`cudaGraphNodeGetEnabled`).
    ///
    /// ```no_run
    /// # fn f(exec: &cuda_graph::graph::GraphExec<cuda_graph::graph::HostLaunch>, node: cuda_graph::graph::KernelNode) -> cuda_graph::Result<()> {
    /// assert!(exec.node_enabled(&node)?);
    /// # Ok(()) }
    /// ```
    pub fn node_enabled(&self, node: &dyn AsNode) -> Result<bool> {
        const CALL: &str = "GraphExec::node_enabled";
        let node = self.own_node(CALL, node)?;
        self.with_exec_node(CALL, node, |exec_node| {
            let mut enabled = 0;
            check(
                // SAFETY: exec alive; `exec_node` names a node of it; `enabled` writable.
                unsafe { sys::cudaGraphNodeGetEnabled(self.raw, exec_node, &mut enabled) },
                "cudaGraphNodeGetEnabled",
            )?;
            Ok(enabled != 0)
        })
    }
}

/// Names the node (or edge) CUDA's update result points at, as `graph.nodes()` lists it; the
/// caller holds `graph`'s family, and `info` came from an update from it just now.
fn name_error_node(graph: &Graph, info: &sys::cudaGraphExecUpdateResultInfo) -> Option<String> {
    if info.errorNode.is_null() {
        return None;
    }
    let (status, nodes) = super::list_nodes(graph.as_raw());
    let name = |raw: sys::cudaGraphNode_t| -> String {
        let position = nodes.iter().position(|&node| node == raw);
        let info = position.map(|index| super::NodeInfo::query(graph.node_ref(raw), index));
        match (status, info) {
            (sys::cudaError::cudaSuccess, Some(Ok(info))) => info.to_string(),
            // Not a node of the graph itself (one inside a conditional body): its kind.
            _ => match super::node::kind_of(raw) {
                Ok(kind) => format!("a {kind} node inside a conditional body"),
                Err(_) => "a node CUDA named but could not describe".to_string(),
            },
        }
    };
    Some(match info.errorFromNode.is_null() {
        true => name(info.errorNode),
        false => format!("the edge from {} to {}", name(info.errorFromNode), name(info.errorNode)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sys::cudaGraphExecUpdateResult as R;

    #[test]
    fn success_is_no_refusal_and_each_code_maps() {
        assert_eq!(UpdateRefusal::from_raw(R::cudaGraphExecUpdateSuccess), None);
        assert_eq!(
            UpdateRefusal::from_raw(R::cudaGraphExecUpdateErrorTopologyChanged),
            Some(UpdateRefusal::TopologyChanged)
        );
        assert_eq!(UpdateRefusal::from_raw(R(999)), Some(UpdateRefusal::Unknown(999)));
    }
}
