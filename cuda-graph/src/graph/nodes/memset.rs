//! Memset nodes: a fill of 1-, 2- or 4-byte elements, set on an exec and read back.

use std::ffi::c_void;

use crate::runtime as sys;

use super::super::inspect::{node_readers, View};
use super::super::{AsNode, ChildGraph, CoreState, GraphBuilder, GraphExec, LaunchMode, NodeRef};
use super::{checked_bytes, copy_fields, params_of, DeviceLaunchRule, Kind, NodeParams, ReadNode};
use crate::error::{check, Result};
use crate::memory::{DevicePtr, KeepAlive, MemoryKind};

/// Memset nodes.
pub(crate) struct MemsetSpec;

impl Kind for MemsetSpec {
    const CODE: u32 = sys::cudaGraphNodeType::cudaGraphNodeTypeMemset.0;
    const NAME: &'static str = "memset";
    const DEVICE_LAUNCH: DeviceLaunchRule = DeviceLaunchRule::Allowed;
    const IN_CONDITIONAL_BODY: bool = true;
}

super::super::node::typed_nodes! {
    /// A memset node, from [`GraphBuilder::add_memset`](crate::graph::GraphBuilder::add_memset).
    ///
    /// ```no_run
    /// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::MemsetNode) -> cuda_graph::Result<()> {
    /// graph.add_empty(&[&node])?; // runs after the memset
    /// # Ok(()) }
    /// ```
    MemsetNode;
}

mod sealed {
    pub trait Sealed {}
}

/// A value a memset node can write: 1, 2 or 4 bytes wide (`u8`, `i8`, `u16`, `i16`, `u32`,
/// `i32`, `f32`), the element sizes CUDA's memset supports.
///
/// ```
/// use cuda_graph::graph::MemsetElement;
/// assert_eq!(1.0f32.bits(), 0x3f80_0000);
/// assert_eq!((-1i16).bits(), 0xffff);
/// ```
pub trait MemsetElement: sealed::Sealed + Copy {
    /// The value's bits, zero-extended to 32.
    fn bits(self) -> u32;
}

macro_rules! memset_elements {
    ($($t:ty => $bits:expr),*) => { $(
        impl sealed::Sealed for $t {}
        impl MemsetElement for $t {
            fn bits(self) -> u32 {
                #[allow(clippy::redundant_closure_call)]
                ($bits)(self)
            }
        }
    )* };
}
memset_elements!(
    u8 => |v: u8| v as u32, i8 => |v: i8| v as u8 as u32,
    u16 => |v: u16| v as u32, i16 => |v: i16| v as u16 as u32,
    u32 => |v: u32| v, i32 => |v: i32| v as u32, f32 => |v: f32| v.to_bits()
);

/// A one-dimensional fill.
pub(crate) struct Fill {
    dst: *mut c_void,
    value: u32,
    element_size: u32,
    width: usize,
    pub(crate) keep: Vec<KeepAlive>,
}

impl Fill {
    /// `len` elements of `dst` set to `value`.
    pub(crate) fn new<T: MemsetElement>(
        call: &'static str, dst: &DevicePtr<T>, value: T, len: usize,
    ) -> Result<Fill> {
        checked_bytes(call, len, size_of::<T>(), &[("destination", dst.len())])?;
        Ok(Fill {
            dst: dst.addr() as *mut c_void,
            value: value.bits(),
            element_size: size_of::<T>() as u32,
            width: len,
            keep: dst.keep_alive().into_iter().collect(),
        })
    }

    pub(crate) fn raw(&self) -> sys::cudaMemsetParams {
        sys::cudaMemsetParams {
            dst: self.dst,
            pitch: 0,
            value: self.value,
            elementSize: self.element_size,
            width: self.width,
            height: 1,
        }
    }
}

// SAFETY: a `Fill`'s parameters point only at its destination, which its `keep` holds; `set`
// sets a memset node with CUDA's typed call from the same fields.
unsafe impl NodeParams for Fill {
    type Kind = MemsetSpec;
    type Node = MemsetNode;

    fn with_raw<R>(
        self, f: impl FnOnce(&mut sys::cudaGraphNodeParams, Vec<KeepAlive>) -> Result<R>,
    ) -> Result<R> {
        let mut params = params_of::<MemsetSpec>();
        params.__bindgen_anon_1.memset = copy_fields!(self.raw() => sys::cudaMemsetParamsV2 {
            dst, pitch, value, elementSize, width, height
        });
        f(&mut params, self.keep)
    }

    fn node(node: NodeRef, _: &sys::cudaGraphNodeParams) -> MemsetNode {
        MemsetNode(node)
    }

    unsafe fn set(
        exec: sys::cudaGraphExec_t, exec_node: sys::cudaGraphNode_t, raw: &mut sys::cudaGraphNodeParams,
    ) -> Result<()> {
        // SAFETY: `raw` was made by `with_raw`, which wrote its memset member.
        let v2 = unsafe { raw.__bindgen_anon_1.memset };
        let classic =
            copy_fields!(v2 => sys::cudaMemsetParams { dst, pitch, value, elementSize, width, height });
        // SAFETY: exec alive; `exec_node` names a memset node of it, held by the caller; what
        // `classic` points at is kept by the exec (the caller's promise, `NodeParams::set`).
        check(
            unsafe { sys::cudaGraphExecMemsetNodeSetParams(exec, exec_node, &classic) },
            "cudaGraphExecMemsetNodeSetParams",
        )
    }
}

impl GraphBuilder {
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
        self.add_params("GraphBuilder::add_memset", fill, deps)
    }
}

impl<M: LaunchMode> GraphExec<M> {
    /// Changes a memset node's destination, value and length in this exec
    /// (`cudaGraphExecMemsetNodeSetParams`; the element size must stay the same).
    ///
    /// ```no_run
    /// # fn f(exec: &mut cuda_graph::graph::GraphExec<cuda_graph::graph::HostLaunch>, node: cuda_graph::graph::MemsetNode) -> cuda_graph::Result<()> {
    /// let data = cuda_graph::DeviceBuffer::<u32>::zeroed(64)?;
    /// exec.set_memset(&node, &data.ptr(), 7u32, 64)?;
    /// # Ok(()) }
    /// ```
    pub fn set_memset<T: MemsetElement>(
        &mut self, node: &MemsetNode, dst: &DevicePtr<T>, value: T, len: usize,
    ) -> Result<()> {
        const CALL: &str = "GraphExec::set_memset";
        self.set_params(CALL, node, || Fill::new(CALL, dst, value, len))
    }
}

/// What a memset node fills (`cudaGraphMemsetNodeGetParams`).
///
/// ```no_run
/// use cuda_graph::{graph::Graph, DeviceBuffer};
/// let data = DeviceBuffer::<u32>::zeroed(64)?;
/// let graph = Graph::new()?;
/// let fill = graph.add_memset(&data.ptr(), 7u32, 64, &[])?;
/// let params = graph.memset_params(&fill)?;
/// assert_eq!((params.value, params.element_size, params.width), (7, 4, 64));
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemsetParams {
    /// The address filled.
    pub addr: u64,
    /// What kind of memory `addr` is.
    pub memory: MemoryKind,
    /// The value's bits (zero-extended to 32).
    pub value: u32,
    /// Bytes per element: 1, 2 or 4.
    pub element_size: u32,
    /// Elements per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Bytes from one row to the next (unused for one row).
    pub pitch: usize,
}

impl<'a> ReadNode<'a> for MemsetParams {
    type Kind = MemsetSpec;

    fn read(
        _: &View<'a>, _: &CoreState, _: &'static str, node: sys::cudaGraphNode_t,
    ) -> Result<MemsetParams> {
        let mut raw = sys::cudaMemsetParams::default();
        // SAFETY: a live memset node of a family held here (checked by `View::read`); `raw` is
        // writable.
        check(unsafe { sys::cudaGraphMemsetNodeGetParams(node, &mut raw) }, "cudaGraphMemsetNodeGetParams")?;
        Ok(MemsetParams {
            addr: raw.dst as u64,
            memory: MemoryKind::of(raw.dst as u64)?,
            value: raw.value,
            element_size: raw.elementSize,
            width: raw.width,
            height: raw.height,
            pitch: raw.pitch,
        })
    }
}

node_readers! {
    impl GraphBuilder;
    /// What the memset node `node` of this graph fills. Refused for a node of another graph
    /// or of another kind.
    ///
    /// ```no_run
    /// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::MemsetNode) -> cuda_graph::Result<()> {
    /// println!("fills {} elements", graph.memset_params(&node)?.width);
    /// # Ok(()) }
    /// ```
    fn memset_params -> MemsetParams;
}

node_readers! {
    impl<'a> ChildGraph;
    /// What the memset node `node` of this view fills (see [`GraphBuilder::memset_params`]).
    fn memset_params -> MemsetParams;
}

#[cfg(test)]
#[cfg(test)]
mod tests {
    use super::*;

    fn ptr<T>(addr: u64, len: usize) -> DevicePtr<T> {
        // SAFETY: never dereferenced; these tests only build parameters.
        unsafe { DevicePtr::from_raw(addr, len) }
    }

    #[test]
    fn fills_carry_the_element_size_and_bits() {
        let fill = Fill::new("fill", &ptr::<f32>(0x1000, 10), 2.0f32, 10).unwrap();
        let raw = fill.raw();
        assert_eq!((raw.value, raw.elementSize, raw.width, raw.height), (0x4000_0000, 4, 10, 1));
        let bytes = Fill::new("fill", &ptr::<i8>(0x1000, 3), -2i8, 3).unwrap().raw();
        assert_eq!((bytes.value, bytes.elementSize), (0xfe, 1));
        assert!(Fill::new("fill", &ptr::<u16>(0x1000, 3), 1u16, 4).is_err());
    }
}
