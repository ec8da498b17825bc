//! Conditional nodes: IF, IF/ELSE, WHILE and SWITCH, whose bodies are graphs built with the
//! same calls as any other, nested to any depth.

use crate::runtime as sys;

use std::sync::Arc;

use super::inspect::{node_readers, View};
use super::nodes::{node_params_of, DeviceLaunchRule, Kind, ReadNode};
use super::{AsNode, ChildGraph, CoreState, GraphBuilder, GraphCore, NodeRef};
use crate::error::refusal::{ConditionalRefusal, NodeRefusal, Unremovable};
use crate::error::{check, CudaError, Result};
use crate::kernel::KernelParam;

/// The value a conditional node tests (`cudaGraphConditionalHandle`), created by
/// [`GraphBuilder::conditional_handle`]. Kernels set it with `cudaGraphSetConditional(handle,
/// value)`; it is a kernel argument of type `cudaGraphConditionalHandle` (a 64-bit integer),
/// which this type is.
///
/// A handle is tied to the graph that created it: it may serve conditional nodes of that
/// graph and of the bodies nested inside it, and be given to kernel nodes there (or to
/// kernels captured there with
/// [`Stream::begin_capture_to_graph`](crate::Stream::begin_capture_to_graph)). Anywhere else
/// (a kernel node of another graph, a plain stream launch) it is refused with an error naming
/// both graphs: CUDA leaves `cudaGraphSetConditional` from outside the handle's graph
/// undefined. The raw value is therefore not handed out by safe code
/// ([`as_raw`](ConditionalHandle::as_raw) is `unsafe`; the kernel argument is opaque).
///
/// ```no_run
/// use cuda_graph::graph::{ConditionalHandle, Graph};
/// use cuda_graph::kernel::{Kernel, LaunchConfig};
/// use cuda_graph::DevicePtr;
/// // extern "C" __global__ void set_from(cudaGraphConditionalHandle h, const unsigned* v)
/// fn build(set_from: &Kernel<(ConditionalHandle, DevicePtr<u32>)>, value: DevicePtr<u32>) -> cuda_graph::Result<Graph> {
///     let graph = Graph::new()?;
///     let handle = graph.conditional_handle(None)?;
///     let set = graph.add_kernel(set_from, LaunchConfig::new(1, 1), (handle, value), &[])?;
///     let (_node, body) = graph.add_if(&handle, &[&set])?;
///     body.add_empty(&[])?;
///     Ok(graph)
/// }
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConditionalHandle {
    raw: sys::cudaGraphConditionalHandle,
    graph: u64,
    default: Option<u32>,
}

impl std::fmt::Debug for ConditionalHandle {
    /// The graph and default value; not the raw handle (see [`ConditionalHandle::as_raw`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConditionalHandle")
            .field("graph", &self.graph)
            .field("default", &self.default)
            .finish()
    }
}

impl ConditionalHandle {
    /// The raw handle, as kernels receive it, for calls and kernels this crate does not
    /// check (a kernel declared with a `u64` parameter, say).
    ///
    /// # Safety
    /// The value must reach only code that sets the condition from a kernel of the graph
    /// that created this handle (a node of it or of a body inside it, at any depth), and
    /// only while an exec of that graph runs: no other kernel, stream launch or graph may
    /// call `cudaGraphSetConditional` with it (CUDA leaves that undefined, and concurrent
    /// launches of other execs would race on it).
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let handle = graph.conditional_handle(Some(1))?;
    /// // SAFETY: the value is only printed, never given to a kernel.
    /// println!("{:#x}", unsafe { handle.as_raw() });
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn as_raw(&self) -> u64 {
        self.raw
    }

    /// The value assigned at the start of every launch, if one was given
    /// ([`GraphBuilder::conditional_handle`]'s `default_value`).
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// assert_eq!(graph.conditional_handle(Some(4))?.default_value(), Some(4));
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn default_value(&self) -> Option<u32> {
        self.default
    }
}

/// A [`ConditionalHandle`] as a kernel receives it (`cudaGraphConditionalHandle`, an
/// `unsigned long long`): opaque, so that [`KernelParam::raw`] hands out no usable value.
///
/// ```
/// assert_eq!(std::mem::size_of::<cuda_graph::graph::RawConditionalHandle>(), 8);
/// ```
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct RawConditionalHandle(u64);

impl std::fmt::Debug for RawConditionalHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RawConditionalHandle(..)")
    }
}

// SAFETY: `cudaGraphConditionalHandle` is `unsigned long long`, passed by value: the raw form
// is a transparent u64. The handle's graph is reported, so kernel nodes and launches outside
// it are refused (`check_node_handles`, `check_launch_handles`).
unsafe impl KernelParam for ConditionalHandle {
    type Raw = RawConditionalHandle;
    fn raw(&self) -> RawConditionalHandle {
        RawConditionalHandle(self.raw)
    }
    fn cpp_type() -> String {
        "u64".to_string()
    }
    const IS_CONDITIONAL_HANDLE: bool = true;
    fn conditional_graph(&self) -> Option<u64> {
        Some(self.graph)
    }
}

/// The lineage (ids from the root down) of graph `graph` of the family `core`: the root, or
/// a body made by a conditional node.
pub(crate) fn lineage_of(core: &GraphCore, graph: u64) -> Arc<[u64]> {
    if graph == core.id() {
        return Arc::from([graph]);
    }
    // A node's graph is always the root or a registered body; an unknown id only gets itself,
    // which refuses more, never less.
    core.state().body_lineages.get(&graph).cloned().unwrap_or_else(|| Arc::from([graph]))
}

/// Which kind of conditional node.
///
/// ```
/// use cuda_graph::graph::ConditionalKind;
/// assert_eq!(ConditionalKind::IfElse.to_string(), "IF/ELSE");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConditionalKind {
    /// Runs its body when the value is non-zero.
    If,
    /// Runs body 0 when the value is non-zero, body 1 when it is zero.
    IfElse,
    /// Runs its body again and again while the value is non-zero (tested before each run).
    While,
    /// Runs body `n` when the value is `n`; none when the value is past the last body.
    Switch,
}

impl std::fmt::Display for ConditionalKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ConditionalKind::If => "IF",
            ConditionalKind::IfElse => "IF/ELSE",
            ConditionalKind::While => "WHILE",
            ConditionalKind::Switch => "SWITCH",
        })
    }
}

/// A conditional node, from [`GraphBuilder::add_if`] and its siblings.
///
/// ```no_run
/// use cuda_graph::graph::{ConditionalKind, Graph};
/// let graph = Graph::new()?;
/// let (node, bodies) = graph.add_switch(&graph.conditional_handle(Some(2))?, 3, &[])?;
/// assert_eq!((node.kind(), node.body_count()), (ConditionalKind::Switch, 3));
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConditionalNode {
    node: NodeRef,
    kind: ConditionalKind,
    bodies: u32,
}

impl ConditionalNode {
    /// IF, IF/ELSE, WHILE or SWITCH.
    pub fn kind(&self) -> ConditionalKind {
        self.kind
    }

    /// How many bodies it has.
    pub fn body_count(&self) -> usize {
        self.bodies as usize
    }
}

impl AsNode for ConditionalNode {
    fn as_node(&self) -> NodeRef {
        self.node
    }
}

/// Refuses a handle not created by `lineage`'s graph or one enclosing it.
fn check_handle(call: &'static str, lineage: &[u64], handle: &ConditionalHandle) -> Result<()> {
    if lineage.contains(&handle.graph) {
        Ok(())
    } else {
        Err(CudaError::refused(
            call,
            ConditionalRefusal::HandleOfAnotherGraph {
                handle_graph: handle.graph,
                graph: lineage.last().copied().unwrap_or_default(),
            },
        ))
    }
}

impl GraphBuilder {
    /// Creates a conditional handle for nodes of this graph or bodies inside it
    /// (`cudaGraphConditionalHandleCreate`). `default_value` is the value the handle holds
    /// when each launch of the exec starts, before any kernel sets it:
    /// - `Some(v)`: every launch starts with the value `v` (`cudaGraphCondAssignDefault`). For
    ///   an IF or WHILE node, non-zero means the body runs (the first time, for WHILE), so
    ///   `Some(1)` runs it unless a kernel sets 0 first and `Some(0)` skips it unless a kernel
    ///   sets non-zero; for SWITCH, `v` is the index of the body that runs.
    /// - `None`: no value is assigned; a kernel must set it (`cudaGraphSetConditional`) before
    ///   the conditional node runs, each launch.
    ///
    /// A handle no conditional node uses makes instantiation fail.
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// // Each launch starts with the value 1: an IF body on it runs unless a kernel sets 0.
    /// let handle = graph.conditional_handle(Some(1))?;
    /// assert_eq!(handle.default_value(), Some(1));
    /// // No starting value: a kernel of the graph sets it before the node that tests it.
    /// let set_by_kernel = graph.conditional_handle(None)?;
    /// assert_eq!(set_by_kernel.default_value(), None);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn conditional_handle(&self, default_value: Option<u32>) -> Result<ConditionalHandle> {
        let flags = if default_value.is_some() {
            sys::cudaGraphConditionalHandleFlags::cudaGraphCondAssignDefault.0
        } else {
            0
        };
        let _on_device = crate::device::CurrentFor::new(self.device())?;
        self.core.locked("GraphBuilder::conditional_handle", |state| {
            let mut raw = 0;
            check(
                // SAFETY: the graph is alive and locked; `raw` is a valid out-pointer; flags are
                // 0 or cudaGraphCondAssignDefault, the documented values.
                unsafe {
                    sys::cudaGraphConditionalHandleCreate(
                        &mut raw,
                        self.raw,
                        default_value.unwrap_or(0),
                        flags,
                    )
                },
                "cudaGraphConditionalHandleCreate",
            )?;
            state.handles.push(raw);
            Ok(ConditionalHandle { raw, graph: self.id, default: default_value })
        })
    }

    /// Adds an IF node: its body runs when `handle`'s value is non-zero.
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let (_node, body) = graph.add_if(&graph.conditional_handle(Some(1))?, &[])?;
    /// body.add_empty(&[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_if(
        &self, handle: &ConditionalHandle, deps: &[&dyn AsNode],
    ) -> Result<(ConditionalNode, GraphBuilder)> {
        let (node, [body]) = self.add_fixed("GraphBuilder::add_if", handle, ConditionalKind::If, deps)?;
        Ok((node, body))
    }

    /// Adds an IF/ELSE node: the first body runs when `handle`'s value is non-zero, the
    /// second when it is zero.
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let (_node, [then, otherwise]) = graph.add_if_else(&graph.conditional_handle(Some(0))?, &[])?;
    /// then.add_empty(&[])?;
    /// otherwise.add_empty(&[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_if_else(
        &self, handle: &ConditionalHandle, deps: &[&dyn AsNode],
    ) -> Result<(ConditionalNode, [GraphBuilder; 2])> {
        self.add_fixed("GraphBuilder::add_if_else", handle, ConditionalKind::IfElse, deps)
    }

    /// Adds a WHILE node: while `handle`'s value is non-zero (tested before each run), the
    /// body runs. A kernel in the body must eventually set the value to 0.
    ///
    /// The value keeps what it was last set to from one body run to the next, so a loop whose
    /// handle defaults to 1 (`conditional_handle(Some(1))`) only needs its last run to set 0.
    /// Per step that is cheaper than setting the value every run: 0.08 µs of a 4–4.6 µs step
    /// on an H100 (`bench/profile/while_placement.cu` in the repository).
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let (_node, body) = graph.add_while(&graph.conditional_handle(Some(0))?, &[])?;
    /// body.add_empty(&[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_while(
        &self, handle: &ConditionalHandle, deps: &[&dyn AsNode],
    ) -> Result<(ConditionalNode, GraphBuilder)> {
        let (node, [body]) =
            self.add_fixed("GraphBuilder::add_while", handle, ConditionalKind::While, deps)?;
        Ok((node, body))
    }

    /// Adds a SWITCH node with `cases` bodies (at least 1): body `n` runs when `handle`'s
    /// value is `n`; none runs when the value is `cases` or more.
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let (_node, bodies) = graph.add_switch(&graph.conditional_handle(Some(3))?, 4, &[])?;
    /// for body in &bodies {
    ///     body.add_empty(&[])?;
    /// }
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_switch(
        &self, handle: &ConditionalHandle, cases: usize, deps: &[&dyn AsNode],
    ) -> Result<(ConditionalNode, Vec<GraphBuilder>)> {
        const CALL: &str = "GraphBuilder::add_switch";
        let size = switch_size(CALL, cases)?;
        self.add_conditional(CALL, handle, ConditionalKind::Switch, size, deps)
    }

    /// A conditional node with `N` bodies (IF and WHILE have 1, IF/ELSE 2).
    fn add_fixed<const N: usize>(
        &self, call: &'static str, handle: &ConditionalHandle, kind: ConditionalKind, deps: &[&dyn AsNode],
    ) -> Result<(ConditionalNode, [GraphBuilder; N])> {
        let (node, bodies) = self.add_conditional(call, handle, kind, N as u32, deps)?;
        let bodies = <[GraphBuilder; N]>::try_from(bodies).map_err(|b| {
            CudaError::refused(call, ConditionalRefusal::BodyCount { returned: b.len(), expected: N })
        })?;
        Ok((node, bodies))
    }

    fn add_conditional(
        &self, call: &'static str, handle: &ConditionalHandle, kind: ConditionalKind, size: u32,
        deps: &[&dyn AsNode],
    ) -> Result<(ConditionalNode, Vec<GraphBuilder>)> {
        check_handle(call, &self.lineage, handle)?;
        let type_ = match kind {
            ConditionalKind::If | ConditionalKind::IfElse => {
                sys::cudaGraphConditionalNodeType::cudaGraphCondTypeIf
            }
            ConditionalKind::While => sys::cudaGraphConditionalNodeType::cudaGraphCondTypeWhile,
            ConditionalKind::Switch => sys::cudaGraphConditionalNodeType::cudaGraphCondTypeSwitch,
        };
        let mut params = node_params_of(sys::cudaGraphNodeType::cudaGraphNodeTypeConditional);
        params.__bindgen_anon_1.conditional = sys::cudaConditionalNodeParams {
            handle: handle.raw,
            type_,
            size,
            phGraph_out: std::ptr::null_mut(),
        };
        let node = self.add_node(call, &mut params, Vec::new(), deps)?;
        // SAFETY: cudaGraphAddNode filled the conditional member's phGraph_out with a CUDA-owned
        // array of `size` body graphs, valid as long as the node (so as the family).
        let out = unsafe { params.__bindgen_anon_1.conditional.phGraph_out };
        if out.is_null() {
            return Err(CudaError::refused(call, ConditionalRefusal::NoBodies));
        }
        // SAFETY: `out` holds `size` graph handles (see above).
        let raw_bodies = unsafe { std::slice::from_raw_parts(out, size as usize) };
        let bodies: Vec<GraphBuilder> = raw_bodies.iter().map(|&raw| self.body(raw)).collect();
        // Kept so that per-node updates of an exec can check handles against a node's body.
        let mut state = self.core.state();
        for body in &bodies {
            state.body_lineages.insert(body.id, body.lineage.clone());
        }
        let recorded =
            Recorded { kind, handle: handle.raw, bodies: raw_bodies.iter().map(|&b| b as usize).collect() };
        state.conditionals.insert(node.as_raw() as usize, recorded);
        drop(state);
        Ok((ConditionalNode { node, kind, bodies: size }, bodies))
    }
}

/// Refuses a family that made a conditional handle no conditional node of it tests (any more).
///
/// CUDA refuses to instantiate such a graph, but `cudaGraphExecUpdate` takes it: a kernel of it
/// may then set, in the exec, a handle the exec does not have (measured on CUDA 13.0: the
/// update succeeds and the kernel's `cudaGraphSetConditional` runs). CUDA refuses an update
/// that changes a conditional node's handle, so once every handle is tested by a node, every
/// handle a kernel can receive (its graph's or an enclosing one's) is one the exec has.
pub(crate) fn refuse_untested_handles(call: &'static str, state: &super::CoreState) -> Result<()> {
    // Conditional nodes are never removed (`remove_node` refuses them), so every recorded
    // one is in the family.
    let tested = |handle: u64| state.conditionals.values().any(|recorded| recorded.handle == handle);
    match state.handles.iter().position(|&handle| !tested(handle)) {
        None => Ok(()),
        Some(index) => {
            Err(CudaError::refused(call, ConditionalRefusal::UntestedHandle { handle: index + 1 }))
        }
    }
}

/// Refuses, as a child graph, a family that made conditional handles. CUDA 13.0 refuses to
/// add one (`cudaErrorNotSupported`, measured on the H100); refused here first, with the
/// reason, and for an exec's child-graph setter too, where a kernel of it could otherwise set
/// a condition of the graph it runs in.
pub(crate) fn refuse_child_with_handles(call: &'static str, child: &super::CoreState) -> Result<()> {
    if child.handles.is_empty() {
        return Ok(());
    }
    Err(CudaError::refused(call, ConditionalRefusal::ChildWithHandles { handles: child.handles.len() }))
}

/// What a conditional node was made with, kept for reading it back.
pub(crate) struct Recorded {
    pub(crate) kind: ConditionalKind,
    /// The raw handle it tests.
    pub(crate) handle: u64,
    /// Its bodies' graphs (CUDA's, alive as long as the node), by address.
    pub(crate) bodies: Vec<usize>,
}

impl ConditionalHandle {
    /// The raw value, for comparing with a recorded one (never handed out).
    pub(crate) fn raw_value(&self) -> u64 {
        self.raw
    }
}

fn switch_size(call: &'static str, cases: usize) -> Result<u32> {
    match u32::try_from(cases) {
        Ok(0) => Err(CudaError::refused(call, ConditionalRefusal::SwitchWithoutBodies)),
        Ok(size) => Ok(size),
        Err(_) => Err(CudaError::refused(call, ConditionalRefusal::TooManyBodies { bodies: cases })),
    }
}

/// Conditional nodes.
pub(crate) struct ConditionalSpec;

impl Kind for ConditionalSpec {
    const CODE: u32 = sys::cudaGraphNodeType::cudaGraphNodeTypeConditional.0;
    const NAME: &'static str = "conditional";
    const DEVICE_LAUNCH: DeviceLaunchRule =
        DeviceLaunchRule::Refused("CUDA 13.0 refuses it with cudaErrorInvalidValue");
    const IN_CONDITIONAL_BODY: bool = true;
    const NOT_REMOVABLE: Option<Unremovable> = Some(Unremovable::Conditional);
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

impl<'a> ReadNode<'a> for ConditionalParams<'a> {
    type Kind = ConditionalSpec;

    fn read(
        view: &View<'a>, state: &CoreState, call: &'static str, node: sys::cudaGraphNode_t,
    ) -> Result<Self> {
        let recorded = state
            .conditionals
            .get(&(node as usize))
            .ok_or_else(|| CudaError::refused(call, NodeRefusal::UnknownConditional))?;
        let bodies = recorded.bodies.iter().map(|&raw| view.child(raw as sys::cudaGraph_t)).collect();
        Ok(ConditionalParams { kind: recorded.kind, bodies, handle: recorded.handle })
    }
}

node_readers! {
    impl GraphBuilder;
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
    /// The conditional node `node` of this view (a conditional body's nested conditional).
    fn conditional_params -> ConditionalParams<'a>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{check_launch_handles, check_node_handles};
    use crate::Refusal;

    #[test]
    fn handles_serve_their_graph_and_bodies_inside_it() {
        let handle = ConditionalHandle { raw: 5, graph: 2, default: None };
        assert!(check_handle("add_if", &[2], &handle).is_ok());
        assert!(check_handle("add_if", &[2, 9, 11], &handle).is_ok());
        let err = check_handle("add_if", &[3, 4], &handle).unwrap_err();
        assert!(
            matches!(
                err.refusal(),
                Some(Refusal::Conditional(ConditionalRefusal::HandleOfAnotherGraph {
                    handle_graph: 2,
                    graph: 4
                }))
            ),
            "{err}"
        );
    }

    #[test]
    fn a_switch_needs_at_least_one_body() {
        let err = switch_size("add_switch", 0).unwrap_err();
        assert!(
            matches!(err.refusal(), Some(Refusal::Conditional(ConditionalRefusal::SwitchWithoutBodies))),
            "{err}"
        );
        assert_eq!(switch_size("add_switch", 4).unwrap(), 4);
        if usize::BITS > 32 {
            let err = switch_size("add_switch", 1 << 33).unwrap_err();
            assert!(
                matches!(
                    err.refusal(),
                    Some(Refusal::Conditional(ConditionalRefusal::TooManyBodies { bodies: 0x2_0000_0000 }))
                ),
                "{err}"
            );
        }
    }

    #[test]
    fn a_handle_is_a_64_bit_kernel_argument() {
        let handle = ConditionalHandle { raw: 0xdead_beef_0000_0001, graph: 1, default: Some(3) };
        assert_eq!(KernelParam::raw(&handle).0, 0xdead_beef_0000_0001);
        assert_eq!(<(ConditionalHandle,) as crate::KernelArgs>::layout()[0].size, 8);
        assert_eq!(<(ConditionalHandle,) as crate::KernelArgs>::layout()[0].align, 8);
        assert!(!format!("{handle:?}").contains("dead"), "Debug does not show the raw handle");
    }

    #[test]
    fn kernel_nodes_take_handles_of_their_graph_and_enclosing_ones_only() {
        let handle = ConditionalHandle { raw: 5, graph: 2, default: None };
        assert!(check_node_handles("add_kernel", &[2], &(handle, 1u32)).is_ok());
        assert!(check_node_handles("add_kernel", &[2, 9, 11], &(1u32, handle)).is_ok());
        let err = check_node_handles("add_kernel", &[3, 4], &(handle,)).unwrap_err();
        assert!(
            matches!(
                err.refusal(),
                Some(Refusal::ForeignConditionalHandle { handle_graph: 2, node_graph: 4 })
            ),
            "{err}"
        );
        let other = ConditionalHandle { raw: 6, graph: 7, default: None };
        let err = check_node_handles("add_kernel", &[2], &(handle, other)).unwrap_err();
        assert!(
            matches!(
                err.refusal(),
                Some(Refusal::ForeignConditionalHandle { handle_graph: 7, node_graph: 2 })
            ),
            "the second handle is checked too: {err}"
        );
        assert!(check_node_handles("add_kernel", &[3], &(1u32, 2u64)).is_ok(), "no handle, no check");
    }

    #[test]
    fn stream_launches_take_handles_only_when_captured_into_their_graph() {
        let handle = ConditionalHandle { raw: 5, graph: 2, default: None };
        let err = check_launch_handles(None, &(handle,)).unwrap_err();
        assert!(
            matches!(err.refusal(), Some(Refusal::ConditionalHandleOutsideCapture { handle_graph: 2 })),
            "{err}"
        );
        assert!(check_launch_handles(Some(&[2, 8]), &(handle,)).is_ok());
        assert!(check_launch_handles(Some(&[3]), &(handle,)).is_err());
    }
}
