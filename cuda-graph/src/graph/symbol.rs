//! Memcpy nodes to and from `__device__` variables ([`DeviceSymbol`]): the variable is looked
//! up on the graph's device and checked (size, offset and length) before CUDA sees the node,
//! which then copies at its address like the 1-D memcpy nodes (`graph::nodes::memcpy`)
//! and keeps a module's variable loaded with the graph.

use super::{AsNode, GraphBuilder, MemcpyNode};
use crate::error::Result;
use crate::kernel::DeviceSymbol;
use crate::memory::{DevicePtr, DeviceRepr};
use crate::PinnedBuffer;

impl GraphBuilder {
    /// Adds a copy of `len` elements of device memory `src` into `symbol` at element
    /// `offset`.
    ///
    /// ```no_run
    /// cuda_graph::device_symbols! { static table: [u32; 16]; }
    /// let data = cuda_graph::DeviceBuffer::from_slice(&[3u32; 4])?;
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.add_memcpy_to_symbol(table(), 12, &data.ptr(), 4, &[])?;
    /// assert!(graph.add_memcpy_to_symbol(table(), 13, &data.ptr(), 4, &[]).is_err());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_memcpy_to_symbol<T: DeviceRepr>(
        &self, symbol: &DeviceSymbol<T>, offset: usize, src: &DevicePtr<T>, len: usize, deps: &[&dyn AsNode],
    ) -> Result<MemcpyNode> {
        let dst = symbol.range_on(self.device(), "GraphBuilder::add_memcpy_to_symbol", offset, len)?;
        self.add_memcpy(&dst, src, len, deps)
    }

    /// Adds a copy of `len` elements of `symbol` from element `offset` into device memory
    /// `dst`.
    ///
    /// ```no_run
    /// cuda_graph::device_symbols! { static table: [u32; 16]; }
    /// let out = cuda_graph::DeviceBuffer::<u32>::zeroed(16)?;
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.add_memcpy_from_symbol(&out.ptr(), table(), 0, 16, &[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_memcpy_from_symbol<T: DeviceRepr>(
        &self, dst: &DevicePtr<T>, symbol: &DeviceSymbol<T>, offset: usize, len: usize, deps: &[&dyn AsNode],
    ) -> Result<MemcpyNode> {
        let src = symbol.range_on(self.device(), "GraphBuilder::add_memcpy_from_symbol", offset, len)?;
        self.add_memcpy(dst, &src, len, deps)
    }

    /// Adds a copy of `len` elements of pinned `src` into `symbol` at element `offset`,
    /// fenced at each launch as [`add_memcpy_from_host`](Self::add_memcpy_from_host).
    ///
    /// ```no_run
    /// cuda_graph::device_symbols! { static table: [u32; 16]; }
    /// let input = cuda_graph::PinnedBuffer::from_slice(&[1u32; 16])?;
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.add_memcpy_to_symbol_from_host(table(), 0, &input, 16, &[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_memcpy_to_symbol_from_host<T: DeviceRepr>(
        &self, symbol: &DeviceSymbol<T>, offset: usize, src: &PinnedBuffer<T>, len: usize,
        deps: &[&dyn AsNode],
    ) -> Result<MemcpyNode> {
        const CALL: &str = "GraphBuilder::add_memcpy_to_symbol_from_host";
        let dst = symbol.range_on(self.device(), CALL, offset, len)?;
        self.add_memcpy_from_host(&dst, src, len, deps)
    }

    /// Adds a copy of `len` elements of `symbol` from element `offset` into pinned `dst`,
    /// fenced at each launch as [`add_memcpy_to_host`](Self::add_memcpy_to_host).
    ///
    /// ```no_run
    /// cuda_graph::device_symbols! { static table: [u32; 16]; }
    /// let output = cuda_graph::PinnedBuffer::<u32>::zeroed(4)?;
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.add_memcpy_from_symbol_to_host(&output, table(), 12, 4, &[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_memcpy_from_symbol_to_host<T: DeviceRepr>(
        &self, dst: &PinnedBuffer<T>, symbol: &DeviceSymbol<T>, offset: usize, len: usize,
        deps: &[&dyn AsNode],
    ) -> Result<MemcpyNode> {
        const CALL: &str = "GraphBuilder::add_memcpy_from_symbol_to_host";
        let src = symbol.range_on(self.device(), CALL, offset, len)?;
        self.add_memcpy_to_host(dst, &src, len, deps)
    }
}
