//! One home per node kind. Each kind's file says, for its kind: how a node is added, how one
//! is set on an exec, how one is read back, and what CUDA allows of it (in a graph launched
//! from the device, in a conditional body, removal). Each kind registers itself with one line
//! in the [`node_kinds!`] list below, which makes [`NodeKind`] and its accessors.
//!
//! The model is cuda-api-wrappers' `kind_traits<kind_t::X>`: one specialization per kind, here
//! one [`Kind`] implementation per file, and one generic path for what every kind does:
//! - adding: [`GraphBuilder::add_params`] (and [`GraphBuilder::insert_params`] for kernel nodes
//!   with edge data and attributes), for every [`NodeParams`];
//! - setting on an exec: [`GraphExec::set_params`], for the same [`NodeParams`], whose
//!   [`set`](NodeParams::set) is CUDA's generic exec setter unless the kind has a typed one;
//! - reading back: `View::read` (for [`GraphBuilder`] and [`ChildGraph`](crate::graph::ChildGraph)
//!   alike, through `node_readers!`), for every [`ReadNode`].
//!
//! Two kinds keep a path of their own, each in its file: a child graph is added under the lock
//! of both families (`child_graph`), and a conditional node, which makes bodies, lives in
//! `graph::conditional`, registered the same way.
//!
//! # Adding a kind
//! A new file here with its `Kind` implementation (and, as the kind has them, its node handle,
//! its `NodeParams` and `ReadNode` types and its public `add_*` / `set_*` / reader calls), and
//! its line in `node_kinds!`. Device-launch's validation reads [`NodeKind::device_launch`].
//!
//! `node_kinds!` declares the kinds' modules, where `cargo fmt` does not look: format them
//! with `rustfmt --edition 2021 cuda-graph/src/graph/nodes/*.rs` (CI checks it).

use crate::runtime as sys;

use super::node::raw_deps;
use super::{AsNode, GraphBuilder, GraphExec, LaunchMode, NodeRef};
use crate::error::refusal::{Bounds, DevicePair, Empty, Overflow, Unremovable};
use crate::error::{check, CudaError, Refusal, Result};
use crate::memory::KeepAlive;

/// What CUDA allows of one node kind, as data: one implementation per kind, registered in
/// `node_kinds!` and read through [`NodeKind`]'s accessors.
pub(crate) trait Kind {
    /// The kind's `cudaGraphNodeType` (`CUgraphNodeType`) value.
    const CODE: u32;
    /// Its name, as [`NodeKind`] displays it.
    const NAME: &'static str;
    /// Whether a graph launched from the device may hold it (CUDA 13.0).
    const DEVICE_LAUNCH: DeviceLaunchRule;
    /// Whether a conditional body may hold it (CUDA 13.0, `cudaConditionalNodeParams`: kernel,
    /// empty, child graph, memset, memcpy and conditional nodes).
    const IN_CONDITIONAL_BODY: bool;
    /// Why a node of this kind may not be removed from its graph, if it may not (see `edit`).
    const NOT_REMOVABLE: Option<Unremovable> = None;
}

/// Whether CUDA lets a graph launched from the device (instantiated with
/// `cudaGraphInstantiateFlagDeviceLaunch`) hold nodes of a kind: see [`NodeKind::device_launch`].
///
/// ```
/// use cuda_graph::graph::{DeviceLaunchRule, NodeKind};
/// assert_eq!(NodeKind::Kernel.device_launch(), DeviceLaunchRule::Allowed);
/// assert!(matches!(NodeKind::Host.device_launch(), DeviceLaunchRule::Refused(_)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeviceLaunchRule {
    /// CUDA allows it (CUDA 13.0: kernel, memcpy, memset and child graph nodes).
    Allowed,
    /// CUDA refuses it; the reason, measured where measured, documented otherwise.
    Refused(&'static str),
}

/// Makes [`NodeKind`] from the registered kinds: `Variant => module::Spec` under `here` for a kind whose
/// file is in this folder (the module is declared and its public items re-exported), and
/// `Variant => path::Spec` under `elsewhere` for one that lives in a module of its own.
macro_rules! node_kinds {
    (
        here { $($(#[$doc:meta])* $variant:ident => $module:ident::$spec:ident,)* }
        elsewhere { $($(#[$edoc:meta])* $evariant:ident => $espec:ty,)* }
    ) => {
        $(
            mod $module;
            #[allow(unused_imports)] // a kind may have no public items (external semaphores)
            pub use $module::*;
        )*

        /// The kind of a node (`cudaGraphNodeType`; batch memory operations have only the
        /// driver's `CU_GRAPH_NODE_TYPE_BATCH_MEM_OP`).
        ///
        /// ```
        /// use cuda_graph::graph::NodeKind;
        /// assert_eq!(NodeKind::Host.to_string(), "host");
        /// assert_eq!(NodeKind::from_raw(cuda_graph::sys::cudaGraphNodeType(0)), NodeKind::Kernel);
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum NodeKind {
            $($(#[$doc])* $variant,)*
            $($(#[$edoc])* $evariant,)*
            /// A kind this crate does not know.
            Unknown(u32),
        }

        impl NodeKind {
            /// Maps `cudaGraphNodeType`.
            pub fn from_raw(raw: sys::cudaGraphNodeType) -> NodeKind {
                $(if raw.0 == <$module::$spec as Kind>::CODE {
                    return NodeKind::$variant;
                })*
                $(if raw.0 == <$espec as Kind>::CODE {
                    return NodeKind::$evariant;
                })*
                NodeKind::Unknown(raw.0)
            }

            /// The registered rules of this kind, `None` for an unknown one.
            fn rules(self) -> Option<Rules> {
                match self {
                    $(NodeKind::$variant => Some(Rules::of::<$module::$spec>()),)*
                    $(NodeKind::$evariant => Some(Rules::of::<$espec>()),)*
                    NodeKind::Unknown(_) => None,
                }
            }
        }
    };
}

node_kinds! {
    here {
    /// A kernel launch.
    Kernel => kernel::KernelSpec,
    /// A memory copy.
    Memcpy => memcpy::MemcpySpec,
    /// A memset.
    Memset => memset::MemsetSpec,
    /// A host function.
    Host => host::HostSpec,
    /// A child graph.
    ChildGraph => child_graph::ChildGraphSpec,
    /// An empty node.
    Empty => empty::EmptySpec,
    /// Waits for an event.
    EventWait => event_wait::EventWaitSpec,
    /// Records an event.
    EventRecord => event_record::EventRecordSpec,
    /// Signals external semaphores.
    ExternalSemaphoreSignal => semaphore_signal::SemaphoreSignalSpec,
    /// Waits on external semaphores.
    ExternalSemaphoreWait => semaphore_wait::SemaphoreWaitSpec,
    /// Allocates graph memory.
    MemAlloc => mem_alloc::MemAllocSpec,
    /// Frees graph memory.
    MemFree => mem_free::MemFreeSpec,
    /// Writes or waits for values in device memory (batch memory operations).
    BatchMemOp => batch_mem_op::BatchMemOpSpec,
    }
    elsewhere {
    /// A conditional node (IF, IF/ELSE, WHILE or SWITCH).
    Conditional => super::conditional::ConditionalSpec,
    }
}

/// One kind's [`Kind`] constants, as values.
struct Rules {
    name: &'static str,
    device_launch: DeviceLaunchRule,
    in_conditional_body: bool,
    not_removable: Option<Unremovable>,
}

impl Rules {
    fn of<K: Kind>() -> Rules {
        Rules {
            name: K::NAME,
            device_launch: K::DEVICE_LAUNCH,
            in_conditional_body: K::IN_CONDITIONAL_BODY,
            not_removable: K::NOT_REMOVABLE,
        }
    }
}

impl NodeKind {
    /// Maps a `cudaGraphNodeType` value given as a number.
    ///
    /// ```
    /// use cuda_graph::graph::NodeKind;
    /// assert_eq!(NodeKind::from_code(4), NodeKind::ChildGraph);
    /// ```
    pub fn from_code(code: u32) -> NodeKind {
        NodeKind::from_raw(sys::cudaGraphNodeType(code))
    }

    /// Whether a graph launched from the device may hold nodes of this kind, by CUDA 13.0's
    /// rules (measured where the reason says so): kernel, memcpy, memset and child graph nodes
    /// are allowed, every other kind is refused with its reason, and so is a kind this crate
    /// does not know. A caller may refuse more (device-launch checks inside child graphs, and
    /// the sides of each copy).
    ///
    /// ```
    /// use cuda_graph::graph::{DeviceLaunchRule, NodeKind};
    /// let allowed: Vec<NodeKind> = (0..16)
    ///     .map(NodeKind::from_code)
    ///     .filter(|kind| kind.device_launch() == DeviceLaunchRule::Allowed)
    ///     .collect();
    /// assert_eq!(allowed, [NodeKind::Kernel, NodeKind::Memcpy, NodeKind::Memset, NodeKind::ChildGraph]);
    /// ```
    pub fn device_launch(self) -> DeviceLaunchRule {
        self.rules().map_or(
            DeviceLaunchRule::Refused("a node kind this crate does not know, so it cannot vouch for it"),
            |rules| rules.device_launch,
        )
    }

    /// Whether a conditional body may hold nodes of this kind (CUDA 13.0: kernel, empty, child
    /// graph, memset, memcpy and conditional nodes; CUDA refuses the others when they are
    /// added). `false` for a kind this crate does not know.
    ///
    /// ```
    /// use cuda_graph::graph::NodeKind;
    /// assert!(NodeKind::Conditional.allowed_in_conditional_body());
    /// assert!(!NodeKind::Host.allowed_in_conditional_body());
    /// ```
    pub fn allowed_in_conditional_body(self) -> bool {
        self.rules().is_some_and(|rules| rules.in_conditional_body)
    }

    /// Why a node of this kind may not be removed from its graph, if it may not.
    pub(crate) fn removal_refusal(self) -> Option<Unremovable> {
        self.rules().and_then(|rules| rules.not_removable)
    }
}

impl std::fmt::Display for NodeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self, self.rules()) {
            (_, Some(rules)) => f.write_str(rules.name),
            (NodeKind::Unknown(code), None) => write!(f, "unknown ({code})"),
            (other, None) => write!(f, "{other:?}"),
        }
    }
}

/// Generic node parameters for a node of `type_`, zeroed but for the type: the caller fills
/// that type's member of the union.
pub(crate) fn node_params_of(type_: sys::cudaGraphNodeType) -> sys::cudaGraphNodeParams {
    sys::cudaGraphNodeParams { type_, ..Default::default() }
}

/// Generic node parameters of kind `K`, zeroed but for the type.
pub(crate) fn params_of<K: Kind>() -> sys::cudaGraphNodeParams {
    node_params_of(sys::cudaGraphNodeType(K::CODE))
}

/// CUDA's generic-node form of a classic parameter struct (`cudaKernelNodeParams` as
/// `cudaKernelNodeParamsV2`, say), or back: the same fields, copied by name.
macro_rules! copy_fields {
    ($from:expr => $to:path { $($field:ident),* }) => {{
        let from = $from;
        $to { $($field: from.$field),* }
    }};
}
use copy_fields;

/// Checked parameters of one node kind: how they are handed to CUDA, to add a node
/// ([`GraphBuilder::add_params`]) or to set one on an exec ([`GraphExec::set_params`]), and
/// what they keep alive.
///
/// # Safety
/// [`with_raw`](Self::with_raw) hands its closure generic parameters of `Kind`'s node type whose
/// pointers reach only memory the `Vec<KeepAlive>` handed along owns, or values CUDA copies
/// during the call; [`set`](Self::set) sets a node of that kind from such parameters.
pub(crate) unsafe trait NodeParams: Sized {
    /// The kind of the nodes these parameters are for.
    type Kind: Kind;
    /// The typed handle of such a node.
    type Node: AsNode;
    /// Whether the node calls a host function (its graph's execs then wait for their last
    /// launch before releasing what it keeps).
    const HOST_WORK: bool = false;

    /// Hands `f` the generic parameters and what they point at, alive for the call.
    fn with_raw<R>(
        self, f: impl FnOnce(&mut sys::cudaGraphNodeParams, Vec<KeepAlive>) -> Result<R>,
    ) -> Result<R>;

    /// The handle of `node`, just added with `raw` (which CUDA may have written to: an
    /// allocation's address, say).
    fn node(node: NodeRef, raw: &sys::cudaGraphNodeParams) -> Self::Node;

    /// Whether an exec these parameters are set on needs the launch fence, whatever they keep
    /// (host functions, events).
    fn fence(&self) -> bool {
        false
    }

    /// Adds the node `raw` (made by `with_raw`) describes to `graph` after `deps`, with `edges`
    /// (null, or one entry per dependency), and returns it: CUDA's generic call
    /// (`cudaGraphAddNode`) unless the kind has one of its own.
    ///
    /// # Safety
    /// `graph` is alive and locked by the caller, its device current; `deps` are live nodes of
    /// it; what `raw` points at is alive for the call.
    unsafe fn add(
        graph: sys::cudaGraph_t, deps: &[sys::cudaGraphNode_t], edges: *const sys::cudaGraphEdgeData,
        raw: &mut sys::cudaGraphNodeParams,
    ) -> Result<sys::cudaGraphNode_t> {
        let mut node = std::ptr::null_mut();
        check(
            // SAFETY: the caller's promise: graph alive and locked, `deps` live nodes of it,
            // `edges` null or one per dependency, what `raw` points at alive.
            unsafe { sys::cudaGraphAddNode(&mut node, graph, deps.as_ptr(), edges, deps.len(), raw) },
            "cudaGraphAddNode",
        )?;
        Ok(node)
    }

    /// Sets `raw` (made by `with_raw`) on `exec_node` of `exec`: CUDA's generic call
    /// (`cudaGraphExecNodeSetParams`) unless the kind has a typed one.
    ///
    /// # Safety
    /// `exec` is alive and `exec_node` is a node of it of this kind, held by the caller (its
    /// graph checked by id and epoch, locked); what `raw` points at is kept alive by the exec
    /// from the call on.
    unsafe fn set(
        exec: sys::cudaGraphExec_t, exec_node: sys::cudaGraphNode_t, raw: &mut sys::cudaGraphNodeParams,
    ) -> Result<()> {
        // SAFETY: the caller's promise: exec alive, `exec_node` of it and of `raw`'s kind,
        // what `raw` points at kept.
        check(unsafe { sys::cudaGraphExecNodeSetParams(exec, exec_node, raw) }, "cudaGraphExecNodeSetParams")
    }
}

impl GraphBuilder {
    /// Adds a node described by `params` after `deps` (`cudaGraphAddNode`), keeping `keep`
    /// alive with the family. `params` must point only at memory `keep` owns (or CUDA copies).
    pub(crate) fn add_node(
        &self, call: &'static str, params: &mut sys::cudaGraphNodeParams, keep: Vec<KeepAlive>,
        deps: &[&dyn AsNode],
    ) -> Result<NodeRef> {
        let deps = raw_deps(call, self.id, deps)?;
        self.insert_node(call, params, keep, false, &deps, None, |_| Ok(()))
    }

    /// The generic add: a node of `params`' kind after `deps`, keeping what they point at.
    pub(crate) fn add_params<P: NodeParams>(
        &self, call: &'static str, params: P, deps: &[&dyn AsNode],
    ) -> Result<P::Node> {
        let deps = raw_deps(call, self.id, deps)?;
        self.insert_params(call, params, &deps, None, |_| Ok(()))
    }

    /// [`add_params`](Self::add_params) after the raw `deps` (nodes of this graph, checked by
    /// the caller) with `edges` and `finish`, as [`insert_node`](Self::insert_node) takes them.
    pub(crate) fn insert_params<P: NodeParams>(
        &self, call: &'static str, params: P, deps: &[NodeRef], edges: Option<&[sys::cudaGraphEdgeData]>,
        finish: impl FnOnce(sys::cudaGraphNode_t) -> Result<()>,
    ) -> Result<P::Node> {
        params.with_raw(|raw, keep| {
            let node =
                self.insert_with(call, keep, P::HOST_WORK, deps, edges, finish, |graph, deps, edges| {
                    // SAFETY: `insert_with` passes this locked graph (its device current), live
                    // dependencies and null or one edge per dependency; `raw` came from `with_raw`,
                    // what it points at alive for the call (`NodeParams`' promise).
                    unsafe { P::add(graph, deps, edges, raw) }
                })?;
            Ok(P::node(node, raw))
        })
    }

    /// Adds a node described by the generic `params` after the raw `deps` (nodes of this graph,
    /// checked by the caller), with `edges` (one per dependency; plain edges when `None`), then
    /// runs `finish` on it (see [`insert_with`](Self::insert_with)). `params` must point only at
    /// memory `keep` owns (or CUDA copies).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn insert_node(
        &self, call: &'static str, params: &mut sys::cudaGraphNodeParams, keep: Vec<KeepAlive>,
        host_work: bool, deps: &[NodeRef], edges: Option<&[sys::cudaGraphEdgeData]>,
        finish: impl FnOnce(sys::cudaGraphNode_t) -> Result<()>,
    ) -> Result<NodeRef> {
        self.insert_with(call, keep, host_work, deps, edges, finish, |graph, deps, edges| {
            let mut node = std::ptr::null_mut();
            check(
                // SAFETY: the graph is alive (the family owns it) and locked; `deps` are live
                // nodes of this graph (checked by id and epoch) and `edges` is null or one entry
                // per dependency. Every caller passes `params` zero-initialised but for its node
                // type's fields, whose pointers reach memory that `keep` (kept with the family)
                // owns or values CUDA copies during the call.
                unsafe { sys::cudaGraphAddNode(&mut node, graph, deps.as_ptr(), edges, deps.len(), params) },
                "cudaGraphAddNode",
            )?;
            Ok(node)
        })
    }

    /// Adds a node with `add` (given this graph, the live raw `deps` and the edge data: null,
    /// or one entry per dependency when `edges` is given) under the family's lock, with the
    /// graph's device current, then runs `finish` on it under the same lock (setting
    /// attributes, say): if `finish` fails, the node is removed again and nothing is kept.
    /// Otherwise `keep` is kept with the family.
    #[allow(clippy::too_many_arguments)]
    fn insert_with(
        &self, call: &'static str, keep: Vec<KeepAlive>, host_work: bool, deps: &[NodeRef],
        edges: Option<&[sys::cudaGraphEdgeData]>, finish: impl FnOnce(sys::cudaGraphNode_t) -> Result<()>,
        add: impl FnOnce(
            sys::cudaGraph_t,
            &[sys::cudaGraphNode_t],
            *const sys::cudaGraphEdgeData,
        ) -> Result<sys::cudaGraphNode_t>,
    ) -> Result<NodeRef> {
        debug_assert!(edges.is_none_or(|edges| edges.len() == deps.len()));
        let edge_data = edges.map_or(std::ptr::null(), <[_]>::as_ptr);
        // Kernel nodes take the function of the current device: the graph's.
        let _on_device = crate::device::CurrentFor::new(self.core.device())?;
        self.core.locked(call, |state| {
            let deps = state.live(call, deps)?;
            let node = add(self.raw, &deps, edge_data)?;
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
}

impl<M: LaunchMode> GraphExec<M> {
    /// The generic set: the parameters `build` makes on `node` of this exec, keeping what
    /// they point at for the node and retiring what it kept before (see `set_node`). `node`
    /// is checked to be of this exec's graph before `build` runs.
    pub(crate) fn set_params<P: NodeParams>(
        &mut self, call: &'static str, node: &P::Node, build: impl FnOnce() -> Result<P>,
    ) -> Result<()> {
        let node = self.own_node(call, node)?;
        self.set_checked(call, node, build()?)
    }

    /// [`set_params`](Self::set_params) for `node`, already checked to be of this exec's graph.
    pub(crate) fn set_checked<P: NodeParams>(
        &mut self, call: &'static str, node: NodeRef, params: P,
    ) -> Result<()> {
        let fence = params.fence();
        params.with_raw(|raw, keep| {
            self.set_node(call, node, keep, fence, |exec, exec_node| {
                // SAFETY: exec alive; `exec_node` names a node of it (its source graph's node
                // checked by id and epoch, locked, translated for a reused exec) of `P`'s kind
                // (the typed handle says so); what `raw` points at is in `keep`, which the exec
                // keeps from now on (`NodeParams`' promise).
                unsafe { P::set(exec, exec_node, raw) }
            })
        })
    }
}

/// One kind's parameters as read back from a node: what `View::read` gives.
pub(in crate::graph) trait ReadNode<'a>: Sized {
    /// The kind of the nodes read.
    type Kind: Kind;

    /// Reads `node`, a live node of this kind of `view`'s family, whose lock (`state`) the
    /// caller holds; `call` is the public call, which errors name.
    fn read(
        view: &super::inspect::View<'a>, state: &super::CoreState, call: &'static str,
        node: sys::cudaGraphNode_t,
    ) -> Result<Self>;
}

/// `count` elements of `size` bytes, checked against what both sides hold.
pub(crate) fn checked_bytes(
    call: &'static str, count: usize, size: usize, room: &[(&'static str, usize)],
) -> Result<usize> {
    if count == 0 {
        return Err(CudaError::refused(call, Empty::Elements));
    }
    for &(side, len) in room {
        if count > len {
            return Err(CudaError::refused(call, Bounds::Elements { count, side, len }));
        }
    }
    count
        .checked_mul(size)
        .ok_or_else(|| CudaError::refused(call, Overflow::Elements { len: count, element_bytes: size }))
}

/// Refuses a resource of another device than the exec's, naming both.
pub(super) fn expect_same_device(
    call: &'static str, exec: crate::Device, other: crate::Device,
) -> Result<()> {
    if exec == other {
        return Ok(());
    }
    let (first, second) = (exec.ordinal(), other.ordinal());
    Err(CudaError::refused(call, Refusal::DevicesDiffer { pair: DevicePair::ExecAndArgument, first, second }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_maps_and_prints() {
        for raw in 0..16u32 {
            let kind = NodeKind::from_raw(sys::cudaGraphNodeType(raw));
            assert!(!kind.to_string().is_empty());
            assert_eq!(NodeKind::from_code(raw), kind);
        }
        assert_eq!(NodeKind::from_raw(sys::cudaGraphNodeType(13)), NodeKind::Conditional);
        assert_eq!(NodeKind::from_raw(sys::cudaGraphNodeType(14)), NodeKind::Unknown(14));
        assert_eq!(NodeKind::Unknown(99).to_string(), "unknown (99)");
    }

    #[test]
    fn each_code_names_one_kind() {
        let known: Vec<u32> =
            (0..64).filter(|&code| NodeKind::from_code(code) != NodeKind::Unknown(code)).collect();
        let names: std::collections::HashSet<String> =
            known.iter().map(|&code| NodeKind::from_code(code).to_string()).collect();
        assert_eq!(names.len(), known.len(), "two codes print the same name");
    }

    #[test]
    fn the_rules_are_cudas() {
        let in_bodies: Vec<NodeKind> =
            (0..16).map(NodeKind::from_code).filter(|kind| kind.allowed_in_conditional_body()).collect();
        use NodeKind::*;
        assert_eq!(in_bodies, [Kernel, Memcpy, Memset, ChildGraph, Empty, Conditional]);
        let not_removable: Vec<NodeKind> =
            (0..16).map(NodeKind::from_code).filter(|kind| kind.removal_refusal().is_some()).collect();
        assert_eq!(not_removable, [MemAlloc, MemFree, Conditional]);
        let DeviceLaunchRule::Refused(reason) = Unknown(77).device_launch() else {
            panic!("an unknown kind is allowed in device-launched graphs");
        };
        assert!(reason.contains("does not know"), "{reason}");
    }
}
