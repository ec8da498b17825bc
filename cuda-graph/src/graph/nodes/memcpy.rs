//! Memcpy nodes: 1-D copies between device buffers and to and from pinned host memory, set
//! on an exec and read back with the kind of memory of each side. The 2-D and 3-D copies and
//! those of `__device__` variables add memcpy nodes too (`graph::copy2d`, `graph::copy3d`,
//! `graph::symbol`), through the same generic add (`CheckedCopy` and `Copy1D` are this
//! kind's parameters).

use std::ffi::c_void;
use std::fmt;

use crate::runtime as sys;

use super::super::inspect::{node_readers, View};
use super::super::{AsNode, ChildGraph, CoreState, GraphBuilder, GraphExec, LaunchMode, NodeRef};
use super::{checked_bytes, params_of, DeviceLaunchRule, Kind, NodeParams, ReadNode};
use crate::error::{check, CudaError, Result};
use crate::memory::{CheckedCopy, DevicePtr, DeviceRepr, KeepAlive, MemoryKind, PinnedBuffer};

/// Memcpy nodes.
pub(crate) struct MemcpySpec;

impl Kind for MemcpySpec {
    const CODE: u32 = sys::cudaGraphNodeType::cudaGraphNodeTypeMemcpy.0;
    const NAME: &'static str = "memcpy";
    const DEVICE_LAUNCH: DeviceLaunchRule = DeviceLaunchRule::Allowed;
    const IN_CONDITIONAL_BODY: bool = true;
}

super::super::node::typed_nodes! {
    /// A memory copy node, from [`GraphBuilder::add_memcpy`](crate::graph::GraphBuilder::add_memcpy).
    ///
    /// ```no_run
    /// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::MemcpyNode) -> cuda_graph::Result<()> {
    /// graph.add_empty(&[&node])?; // runs after the copy
    /// # Ok(()) }
    /// ```
    MemcpyNode;
}

/// A one-dimensional copy.
pub(crate) struct Copy1D {
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: sys::cudaMemcpyKind,
    pub(crate) keep: Vec<KeepAlive>,
}

impl Copy1D {
    /// `len` elements from `src` to `dst`, both device memory.
    pub(crate) fn device<T>(
        call: &'static str, dst: &DevicePtr<T>, src: &DevicePtr<T>, len: usize,
    ) -> Result<Copy1D> {
        let bytes =
            checked_bytes(call, len, size_of::<T>(), &[("destination", dst.len()), ("source", src.len())])?;
        Ok(Copy1D {
            dst: dst.addr() as *mut c_void,
            src: src.addr() as *const c_void,
            bytes,
            kind: sys::cudaMemcpyKind::cudaMemcpyDeviceToDevice,
            keep: dst.keep_alive().into_iter().chain(src.keep_alive()).collect(),
        })
    }

    /// A copy between raw addresses whose owners the caller passes in `keep`.
    pub(crate) fn raw(
        dst: *mut c_void, src: *const c_void, bytes: usize, kind: sys::cudaMemcpyKind, keep: Vec<KeepAlive>,
    ) -> Copy1D {
        Copy1D { dst, src, bytes, kind, keep }
    }

    /// As `cudaMemcpy3DParms` (what `cudaGraphAddMemcpyNode1D` builds: pitch = width = bytes).
    pub(crate) fn params3d(&self) -> sys::cudaMemcpy3DParms {
        let pitched =
            |ptr: *mut c_void| sys::cudaPitchedPtr { ptr, pitch: self.bytes, xsize: self.bytes, ysize: 1 };
        sys::cudaMemcpy3DParms {
            srcPtr: pitched(self.src.cast_mut()),
            dstPtr: pitched(self.dst),
            extent: sys::cudaExtent { width: self.bytes, height: 1, depth: 1 },
            kind: self.kind,
            ..Default::default()
        }
    }
}

// SAFETY: a `Copy1D`'s parameters point only at its two sides, which its `keep` holds; `set`
// sets a memcpy node with CUDA's typed call from the same `cudaMemcpy3DParms`.
unsafe impl NodeParams for Copy1D {
    type Kind = MemcpySpec;
    type Node = MemcpyNode;

    fn with_raw<R>(
        self, f: impl FnOnce(&mut sys::cudaGraphNodeParams, Vec<KeepAlive>) -> Result<R>,
    ) -> Result<R> {
        let mut params = params_of::<MemcpySpec>();
        params.__bindgen_anon_1.memcpy =
            sys::cudaMemcpyNodeParams { copyParams: self.params3d(), ..Default::default() };
        f(&mut params, self.keep)
    }

    fn node(node: NodeRef, _: &sys::cudaGraphNodeParams) -> MemcpyNode {
        MemcpyNode(node)
    }

    unsafe fn set(
        exec: sys::cudaGraphExec_t, exec_node: sys::cudaGraphNode_t, raw: &mut sys::cudaGraphNodeParams,
    ) -> Result<()> {
        // SAFETY: `raw` was made by `with_raw`, which wrote its memcpy member.
        let copy = unsafe { raw.__bindgen_anon_1.memcpy.copyParams };
        // SAFETY: exec alive; `exec_node` names a memcpy node of it, held by the caller; what
        // `copy` points at is kept by the exec (the caller's promise, `NodeParams::set`).
        check(
            unsafe { sys::cudaGraphExecMemcpyNodeSetParams(exec, exec_node, &copy) },
            "cudaGraphExecMemcpyNodeSetParams",
        )
    }
}

// SAFETY: a checked 2-D or 3-D copy's parameters point only at its two sides, checked to hold
// its rectangle or box, which its `keep` holds; `set` is `Copy1D`'s, from the same
// `cudaMemcpy3DParms`.
unsafe impl NodeParams for CheckedCopy {
    type Kind = MemcpySpec;
    type Node = MemcpyNode;

    fn with_raw<R>(
        self, f: impl FnOnce(&mut sys::cudaGraphNodeParams, Vec<KeepAlive>) -> Result<R>,
    ) -> Result<R> {
        let mut params = params_of::<MemcpySpec>();
        params.__bindgen_anon_1.memcpy =
            sys::cudaMemcpyNodeParams { copyParams: self.params3d(), ..Default::default() };
        f(&mut params, self.keep)
    }

    fn node(node: NodeRef, _: &sys::cudaGraphNodeParams) -> MemcpyNode {
        MemcpyNode(node)
    }

    unsafe fn set(
        exec: sys::cudaGraphExec_t, exec_node: sys::cudaGraphNode_t, raw: &mut sys::cudaGraphNodeParams,
    ) -> Result<()> {
        // SAFETY: the caller's promise, passed on: `Copy1D::set` sets the same parameters.
        unsafe { <Copy1D as NodeParams>::set(exec, exec_node, raw) }
    }
}

impl GraphBuilder {
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
        self.add_params(call, copy, deps)
    }

    /// Adds a copy of `len` elements from pinned host memory `src` into device memory `dst`.
    /// Both stay alive with the graph and its execs.
    ///
    /// The host and the launches never race on `src`: each launch fences it, so that a slice
    /// taken later ([`PinnedBuffer::as_mut_slice`], [`as_slice`](PinnedBuffer::as_slice))
    /// waits for the launches queued before, and a launch while such a slice is alive is
    /// refused ([`GraphExec::launch`](crate::graph::GraphExec::launch) returns
    /// `CudaError::InvalidArgument`). Graphs with this node are for [`HostLaunch`](crate::graph::HostLaunch)
    /// only.
    ///
    /// ```no_run
    /// use cuda_graph::graph::Graph;
    /// let mut input = cuda_graph::PinnedBuffer::from_slice(&[1u32, 2, 3])?;
    /// let device = cuda_graph::DeviceBuffer::<u32>::zeroed(3)?;
    /// let graph = Graph::new()?;
    /// graph.add_memcpy_from_host(&device.ptr(), &input, 3, &[])?;
    /// let exec = graph.instantiate_default()?;
    /// let stream = cuda_graph::Stream::new()?;
    /// exec.launch(&stream)?;
    /// input.as_mut_slice()?.fill(7); // waits for the launch's copy first
    /// exec.launch(&stream)?; // copies the sevens
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_memcpy_from_host<T: DeviceRepr>(
        &self, dst: &DevicePtr<T>, src: &PinnedBuffer<T>, len: usize, deps: &[&dyn AsNode],
    ) -> Result<MemcpyNode> {
        const CALL: &str = "GraphBuilder::add_memcpy_from_host";
        self.add_copy(CALL, pinned_copy(CALL, dst, src, len, true)?, deps)
    }

    /// Adds a copy of `len` elements from device memory `src` into pinned host memory `dst`.
    /// Both stay alive with the graph and its execs.
    ///
    /// The host and the launches never race on `dst`: each launch fences it, so that a slice
    /// taken later ([`PinnedBuffer::as_slice`], [`as_mut_slice`](PinnedBuffer::as_mut_slice))
    /// waits for the copy, and a launch while such a slice is alive is refused
    /// ([`GraphExec::launch`](crate::graph::GraphExec::launch) returns `CudaError::InvalidArgument`).
    /// Graphs with this node are for [`HostLaunch`](crate::graph::HostLaunch) only.
    ///
    /// ```no_run
    /// use cuda_graph::graph::Graph;
    /// let device = cuda_graph::DeviceBuffer::from_slice(&[4u32, 5])?;
    /// let output = cuda_graph::PinnedBuffer::<u32>::zeroed(2)?;
    /// let graph = Graph::new()?;
    /// graph.add_memcpy_to_host(&output, &device.ptr(), 2, &[])?;
    /// let exec = graph.instantiate_default()?;
    /// let stream = cuda_graph::Stream::new()?;
    /// exec.launch(&stream)?;
    /// let result = output.as_slice()?; // waits for the launch's copy
    /// assert_eq!(result, [4, 5]);
    /// assert!(exec.launch(&stream).is_err()); // refused: `result` is still alive
    /// drop(result);
    /// exec.launch(&stream)?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_memcpy_to_host<T: DeviceRepr>(
        &self, dst: &PinnedBuffer<T>, src: &DevicePtr<T>, len: usize, deps: &[&dyn AsNode],
    ) -> Result<MemcpyNode> {
        const CALL: &str = "GraphBuilder::add_memcpy_to_host";
        self.add_copy(CALL, pinned_copy(CALL, src, dst, len, false)?, deps)
    }
}

/// A copy of `len` elements between device memory `device` and pinned host memory `pinned`:
/// into the device when `into_device`, out of it otherwise. Both sides are checked to hold
/// `len` elements and are kept alive by the copy.
fn pinned_copy<T: DeviceRepr>(
    call: &'static str, device: &DevicePtr<T>, pinned: &PinnedBuffer<T>, len: usize, into_device: bool,
) -> Result<Copy1D> {
    let (dst_len, src_len) =
        if into_device { (device.len(), pinned.len()) } else { (pinned.len(), device.len()) };
    let bytes = checked_bytes(call, len, size_of::<T>(), &[("destination", dst_len), ("source", src_len)])?;
    let keep = device.keep_alive().into_iter().chain([pinned.keep_alive()]).collect();
    let (device, host) = (device.addr() as *mut std::ffi::c_void, pinned.as_raw());
    Ok(if into_device {
        Copy1D::raw(device, host, bytes, sys::cudaMemcpyKind::cudaMemcpyHostToDevice, keep)
    } else {
        Copy1D::raw(host, device, bytes, sys::cudaMemcpyKind::cudaMemcpyDeviceToHost, keep)
    })
}

impl<M: LaunchMode> GraphExec<M> {
    /// Changes a device-to-device memcpy node's addresses and length in this exec
    /// (`cudaGraphExecMemcpyNodeSetParams`; CUDA allows 1-D copies within one context).
    ///
    /// ```no_run
    /// # fn f(exec: &mut cuda_graph::graph::GraphExec<cuda_graph::graph::HostLaunch>, node: cuda_graph::graph::MemcpyNode) -> cuda_graph::Result<()> {
    /// let (a, b) = (cuda_graph::DeviceBuffer::<u8>::zeroed(64)?, cuda_graph::DeviceBuffer::<u8>::zeroed(64)?);
    /// exec.set_memcpy(&node, &b.ptr(), &a.ptr(), 64)?;
    /// # Ok(()) }
    /// ```
    pub fn set_memcpy<T: DeviceRepr>(
        &mut self, node: &MemcpyNode, dst: &DevicePtr<T>, src: &DevicePtr<T>, len: usize,
    ) -> Result<()> {
        const CALL: &str = "GraphExec::set_memcpy";
        self.set_params(CALL, node, || Copy1D::device(CALL, dst, src, len))
    }
}

/// What a memcpy node copies (`cudaGraphMemcpyNodeGetParams`), from
/// [`GraphBuilder::memcpy_params`] or [`ChildGraph::memcpy_params`].
///
/// ```no_run
/// use cuda_graph::{graph::Graph, memory::MemoryKind, DeviceBuffer};
/// let (a, b) = (DeviceBuffer::<u32>::zeroed(4)?, DeviceBuffer::<u32>::zeroed(4)?);
/// let graph = Graph::new()?;
/// let copy = graph.add_memcpy(&b.ptr(), &a.ptr(), 4, &[])?;
/// let params = graph.memcpy_params(&copy)?;
/// assert_eq!(params.source.memory(), Some(MemoryKind::Device));
/// assert_eq!(params.bytes(), 16);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemcpyParams {
    /// Where the copy reads.
    pub source: MemcpyEndpoint,
    /// Where the copy writes.
    pub destination: MemcpyEndpoint,
    /// Width (bytes for linear memory, elements for arrays), height and depth of the copy.
    pub extent: [usize; 3],
    /// The direction the node was given.
    pub direction: MemcpyDirection,
}

impl MemcpyParams {
    /// Bytes copied when both sides are linear memory (width × height × depth).
    pub fn bytes(&self) -> usize {
        self.extent.iter().product()
    }

    /// The endpoints, named: `[("source", ..), ("destination", ..)]`.
    ///
    /// ```no_run
    /// # fn f(params: cuda_graph::graph::MemcpyParams) {
    /// for (side, endpoint) in params.sides() {
    ///     println!("{side}: {endpoint}");
    /// }
    /// # }
    /// ```
    pub fn sides(&self) -> [(&'static str, MemcpyEndpoint); 2] {
        [("source", self.source), ("destination", self.destination)]
    }
}

impl<'a> ReadNode<'a> for MemcpyParams {
    type Kind = MemcpySpec;

    /// Reads the node's parameters and the kind of memory of each linear endpoint; the caller
    /// holds the node's family and has checked that it is a live memcpy node.
    fn read(
        _: &View<'a>, _: &CoreState, _: &'static str, node: sys::cudaGraphNode_t,
    ) -> Result<MemcpyParams> {
        let mut raw = sys::cudaMemcpy3DParms::default();
        check(
            // SAFETY: `node` is a live memcpy node of a family the caller holds (checked by
            // graph id and kind); `raw` is writable.
            unsafe { sys::cudaGraphMemcpyNodeGetParams(node, &mut raw) },
            "cudaGraphMemcpyNodeGetParams",
        )?;
        let endpoint = |array: sys::cudaArray_t, at: sys::cudaPitchedPtr, pos: sys::cudaPos| {
            let position = [pos.x, pos.y, pos.z];
            if !array.is_null() {
                return Ok(MemcpyEndpoint::Array { position });
            }
            let memory = MemoryKind::of(at.ptr as u64)?;
            Ok::<_, CudaError>(MemcpyEndpoint::Linear {
                addr: at.ptr as u64,
                pitch: at.pitch,
                memory,
                position,
            })
        };
        Ok(MemcpyParams {
            source: endpoint(raw.srcArray, raw.srcPtr, raw.srcPos)?,
            destination: endpoint(raw.dstArray, raw.dstPtr, raw.dstPos)?,
            extent: [raw.extent.width, raw.extent.height, raw.extent.depth],
            direction: MemcpyDirection::from_code(raw.kind.0),
        })
    }
}

/// One side of a memcpy node.
///
/// ```
/// use cuda_graph::{graph::MemcpyEndpoint, memory::MemoryKind};
/// let side = MemcpyEndpoint::Linear { addr: 0x7000, pitch: 16, memory: MemoryKind::Pinned, position: [0; 3] };
/// assert_eq!(side.memory(), Some(MemoryKind::Pinned));
/// assert_eq!(side.to_string(), "pinned host memory at 0x7000");
/// assert_eq!(MemcpyEndpoint::Array { position: [0; 3] }.memory(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemcpyEndpoint {
    /// Linear (pitched) memory.
    Linear {
        /// The base address.
        addr: u64,
        /// Bytes per row.
        pitch: usize,
        /// What kind of memory `addr` is (`cudaPointerGetAttributes`).
        memory: MemoryKind,
        /// Offset of the copied region from `addr`: x in bytes, y in rows, z in slices.
        position: [usize; 3],
    },
    /// A CUDA array.
    Array {
        /// Offset of the copied region in the array, in elements.
        position: [usize; 3],
    },
}

impl MemcpyEndpoint {
    /// The kind of memory of a linear endpoint; `None` for a CUDA array.
    pub fn memory(&self) -> Option<MemoryKind> {
        match self {
            MemcpyEndpoint::Linear { memory, .. } => Some(*memory),
            MemcpyEndpoint::Array { .. } => None,
        }
    }
}

impl fmt::Display for MemcpyEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemcpyEndpoint::Linear { addr, memory, .. } => write!(f, "{memory} memory at {addr:#x}"),
            MemcpyEndpoint::Array { .. } => f.write_str("a CUDA array"),
        }
    }
}

/// The direction a memcpy node was given (`cudaMemcpyKind`).
///
/// ```
/// use cuda_graph::graph::MemcpyDirection;
/// assert_eq!(MemcpyDirection::from_code(1), MemcpyDirection::HostToDevice);
/// assert_eq!(MemcpyDirection::from_code(4), MemcpyDirection::Inferred);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MemcpyDirection {
    /// Host to host.
    HostToHost,
    /// Host to device.
    HostToDevice,
    /// Device to host.
    DeviceToHost,
    /// Device to device.
    DeviceToDevice,
    /// Inferred by CUDA from the addresses (`cudaMemcpyDefault`).
    Inferred,
    /// A value this crate does not know.
    Unknown(u32),
}

impl MemcpyDirection {
    /// Maps a `cudaMemcpyKind` value.
    pub fn from_code(code: u32) -> MemcpyDirection {
        use sys::cudaMemcpyKind as K;
        match sys::cudaMemcpyKind(code) {
            K::cudaMemcpyHostToHost => MemcpyDirection::HostToHost,
            K::cudaMemcpyHostToDevice => MemcpyDirection::HostToDevice,
            K::cudaMemcpyDeviceToHost => MemcpyDirection::DeviceToHost,
            K::cudaMemcpyDeviceToDevice => MemcpyDirection::DeviceToDevice,
            K::cudaMemcpyDefault => MemcpyDirection::Inferred,
            _ => MemcpyDirection::Unknown(code),
        }
    }
}

node_readers! {
    impl GraphBuilder;
    /// What the memcpy node `node` of this graph copies, with the kind of memory of each
    /// side. Refused for a node of another graph or of another kind.
    ///
    /// ```no_run
    /// use cuda_graph::{graph::Graph, memory::MemoryKind, DeviceBuffer, PinnedBuffer};
    /// let input = PinnedBuffer::from_slice(&[1u32, 2, 3])?;
    /// let device = DeviceBuffer::<u32>::zeroed(3)?;
    /// let graph = Graph::new()?;
    /// let upload = graph.add_memcpy_from_host(&device.ptr(), &input, 3, &[])?;
    /// let params = graph.memcpy_params(&upload)?;
    /// assert_eq!(params.source.memory(), Some(MemoryKind::Pinned));
    /// assert_eq!(params.destination.memory(), Some(MemoryKind::Device));
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    fn memcpy_params -> MemcpyParams;
}

node_readers! {
    impl<'a> ChildGraph;
    /// What the memcpy node `node` of this view copies (see [`GraphBuilder::memcpy_params`]).
    fn memcpy_params -> MemcpyParams;
}

#[cfg(test)]
#[cfg(test)]
mod tests {
    use super::*;
    use crate::refusal::{Bounds, Empty};
    use crate::Refusal;

    fn ptr<T>(addr: u64, len: usize) -> DevicePtr<T> {
        // SAFETY: never dereferenced; these tests only build parameters.
        unsafe { DevicePtr::from_raw(addr, len) }
    }

    #[test]
    fn copies_are_checked_against_both_sides() {
        let (dst, src) = (ptr::<u32>(0x1000, 8), ptr::<u32>(0x2000, 4));
        let copy = Copy1D::device("copy", &dst, &src, 4).unwrap();
        let raw = copy.params3d();
        assert_eq!((raw.extent.width, raw.srcPtr.pitch, raw.dstPtr.ptr as u64), (16, 16, 0x1000));
        let err = Copy1D::device("copy", &dst, &src, 5).err().unwrap();
        assert!(
            matches!(
                err.refusal(),
                Some(Refusal::OutOfBounds(Bounds::Elements { count: 5, side: "source", len: 4 }))
            ),
            "{err}"
        );
        let err = Copy1D::device("copy", &dst, &src, 0).err().unwrap();
        assert!(matches!(err.refusal(), Some(Refusal::Empty(Empty::Elements))), "{err}");
    }

    #[test]
    fn every_copy_direction_maps() {
        let directions: Vec<MemcpyDirection> = (0..6).map(MemcpyDirection::from_code).collect();
        assert_eq!(
            directions,
            [
                MemcpyDirection::HostToHost,
                MemcpyDirection::HostToDevice,
                MemcpyDirection::DeviceToHost,
                MemcpyDirection::DeviceToDevice,
                MemcpyDirection::Inferred,
                MemcpyDirection::Unknown(5),
            ]
        );
    }

    #[test]
    fn endpoints_name_their_memory_and_params_their_size() {
        let device =
            MemcpyEndpoint::Linear { addr: 0x10, pitch: 8, memory: MemoryKind::Device, position: [0; 3] };
        let array = MemcpyEndpoint::Array { position: [1, 0, 0] };
        assert_eq!(device.to_string(), "device memory at 0x10");
        assert_eq!(array.to_string(), "a CUDA array");
        assert_eq!((device.memory(), array.memory()), (Some(MemoryKind::Device), None));
        let params = MemcpyParams {
            source: device,
            destination: array,
            extent: [8, 2, 3],
            direction: MemcpyDirection::Inferred,
        };
        assert_eq!(params.bytes(), 48);
        assert_eq!(params.sides(), [("source", device), ("destination", array)]);
    }
}
