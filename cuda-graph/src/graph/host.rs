//! Nodes that reach the host: host functions, and copies to and from pinned host memory.

use std::sync::Arc;

use crate::runtime as sys;

use super::params::{checked_bytes, node_params_of, Copy1D};
use super::{AsNode, GraphBuilder, MemcpyNode, NodeRef};
use crate::error::Result;
use crate::host_fn::HostCallback;
use crate::memory::{DevicePtr, DeviceRepr, KeepAlive, PinnedBuffer};

/// A host function node, from [`GraphBuilder::add_host`].
///
/// ```no_run
/// # fn f(graph: &cuda_graph::graph::Graph, node: cuda_graph::graph::HostNode) -> cuda_graph::Result<()> {
/// graph.add_empty(&[&node])?; // runs after the host function returned
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HostNode(pub(crate) NodeRef);

impl AsNode for HostNode {
    fn as_node(&self) -> NodeRef {
        self.0
    }
}

impl GraphBuilder {
    /// Adds a node that calls `f` on a CUDA thread each time the graph runs, once its
    /// dependencies finished; nodes after it wait for it to return (`cudaGraphNodeTypeHost`).
    ///
    /// `f` must not call CUDA (CUDA forbids it). A panic in `f` is caught and reported by
    /// [`take_unreported_errors`](crate::take_unreported_errors); the graph goes on. `f` lives as
    /// long as the graph and its execs, and an exec of a graph with host functions waits, when
    /// dropped, for its last launch. CUDA refuses host nodes in conditional bodies and in
    /// device-launch graphs.
    ///
    /// ```no_run
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::sync::Arc;
    /// let runs = Arc::new(AtomicU32::new(0));
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// let counter = runs.clone();
    /// graph.add_host(move || { counter.fetch_add(1, Ordering::SeqCst); }, &[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_host<F>(&self, f: F, deps: &[&dyn AsNode]) -> Result<HostNode>
    where
        F: Fn() + Send + Sync + 'static,
    {
        let callback = HostCallback::new(f);
        let (fn_, user_data) = callback.raw_parts();
        let mut params = node_params_of(sys::cudaGraphNodeType::cudaGraphNodeTypeHost);
        params.__bindgen_anon_1.host = sys::cudaHostNodeParamsV2 { fn_, userData: user_data };
        let keep: Vec<KeepAlive> = vec![Arc::new(callback)];
        self.add_node_with("GraphBuilder::add_host", &mut params, keep, true, deps).map(HostNode)
    }

    /// Adds a copy of `len` elements from pinned host memory `src` into device memory `dst`.
    /// Both stay alive with the graph and its execs.
    ///
    /// The host and the launches never race on `src`: each launch fences it, so that a slice
    /// taken later ([`PinnedBuffer::as_mut_slice`], [`as_slice`](PinnedBuffer::as_slice))
    /// waits for the launches queued before, and a launch while such a slice is alive is
    /// refused ([`GraphExec::launch`](super::GraphExec::launch) returns
    /// `CudaError::InvalidArgument`). Graphs with this node are for [`HostLaunch`](super::HostLaunch)
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
    /// ([`GraphExec::launch`](super::GraphExec::launch) returns `CudaError::InvalidArgument`).
    /// Graphs with this node are for [`HostLaunch`](super::HostLaunch) only.
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
