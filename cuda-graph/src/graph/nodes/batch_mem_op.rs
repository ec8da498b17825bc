//! Batch memory operation nodes (`CU_GRAPH_NODE_TYPE_BATCH_MEM_OP`): writes of 32- or 64-bit
//! values to device memory, and waits for a value there, run by the GPU's front end as a step
//! of the graph (`cuStreamBatchMemOp`'s operations). The runtime API has no call for them: the
//! driver's (`cuGraphAddBatchMemOpNode`, `cuGraphExecBatchMemOpNodeSetParams`,
//! `cuGraphBatchMemOpNodeGetParams`, `cuCtxGetCurrent`) are reached through the entry points
//! the runtime hands out (`cudaGetDriverEntryPointByVersion`).
//!
//! # What is safe
//! - A write ([`MemOp::write_u32`], [`MemOp::write_u64`]) goes to element 0 of a [`DevicePtr`],
//!   checked to hold at least one element at an address aligned to the value's size, of memory
//!   the graph's device can reach; the node keeps the buffer alive with the graph and its
//!   execs, as a memset node does.
//! - A wait ([`MemOp::wait_u32`], [`MemOp::wait_u64`]) is `unsafe`: one whose condition never
//!   comes true never completes, so neither does the launch, and every wait for it (a stream
//!   synchronize, an exec's drop) hangs. Its buffer is checked and kept as a write's is.
//! - What is read back ([`BatchMemOpParams`]) is data (kinds, addresses, values), never an
//!   operation to add again: it keeps nothing alive.
//!
//! CUDA 13.0 allows these nodes neither in graphs launched from the device nor in conditional
//! bodies.

use std::ffi::c_void;
use std::ptr;

use crate::runtime as sys;

use super::super::inspect::{node_readers, View};
use super::super::{AsNode, ChildGraph, CoreState, GraphBuilder, GraphExec, LaunchMode, NodeRef};
use super::{DeviceLaunchRule, Kind, NodeParams, ReadNode};
use crate::device::Device;
use crate::driver::{check_driver, function};
use crate::error::refusal::{EditRefusal, Empty, Unsupported};
use crate::error::{CudaError, Refusal, Result};
use crate::memory::{DevicePtr, KeepAlive};

/// Batch memory operation nodes.
pub(crate) struct BatchMemOpSpec;

impl Kind for BatchMemOpSpec {
    /// `CU_GRAPH_NODE_TYPE_BATCH_MEM_OP` (the runtime's `cudaGraphNodeType` has no name for it).
    const CODE: u32 = 12;
    const NAME: &'static str = "batch memory operation";
    const DEVICE_LAUNCH: DeviceLaunchRule =
        DeviceLaunchRule::Refused("CUDA does not allow batch memory operation nodes in device-launch graphs");
    const IN_CONDITIONAL_BODY: bool = false;
}

super::super::node::typed_nodes! {
    /// A batch memory operation node, from
    /// [`GraphBuilder::add_batch_mem_op`](crate::graph::GraphBuilder::add_batch_mem_op); its
    /// operations' addresses and values change with
    /// [`GraphExec::set_batch_mem_op`](crate::graph::GraphExec::set_batch_mem_op).
    ///
    /// ```no_run
    /// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::BatchMemOpNode) -> cuda_graph::Result<()> {
    /// graph.add_empty(&[&node])?; // runs after the operations
    /// # Ok(()) }
    /// ```
    BatchMemOpNode;
}

/// What a wait operation waits for, comparing the value in memory with the operation's
/// (`CUstreamWaitValue_flags`).
///
/// ```
/// use cuda_graph::graph::WaitCondition;
/// assert_ne!(WaitCondition::Equal, WaitCondition::GreaterOrEqual);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WaitCondition {
    /// `(int)(memory - value) >= 0`, wrapping (`CU_STREAM_WAIT_VALUE_GEQ`).
    GreaterOrEqual,
    /// `memory == value` (`CU_STREAM_WAIT_VALUE_EQ`).
    Equal,
    /// `(memory & value) != 0` (`CU_STREAM_WAIT_VALUE_AND`).
    And,
    /// `~(memory | value) != 0` (`CU_STREAM_WAIT_VALUE_NOR`).
    NotOr,
}

impl WaitCondition {
    const ALL: [WaitCondition; 4] =
        [WaitCondition::GreaterOrEqual, WaitCondition::Equal, WaitCondition::And, WaitCondition::NotOr];

    fn flags(self) -> u32 {
        match self {
            WaitCondition::GreaterOrEqual => 0,
            WaitCondition::Equal => 1,
            WaitCondition::And => 2,
            WaitCondition::NotOr => 3,
        }
    }
}

/// What one operation of a batch memory operation node does.
///
/// ```
/// use cuda_graph::graph::{MemOpKind, WaitCondition};
/// assert_ne!(MemOpKind::Write32, MemOpKind::Wait32(WaitCondition::Equal));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MemOpKind {
    /// Writes a 32-bit value (`CU_STREAM_MEM_OP_WRITE_VALUE_32`).
    Write32,
    /// Writes a 64-bit value (`CU_STREAM_MEM_OP_WRITE_VALUE_64`).
    Write64,
    /// Waits until the 32-bit value in memory meets the condition (`CU_STREAM_MEM_OP_WAIT_VALUE_32`).
    Wait32(WaitCondition),
    /// Waits until the 64-bit value in memory meets the condition (`CU_STREAM_MEM_OP_WAIT_VALUE_64`).
    Wait64(WaitCondition),
    /// An operation this crate does not add (a barrier, a flush), with CUDA's operation code
    /// and flags: read back from a node made elsewhere.
    Other {
        /// `CUstreamBatchMemOpType`.
        operation: u32,
        /// The operation's flags.
        flags: u32,
    },
}

/// `CUstreamBatchMemOpType` values.
const WAIT_VALUE_32: u32 = 1;
const WRITE_VALUE_32: u32 = 2;
const WAIT_VALUE_64: u32 = 4;
const WRITE_VALUE_64: u32 = 5;

impl MemOpKind {
    /// CUDA's operation code and flags.
    fn raw(self) -> (u32, u32) {
        match self {
            MemOpKind::Write32 => (WRITE_VALUE_32, 0),
            MemOpKind::Write64 => (WRITE_VALUE_64, 0),
            MemOpKind::Wait32(condition) => (WAIT_VALUE_32, condition.flags()),
            MemOpKind::Wait64(condition) => (WAIT_VALUE_64, condition.flags()),
            MemOpKind::Other { operation, flags } => (operation, flags),
        }
    }

    fn from_raw(operation: u32, flags: u32) -> MemOpKind {
        let condition = WaitCondition::ALL.into_iter().find(|condition| condition.flags() == flags);
        match (operation, condition) {
            (WRITE_VALUE_32, _) if flags == 0 => MemOpKind::Write32,
            (WRITE_VALUE_64, _) if flags == 0 => MemOpKind::Write64,
            (WAIT_VALUE_32, Some(condition)) => MemOpKind::Wait32(condition),
            (WAIT_VALUE_64, Some(condition)) => MemOpKind::Wait64(condition),
            _ => MemOpKind::Other { operation, flags },
        }
    }

    fn is_64(self) -> bool {
        matches!(self, MemOpKind::Write64 | MemOpKind::Wait64(_))
    }
}

/// One operation of a batch memory operation node, checked, keeping its buffer: made only by
/// the constructors below (writes are safe, waits `unsafe`).
///
/// ```no_run
/// use cuda_graph::graph::MemOp;
/// let flag = cuda_graph::DeviceBuffer::<u32>::zeroed(1)?;
/// let op = MemOp::write_u32(&flag.ptr(), 1)?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Clone)]
pub struct MemOp {
    kind: MemOpKind,
    addr: u64,
    value: u64,
    keep: Option<KeepAlive>,
}

impl std::fmt::Debug for MemOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemOp")
            .field("kind", &self.kind)
            .field("addr", &format_args!("{:#x}", self.addr))
            .field("value", &self.value)
            .finish()
    }
}

impl MemOp {
    /// Writes `value` to element 0 of `at`, after the work before the node (with a memory
    /// barrier first). Refused for an empty pointer or an address not 4-byte aligned.
    ///
    /// ```no_run
    /// let flag = cuda_graph::DeviceBuffer::<u32>::zeroed(4)?;
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.add_batch_mem_op(&[cuda_graph::graph::MemOp::write_u32(&flag.ptr(), 7)?], &[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn write_u32(at: &DevicePtr<u32>, value: u32) -> Result<MemOp> {
        MemOp::new("MemOp::write_u32", MemOpKind::Write32, at.addr(), at.len(), value.into(), at.keep_alive())
    }

    /// Writes `value` to element 0 of `at` (see [`write_u32`](Self::write_u32)); 8-byte aligned.
    ///
    /// ```no_run
    /// let stamp = cuda_graph::DeviceBuffer::<u64>::zeroed(1)?;
    /// let op = cuda_graph::graph::MemOp::write_u64(&stamp.ptr(), u64::MAX)?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn write_u64(at: &DevicePtr<u64>, value: u64) -> Result<MemOp> {
        MemOp::new("MemOp::write_u64", MemOpKind::Write64, at.addr(), at.len(), value, at.keep_alive())
    }

    /// Waits until element 0 of `at` meets `condition` against `value`; the work after the node
    /// starts only then. Refused as [`write_u32`](Self::write_u32) is.
    ///
    /// # Safety
    /// The condition comes true after the node starts, in every launch of every exec made from
    /// the graph (a kernel, a copy, or the host through mapped memory sets it): otherwise the
    /// launch never completes, and whatever waits for it (a stream synchronize, the exec's drop)
    /// never returns.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{MemOp, WaitCondition};
    /// let flag = cuda_graph::DeviceBuffer::<u32>::zeroed(1)?;
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let set = graph.add_batch_mem_op(&[MemOp::write_u32(&flag.ptr(), 1)?], &[])?;
    /// // SAFETY: the node before it wrote 1, so the wait is met as soon as it starts.
    /// let wait = unsafe { MemOp::wait_u32(&flag.ptr(), 1, WaitCondition::Equal) }?;
    /// graph.add_batch_mem_op(&[wait], &[&set])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn wait_u32(at: &DevicePtr<u32>, value: u32, condition: WaitCondition) -> Result<MemOp> {
        let kind = MemOpKind::Wait32(condition);
        MemOp::new("MemOp::wait_u32", kind, at.addr(), at.len(), value.into(), at.keep_alive())
    }

    /// Waits until element 0 of `at` meets `condition` against `value` (see
    /// [`wait_u32`](Self::wait_u32)); 8-byte aligned.
    ///
    /// # Safety
    /// As [`wait_u32`](Self::wait_u32): the condition comes true after the node starts, in every
    /// launch.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{MemOp, WaitCondition};
    /// let stamp = cuda_graph::DeviceBuffer::<u64>::zeroed(1)?;
    /// // SAFETY: 0 >= 0 holds at once: the buffer is zeroed and nothing else writes it.
    /// let wait = unsafe { MemOp::wait_u64(&stamp.ptr(), 0, WaitCondition::GreaterOrEqual) }?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn wait_u64(at: &DevicePtr<u64>, value: u64, condition: WaitCondition) -> Result<MemOp> {
        MemOp::new(
            "MemOp::wait_u64",
            MemOpKind::Wait64(condition),
            at.addr(),
            at.len(),
            value,
            at.keep_alive(),
        )
    }

    fn new(
        call: &'static str, kind: MemOpKind, addr: u64, len: usize, value: u64, keep: Option<KeepAlive>,
    ) -> Result<MemOp> {
        let size = if kind.is_64() { 8 } else { 4 };
        if len == 0 {
            return Err(CudaError::refused(call, Empty::MemOpPointer));
        }
        if addr % size != 0 {
            return Err(CudaError::refused(call, Refusal::UnalignedAddress { address: addr, align: size }));
        }
        // Measured on the H200: a node on pool memory made the graph's launch fail.
        if keep.as_ref().is_some_and(crate::memory::in_pool) {
            return Err(CudaError::refused(call, Unsupported::MemOpOnPoolMemory));
        }
        Ok(MemOp { kind, addr, value, keep })
    }

    /// What the operation does.
    pub fn kind(&self) -> MemOpKind {
        self.kind
    }

    /// The address it writes or waits on.
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// The value it writes or compares with.
    pub fn value(&self) -> u64 {
        self.value
    }

    fn raw(&self) -> RawMemOp {
        let (operation, flags) = self.kind.raw();
        let value = if self.kind.is_64() {
            RawValue { value64: self.value }
        } else {
            RawValue { value: self.value as u32 }
        };
        RawMemOp { operation, address: self.addr, value, flags, alias: 0, _rest: 0 }
    }
}

/// The value member of `CUstreamMemOpWaitValueParams_st` / `CUstreamMemOpWriteValueParams_st`.
#[repr(C)]
#[derive(Clone, Copy)]
union RawValue {
    value: u32,
    value64: u64,
}

/// `CUstreamBatchMemOpParams` (CUDA 12/13, 48 bytes) as its wait and write members lay it out:
/// operation, address, value, flags, alias, and the union's padding.
#[repr(C)]
#[derive(Clone, Copy)]
struct RawMemOp {
    operation: u32,
    address: u64,
    value: RawValue,
    flags: u32,
    alias: u64,
    _rest: u64,
}

const _: () = assert!(size_of::<RawMemOp>() == 48 && align_of::<RawMemOp>() == 8);

impl RawMemOp {
    /// The operation as read back: its kind, and its address and value where it has them.
    fn read_back(&self) -> MemOpParams {
        let kind = MemOpKind::from_raw(self.operation, self.flags);
        let value = match self.operation {
            // SAFETY: both members of the value union are plain integers, any bits valid; a
            // 64-bit operation's value is the 64-bit member.
            WAIT_VALUE_64 | WRITE_VALUE_64 => unsafe { self.value.value64 },
            // SAFETY: as above; a 32-bit operation's value is the 32-bit member.
            WAIT_VALUE_32 | WRITE_VALUE_32 => unsafe { self.value.value }.into(),
            _ => return MemOpParams { kind, addr: 0, value: 0 },
        };
        MemOpParams { kind, addr: self.address, value }
    }
}

/// `CUDA_BATCH_MEM_OP_NODE_PARAMS` (v1 and v2 share it).
#[repr(C)]
#[derive(Clone, Copy)]
struct RawNodeParams {
    ctx: *mut c_void,
    count: u32,
    param_array: *mut RawMemOp,
    flags: u32,
}

const _: () = assert!(size_of::<RawNodeParams>() <= size_of::<[i64; 29]>());

type AddFn = unsafe extern "C" fn(
    *mut sys::cudaGraphNode_t,
    sys::cudaGraph_t,
    *const sys::cudaGraphNode_t,
    usize,
    *const RawNodeParams,
) -> sys::CUresult;
type ExecSetFn =
    unsafe extern "C" fn(sys::cudaGraphExec_t, sys::cudaGraphNode_t, *const RawNodeParams) -> sys::CUresult;
type GetFn = unsafe extern "C" fn(sys::cudaGraphNode_t, *mut RawNodeParams) -> sys::CUresult;
type CtxGetCurrentFn = unsafe extern "C" fn(*mut *mut c_void) -> sys::CUresult;

/// The driver version (11.7) whose signatures the function types above transcribe.
const BATCH_VERSION: u32 = 11070;

/// The current context (called with the node's device made current by `with_current`, which
/// binds that device's primary context).
fn current_context() -> Result<*mut c_void> {
    const CALL: &str = "cudaGetDriverEntryPointByVersion(cuCtxGetCurrent)";
    // SAFETY: `CtxGetCurrentFn` transcribes `CUresult cuCtxGetCurrent(CUcontext*)`, as the
    // driver has it since 4.0 (asking for an earlier version finds no symbol).
    let get: CtxGetCurrentFn =
        unsafe { function(sys::CU_CTX_GET_CURRENT, sys::CU_CTX_GET_CURRENT_VERSION, CALL) }?;
    let mut ctx = ptr::null_mut();
    // SAFETY: `ctx` is a valid out-pointer.
    check_driver(unsafe { get(&mut ctx) }, "cuCtxGetCurrent")?;
    Ok(ctx)
}

/// The checked operations of one node, what they keep, and the device whose primary context
/// the node runs in (the graph's, or the exec's).
struct BatchParams {
    ops: Vec<RawMemOp>,
    keep: Vec<KeepAlive>,
    device: Device,
}

impl BatchParams {
    fn new(call: &'static str, ops: &[MemOp], device: Device) -> Result<BatchParams> {
        if ops.is_empty() {
            return Err(CudaError::refused(call, Empty::MemOps));
        }
        if u32::try_from(ops.len()).is_err() {
            let value = u64::try_from(ops.len()).unwrap_or(u64::MAX);
            let max = u64::from(u32::MAX);
            return Err(CudaError::refused(
                call,
                Refusal::OutOfRange { what: "the operation count", value, min: 1, max },
            ));
        }
        let keep: Vec<KeepAlive> = ops.iter().filter_map(|op| op.keep.clone()).collect();
        crate::memory::check_owners_on(&keep, device, call)?;
        Ok(BatchParams { ops: ops.iter().map(MemOp::raw).collect(), keep, device })
    }

    /// The node parameters, written into `raw`'s union (the driver's `CUgraphNodeParams`
    /// layout), in context `ctx`.
    fn write(raw: &mut sys::cudaGraphNodeParams, ops: &mut [RawMemOp], ctx: *mut c_void) {
        let params = RawNodeParams { ctx, count: ops.len() as u32, param_array: ops.as_mut_ptr(), flags: 0 };
        // SAFETY: the union is 232 bytes, 8-aligned (checked above to hold a `RawNodeParams`).
        unsafe { ptr::write(ptr::addr_of_mut!(raw.__bindgen_anon_1).cast::<RawNodeParams>(), params) };
    }

    /// The node parameters `write` put into `raw`.
    fn read(raw: &sys::cudaGraphNodeParams) -> RawNodeParams {
        // SAFETY: `raw` was made by `with_raw`, which wrote a `RawNodeParams` at the union's start.
        unsafe { ptr::read(ptr::addr_of!(raw.__bindgen_anon_1).cast::<RawNodeParams>()) }
    }
}

// SAFETY: the parameters point at `ops` (alive for the call: `with_raw` holds them) and each
// operation at element 0 of a buffer `keep` holds (or that a `DevicePtr::from_raw` promise
// keeps valid), checked in bounds and aligned; `add` and `set` are the driver's calls for
// batch memory operation nodes, given the same parameters.
unsafe impl NodeParams for BatchParams {
    type Kind = BatchMemOpSpec;
    type Node = BatchMemOpNode;

    fn with_raw<R>(
        mut self, f: impl FnOnce(&mut sys::cudaGraphNodeParams, Vec<KeepAlive>) -> Result<R>,
    ) -> Result<R> {
        // The device's primary context, made current by asking CUDA (`with_current` binds it),
        // whatever other code left current: a context of other code may be destroyed while
        // the node still names it.
        let ctx = self.device.with_current(current_context)?;
        let mut raw = super::params_of::<BatchMemOpSpec>();
        BatchParams::write(&mut raw, &mut self.ops, ctx);
        f(&mut raw, self.keep)
    }

    fn node(node: NodeRef, _: &sys::cudaGraphNodeParams) -> BatchMemOpNode {
        BatchMemOpNode(node)
    }

    unsafe fn add(
        graph: sys::cudaGraph_t, deps: &[sys::cudaGraphNode_t], edges: *const sys::cudaGraphEdgeData,
        raw: &mut sys::cudaGraphNodeParams,
    ) -> Result<sys::cudaGraphNode_t> {
        const CALL: &str = "cudaGetDriverEntryPointByVersion(cuGraphAddBatchMemOpNode)";
        if !edges.is_null() {
            return Err(CudaError::refused(CALL, EditRefusal::BatchMemOpEdges));
        }
        let params = BatchParams::read(raw);
        // SAFETY: `AddFn` transcribes cuGraphAddBatchMemOpNode's C signature at 11.7.
        let add: AddFn = unsafe { function(b"cuGraphAddBatchMemOpNode\0", BATCH_VERSION, CALL) }?;
        let mut node = ptr::null_mut();
        check_driver(
            // SAFETY: the graph is alive and locked, `deps` live nodes of it (the caller's
            // promise); `params` points at the checked operations, alive for the call.
            unsafe { add(&mut node, graph, deps.as_ptr(), deps.len(), &params) },
            "cuGraphAddBatchMemOpNode",
        )?;
        Ok(node)
    }

    unsafe fn set(
        exec: sys::cudaGraphExec_t, exec_node: sys::cudaGraphNode_t, raw: &mut sys::cudaGraphNodeParams,
    ) -> Result<()> {
        const CALL: &str = "cudaGetDriverEntryPointByVersion(cuGraphExecBatchMemOpNodeSetParams)";
        let params = BatchParams::read(raw);
        // SAFETY: `ExecSetFn` transcribes cuGraphExecBatchMemOpNodeSetParams' C signature at 11.7.
        let set: ExecSetFn =
            unsafe { function(b"cuGraphExecBatchMemOpNodeSetParams\0", BATCH_VERSION, CALL) }?;
        check_driver(
            // SAFETY: exec alive, `exec_node` a batch memory operation node of it held by the
            // caller; `params` points at the checked operations, whose buffers the exec keeps.
            unsafe { set(exec, exec_node, &params) },
            "cuGraphExecBatchMemOpNodeSetParams",
        )
    }
}

impl GraphBuilder {
    /// Adds a node that runs `ops` in order after `deps` (`cuGraphAddBatchMemOpNode`): writes
    /// of values to device memory and (`unsafe` to make) waits for values there. Each
    /// operation's buffer stays alive with the graph and its execs. Refused: no operations,
    /// and memory the graph's device cannot reach; CUDA refuses these nodes in conditional
    /// bodies, and 64-bit operations on devices without them.
    ///
    /// ```no_run
    /// use cuda_graph::graph::{Graph, MemOp};
    /// use cuda_graph::{DeviceBuffer, Stream};
    /// let flags = DeviceBuffer::<u32>::zeroed(2)?;
    /// let graph = Graph::new()?;
    /// let ops = [MemOp::write_u32(&flags.ptr(), 1)?, MemOp::write_u32(&flags.ptr().offset(1)?, 2)?];
    /// graph.add_batch_mem_op(&ops, &[])?;
    /// let stream = Stream::new()?;
    /// graph.instantiate_default()?.launch(&stream)?;
    /// stream.synchronize()?;
    /// assert_eq!(flags.to_vec()?, [1, 2]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_batch_mem_op(&self, ops: &[MemOp], deps: &[&dyn AsNode]) -> Result<BatchMemOpNode> {
        const CALL: &str = "GraphBuilder::add_batch_mem_op";
        let params = BatchParams::new(CALL, ops, self.device())?;
        self.add_params(CALL, params, deps)
    }
}

impl<M: LaunchMode> GraphExec<M> {
    /// Changes the addresses and values of batch memory operation node `node`'s operations in
    /// this exec (`cuGraphExecBatchMemOpNodeSetParams`); CUDA refuses a change of their number,
    /// kinds or conditions. The buffers of `ops` are kept for the node; what it kept before
    /// lives until the launches queued before have completed.
    ///
    /// ```no_run
    /// # fn f(exec: &mut cuda_graph::graph::GraphExec<cuda_graph::graph::HostLaunch>, node: cuda_graph::graph::BatchMemOpNode) -> cuda_graph::Result<()> {
    /// let other = cuda_graph::DeviceBuffer::<u32>::zeroed(1)?;
    /// exec.set_batch_mem_op(&node, &[cuda_graph::graph::MemOp::write_u32(&other.ptr(), 9)?])?;
    /// # Ok(()) }
    /// ```
    pub fn set_batch_mem_op(&mut self, node: &BatchMemOpNode, ops: &[MemOp]) -> Result<()> {
        const CALL: &str = "GraphExec::set_batch_mem_op";
        let device = self.device();
        self.set_params(CALL, node, || BatchParams::new(CALL, ops, device))
    }
}

/// One operation of a batch memory operation node as read back: data only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct MemOpParams {
    /// What it does.
    pub kind: MemOpKind,
    /// The address it writes or waits on (0 for operations without one).
    pub addr: u64,
    /// The value it writes or compares with (0 for operations without one).
    pub value: u64,
}

/// What a batch memory operation node runs (`cuGraphBatchMemOpNodeGetParams`).
///
/// ```no_run
/// use cuda_graph::graph::{Graph, MemOp, MemOpKind};
/// let flag = cuda_graph::DeviceBuffer::<u32>::zeroed(1)?;
/// let graph = Graph::new()?;
/// let node = graph.add_batch_mem_op(&[MemOp::write_u32(&flag.ptr(), 5)?], &[])?;
/// let params = graph.batch_mem_op_params(&node)?;
/// assert_eq!((params.ops[0].kind, params.ops[0].value), (MemOpKind::Write32, 5));
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BatchMemOpParams {
    /// The operations, in order.
    pub ops: Vec<MemOpParams>,
}

impl<'a> ReadNode<'a> for BatchMemOpParams {
    type Kind = BatchMemOpSpec;

    fn read(
        _: &View<'a>, _: &CoreState, _: &'static str, node: sys::cudaGraphNode_t,
    ) -> Result<BatchMemOpParams> {
        const CALL: &str = "cudaGetDriverEntryPointByVersion(cuGraphBatchMemOpNodeGetParams)";
        // SAFETY: `GetFn` transcribes cuGraphBatchMemOpNodeGetParams' C signature at 11.7.
        let get: GetFn = unsafe { function(b"cuGraphBatchMemOpNodeGetParams\0", BATCH_VERSION, CALL) }?;
        let mut raw =
            RawNodeParams { ctx: ptr::null_mut(), count: 0, param_array: ptr::null_mut(), flags: 0 };
        // SAFETY: a live batch memory operation node of a family held here (checked by
        // `View::read`); `raw` is writable.
        check_driver(unsafe { get(node, &mut raw) }, "cuGraphBatchMemOpNodeGetParams")?;
        if raw.param_array.is_null() || raw.count == 0 {
            return Ok(BatchMemOpParams { ops: Vec::new() });
        }
        // SAFETY: the driver's array of `count` operations, owned by the node, alive while the
        // family is held; copied at once.
        let ops = unsafe { std::slice::from_raw_parts(raw.param_array, raw.count as usize) };
        let ops = ops.iter().map(RawMemOp::read_back).collect();
        Ok(BatchMemOpParams { ops })
    }
}

node_readers! {
    impl GraphBuilder;
    /// What the batch memory operation node `node` of this graph runs (see
    /// [`BatchMemOpParams`]). Refused for a node of another graph or of another kind.
    ///
    /// ```no_run
    /// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::BatchMemOpNode) -> cuda_graph::Result<()> {
    /// println!("{} operations", graph.batch_mem_op_params(&node)?.ops.len());
    /// # Ok(()) }
    /// ```
    fn batch_mem_op_params -> BatchMemOpParams;
}

node_readers! {
    impl<'a> ChildGraph;
    /// What the batch memory operation node `node` of this view runs (see
    /// [`GraphBuilder::batch_mem_op_params`]).
    fn batch_mem_op_params -> BatchMemOpParams;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ptr<T>(addr: u64, len: usize) -> DevicePtr<T> {
        // SAFETY: never dereferenced; these tests only build operations.
        unsafe { DevicePtr::from_raw(addr, len) }
    }

    #[test]
    fn operations_are_checked_in_bounds_and_aligned() {
        let op = MemOp::write_u32(&ptr(0x1004, 1), 7).unwrap();
        assert_eq!((op.kind(), op.addr(), op.value()), (MemOpKind::Write32, 0x1004, 7));
        let err = MemOp::write_u32(&ptr(0x1002, 1), 7).unwrap_err();
        let unaligned = |err: CudaError, align| {
            assert!(
                matches!(err.refusal(), Some(&Refusal::UnalignedAddress { align: a, .. }) if a == align),
                "{err}"
            );
        };
        unaligned(err, 4);
        unaligned(MemOp::write_u64(&ptr(0x1004, 1), 7).unwrap_err(), 8);
        let err = MemOp::write_u32(&ptr(0x1000, 0), 7).unwrap_err();
        assert!(matches!(err.refusal(), Some(Refusal::Empty(Empty::MemOpPointer))), "{err}");
        let err = BatchParams::new("add", &[], Device::from_ordinal(0)).err().unwrap();
        assert!(matches!(err.refusal(), Some(Refusal::Empty(Empty::MemOps))), "{err}");
    }

    #[test]
    fn operations_lay_out_as_cuda_reads_them() {
        // SAFETY: a made-up address; never launched.
        let wait = unsafe { MemOp::wait_u64(&ptr(0x2000, 1), u64::MAX, WaitCondition::And) }.unwrap();
        let raw = wait.raw();
        assert_eq!((raw.operation, raw.address, raw.flags), (WAIT_VALUE_64, 0x2000, 2));
        // SAFETY: written as `value64` just above.
        assert_eq!(unsafe { raw.value.value64 }, u64::MAX);
        let write = MemOp::write_u32(&ptr(0x3000, 1), 5).unwrap().raw();
        // SAFETY: written as `value` just above.
        assert_eq!((write.operation, unsafe { write.value.value }), (WRITE_VALUE_32, 5));
        assert_eq!(std::mem::offset_of!(RawMemOp, address), 8);
        assert_eq!(std::mem::offset_of!(RawMemOp, flags), 24);
        assert_eq!(std::mem::offset_of!(RawNodeParams, param_array), 16);
    }

    #[test]
    fn kinds_round_trip_through_cudas_codes() {
        let kinds = [
            MemOpKind::Write32,
            MemOpKind::Write64,
            MemOpKind::Wait32(WaitCondition::NotOr),
            MemOpKind::Wait64(WaitCondition::GreaterOrEqual),
            MemOpKind::Other { operation: 6, flags: 1 },
        ];
        for kind in kinds {
            let (operation, flags) = kind.raw();
            assert_eq!(MemOpKind::from_raw(operation, flags), kind);
        }
    }
}
