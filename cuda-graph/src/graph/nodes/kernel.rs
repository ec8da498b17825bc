//! Kernel nodes: a launch of a typed kernel with its arguments, added plainly or with launch
//! attributes and edge data, set on an exec, and read back through the driver (see
//! `graph::kernel_node`). Every way goes through one setup, [`KernelLaunch`], so none keeps
//! less (the arguments' allocations and a run-time module) or checks less than another.

use std::ptr;

use crate::runtime as sys;

use super::super::edges::{Dependency, Edge};
use super::super::inspect::{node_readers, View};
use super::super::node::raw_deps;
use super::super::{AsNode, ChildGraph, CoreState, GraphBuilder, GraphExec, LaunchMode, NodeRef};
use super::{copy_fields, params_of, DeviceLaunchRule, Kind, NodeParams, ReadNode};
use crate::device::Device;
use crate::error::{check, Result};
use crate::kernel::{CheckAttributes, Kernel, KernelArgs, KernelAttributes, LaunchConfig};
use crate::memory::KeepAlive;

/// Kernel nodes.
pub(crate) struct KernelSpec;

impl Kind for KernelSpec {
    const CODE: u32 = sys::cudaGraphNodeType::cudaGraphNodeTypeKernel.0;
    const NAME: &'static str = "kernel";
    const DEVICE_LAUNCH: DeviceLaunchRule = DeviceLaunchRule::Allowed;
    const IN_CONDITIONAL_BODY: bool = true;
}

super::super::node::typed_nodes! {
    /// A kernel launch node, from [`GraphBuilder::add_kernel`](crate::graph::GraphBuilder::add_kernel);
    /// its exec parameters change with [`GraphExec::set_kernel_params`](crate::graph::GraphExec::set_kernel_params).
    ///
    /// ```no_run
    /// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::KernelNode) -> cuda_graph::Result<()> {
    /// graph.add_empty(&[&node])?; // runs after the kernel
    /// # Ok(()) }
    /// ```
    KernelNode;
}

/// A kernel node's launch, checked, with what it must keep alive: the one setup every kernel
/// node goes through, whether added plainly (`add_kernel`), with attributes or programmatic
/// edges (`add_kernel_with`) or set on an exec (`set_kernel_params`), so none keeps less
/// than another (the arguments' allocations and the kernel's module, see `kernel_owners`) or
/// checks less (conditional handles, placement, configuration).
pub(crate) struct KernelLaunch<'a, A: KernelArgs> {
    call: &'static str,
    kernel: &'a Kernel<A>,
    config: &'a LaunchConfig,
    args: &'a A,
    keep: Vec<KeepAlive>,
}

impl<'a, A: KernelArgs> KernelLaunch<'a, A> {
    /// Checks `args`' conditional handles against `lineage` (the ids of the node's graph, from
    /// the root down) and their placement against `device` (the graph's), and collects what
    /// the node keeps. `call` is the public call, which errors name.
    pub(crate) fn new(
        call: &'static str, kernel: &'a Kernel<A>, config: &'a LaunchConfig, args: &'a A, lineage: &[u64],
        device: Device,
    ) -> Result<KernelLaunch<'a, A>> {
        crate::kernel::check_node_handles(call, lineage, args)?;
        let keep = crate::kernel::kernel_owners(call, kernel, args, device)?;
        Ok(KernelLaunch { call, kernel, config, args, keep })
    }

    /// Hands `f` the classic kernel node parameters and what they keep, while the packed
    /// argument values they point to are alive (CUDA copies them during the call).
    fn with_classic<R>(
        self, f: impl FnOnce(sys::cudaKernelNodeParams, Vec<KeepAlive>) -> Result<R>,
    ) -> Result<R> {
        self.config.check(self.call)?;
        let func = self.kernel.function()?;
        let mut packed = self.args.pack();
        let mut pointers = A::pointers(&mut packed);
        let pointers = pointers.as_mut();
        let kernel_params = if pointers.is_empty() { ptr::null_mut() } else { pointers.as_mut_ptr() };
        let raw = sys::cudaKernelNodeParams {
            func: func.cast_mut(),
            gridDim: self.config.grid.into(),
            blockDim: self.config.block.into(),
            sharedMemBytes: self.config.shared_mem_bytes,
            kernelParams: kernel_params,
            extra: ptr::null_mut(),
        };
        f(raw, self.keep)
    }
}

// SAFETY: the parameters point at the packed argument values, alive for the call, and name the
// kernel's function, whose module `keep` holds (`kernel_owners`) with every allocation the
// arguments reach; `set` sets a kernel node with CUDA's typed call from the same fields.
unsafe impl<A: KernelArgs> NodeParams for KernelLaunch<'_, A> {
    type Kind = KernelSpec;
    type Node = KernelNode;

    fn with_raw<R>(
        self, f: impl FnOnce(&mut sys::cudaGraphNodeParams, Vec<KeepAlive>) -> Result<R>,
    ) -> Result<R> {
        self.with_classic(|raw, keep| {
            let mut params = params_of::<KernelSpec>();
            params.__bindgen_anon_1.kernel = copy_fields!(raw => sys::cudaKernelNodeParamsV2 {
                func, gridDim, blockDim, sharedMemBytes, kernelParams, extra
            });
            f(&mut params, keep)
        })
    }

    fn node(node: NodeRef, _: &sys::cudaGraphNodeParams) -> KernelNode {
        KernelNode(node)
    }

    unsafe fn set(
        exec: sys::cudaGraphExec_t, exec_node: sys::cudaGraphNode_t, raw: &mut sys::cudaGraphNodeParams,
    ) -> Result<()> {
        // SAFETY: `raw` was made by `with_raw`, which wrote its kernel member.
        let v2 = unsafe { raw.__bindgen_anon_1.kernel };
        let classic = copy_fields!(v2 => sys::cudaKernelNodeParams {
            func, gridDim, blockDim, sharedMemBytes, kernelParams, extra
        });
        // SAFETY: exec alive; `exec_node` names a kernel node of it, held by the caller;
        // `classic` points at live packed args (the caller's promise, `NodeParams::set`).
        check(
            unsafe { sys::cudaGraphExecKernelNodeSetParams(exec, exec_node, &classic) },
            "cudaGraphExecKernelNodeSetParams",
        )
    }
}

impl GraphBuilder {
    /// Adds a launch of `kernel` with `args`, after `deps`. The configuration is validated
    /// and the kernel's parameters checked against its declaration first; the buffers the
    /// arguments point into stay alive with the graph and its execs.
    ///
    /// A [`ConditionalHandle`](crate::graph::ConditionalHandle) among `args` must come from this
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
        self.add_params(CALL, launch, deps)
    }

    /// Adds a launch of `kernel` with `args` after `deps`, whose edges may be programmatic
    /// (programmatic dependent launch), with launch `attributes` set on the node
    /// (`cudaGraphAddNode` with edge data, then `cudaGraphKernelNodeSetAttribute` for each
    /// attribute set). Otherwise as [`add_kernel`](Self::add_kernel).
    ///
    /// Refused before CUDA is called: a dependency of another graph, programmatic edges on a
    /// device below sm_90, and what [`KernelAttributes`] lists. If CUDA refuses an attribute
    /// the node is removed again, so a failed call leaves the graph as it was.
    ///
    /// A kernel reached by a programmatic edge must call `cuda_graph::pdl::wait_upstream()`
    /// before it reads what the kernel before it writes, or writes what that kernel reads or
    /// writes: without the wait nothing orders them, and nodes after it are not ordered after
    /// the kernel before it either.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{Dependency, Graph, HostLaunch};
    /// use cuda_graph::kernel::{KernelAttributes, LaunchConfig};
    /// use cuda_graph::{DeviceBuffer, DevicePtr, Stream};
    /// cuda_graph::kernels! {
    ///     // SAFETY: step adds 1 to counter[0] (one thread), after wait_upstream().
    ///     unsafe fn step(counter: DevicePtr<u32>);
    /// }
    /// let counter = DeviceBuffer::<u32>::zeroed(1)?;
    /// let graph = Graph::new()?;
    /// let none = KernelAttributes::default();
    /// let mut previous = graph.add_kernel_with(step(), LaunchConfig::new(1, 1), (counter.ptr(),), &none, &[])?;
    /// for _ in 1..100 {
    ///     let deps = [Dependency::programmatic(&previous)];
    ///     previous = graph.add_kernel_with(step(), LaunchConfig::new(1, 1), (counter.ptr(),), &none, &deps)?;
    /// }
    /// let stream = Stream::new()?;
    /// graph.instantiate::<HostLaunch>(Default::default())?.launch(&stream)?;
    /// stream.synchronize()?;
    /// assert_eq!(counter.to_vec()?, [100]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_kernel_with<A: KernelArgs>(
        &self, kernel: &Kernel<A>, config: LaunchConfig, args: A, attributes: &KernelAttributes,
        deps: &[Dependency],
    ) -> Result<KernelNode> {
        const CALL: &str = "GraphBuilder::add_kernel_with";
        let nodes: Vec<NodeRef> = deps.iter().map(Dependency::node).collect();
        let nodes: Vec<&dyn AsNode> = nodes.iter().map(|node| node as &dyn AsNode).collect();
        let raw = raw_deps(CALL, self.id, &nodes)?;
        if deps.iter().any(|dep| dep.edge() != Edge::Full) {
            crate::kernel::require_programmatic_launch(CALL)?;
        }
        // Checked against the limits of the graph's device, which runs the node.
        self.device().with_current(|| attributes.check(CALL, &config, kernel.function()?))?;
        let edges: Vec<sys::cudaGraphEdgeData> = deps.iter().map(|dep| dep.edge().raw()).collect();
        let all_full = deps.iter().all(|dep| dep.edge() == Edge::Full);
        let entries = attributes.raw();
        let launch = KernelLaunch::new(CALL, kernel, &config, &args, &self.lineage, self.device())?;
        let edges = if all_full { None } else { Some(edges.as_slice()) };
        self.insert_params(CALL, launch, &raw, edges, |node| {
            for entry in entries.iter() {
                check(
                    // SAFETY: `node` is a kernel node just added to this locked graph;
                    // `entry.val` holds the member of `entry.id`, written by `raw()`.
                    unsafe { sys::cudaGraphKernelNodeSetAttribute(node, entry.id, &entry.val) },
                    "cudaGraphKernelNodeSetAttribute",
                )?;
            }
            Ok(())
        })
    }
}

impl<M: LaunchMode> GraphExec<M> {
    /// Changes what kernel node `node` launches in this exec: kernel, configuration and
    /// arguments (`cudaGraphExecKernelNodeSetParams`). Later launches only; the graph is not
    /// changed.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{GraphExec, HostLaunch, KernelNode};
    /// use cuda_graph::kernel::{Kernel, LaunchConfig};
    /// use cuda_graph::DevicePtr;
    /// fn retarget(
    ///     exec: &mut GraphExec<HostLaunch>,
    ///     node: KernelNode,
    ///     kernel: &Kernel<(DevicePtr<u32>, u32)>,
    ///     out: DevicePtr<u32>,
    /// ) -> cuda_graph::Result<()> {
    ///     exec.set_kernel_params(&node, kernel, LaunchConfig::for_elements(1024, 256), (out, 42))
    /// }
    /// ```
    pub fn set_kernel_params<A: KernelArgs>(
        &mut self, node: &KernelNode, kernel: &Kernel<A>, config: LaunchConfig, args: A,
    ) -> Result<()> {
        const CALL: &str = "GraphExec::set_kernel_params";
        let node = self.own_node(CALL, node)?;
        // Only arguments that hold a conditional handle need the node's lineage.
        let lineage = match A::HAS_CONDITIONAL_HANDLE {
            true => super::super::conditional::lineage_of(&self.source, node.graph_id()),
            false => std::sync::Arc::from([node.graph_id()]),
        };
        let launch = KernelLaunch::new(CALL, kernel, &config, &args, &lineage, self.device())?;
        self.set_checked(CALL, node, launch)
    }
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
    read: super::super::kernel_node::KernelNodeRead,
}

impl KernelNodeParams {
    /// Whether the node launches `kernel`.
    pub fn launches<A: KernelArgs>(&self, kernel: &Kernel<A>) -> Result<bool> {
        super::super::kernel_node::launches(&self.read, kernel.function()?, kernel.is_loaded())
    }
}

impl<'a> ReadNode<'a> for KernelNodeParams {
    type Kind = KernelSpec;

    fn read(
        _: &View<'a>, _: &CoreState, _: &'static str, node: sys::cudaGraphNode_t,
    ) -> Result<KernelNodeParams> {
        // SAFETY: a live kernel node of a family held here (checked by `View::read`).
        let read = unsafe { super::super::kernel_node::read(node) }?;
        let name = super::super::kernel_node::name(read.function)?;
        Ok(KernelNodeParams { config: read.config, name, read })
    }
}

node_readers! {
    impl GraphBuilder;
    /// What the kernel node `node` of this graph launches and how (see [`KernelNodeParams`]).
    ///
    /// ```no_run
    /// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::KernelNode) -> cuda_graph::Result<()> {
    /// println!("{:?}", graph.kernel_params(&node)?.config);
    /// # Ok(()) }
    /// ```
    fn kernel_params -> KernelNodeParams;
}

node_readers! {
    impl<'a> ChildGraph;
    /// What the kernel node `node` of this view launches (see [`GraphBuilder::kernel_params`]).
    fn kernel_params -> KernelNodeParams;
}
