//! 2-D memcpy nodes (`cudaMemcpy3DParms` of depth 1): between pitched buffers, and between
//! a pitched buffer and linear device memory seen as rows of a given pitch. Every rectangle is
//! checked inside both sides before CUDA sees it (`memory::copy_bounds`); the node keeps both
//! sides alive with the graph and its execs.

use super::{AsNode, GraphBuilder, MemcpyNode};
use crate::error::refusal::Empty;
use crate::error::{CudaError, Result};
use crate::memory::{
    CheckedCopy, DevicePtr, DeviceRepr, Extent2D, PitchedBuffer, PitchedCore, DEVICE_TO_DEVICE,
};

impl GraphBuilder {
    /// Adds a copy of `extent` from `src` at `from` (column, row) into `dst` at `at`. Both
    /// rectangles must lie inside their buffers, and the extent must not be empty.
    ///
    /// ```no_run
    /// use cuda_graph::memory::{Extent2D, PitchedBuffer};
    /// let (dst, src) = (PitchedBuffer::<f32>::zeroed(64, 64)?, PitchedBuffer::<f32>::zeroed(16, 16)?);
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.add_memcpy_2d(&dst, (8, 8), &src, (0, 0), Extent2D { width: 16, height: 16 }, &[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_memcpy_2d<T: DeviceRepr>(
        &self, dst: &PitchedBuffer<T>, at: (usize, usize), src: &PitchedBuffer<T>, from: (usize, usize),
        extent: Extent2D, deps: &[&dyn AsNode],
    ) -> Result<MemcpyNode> {
        const CALL: &str = "GraphBuilder::add_memcpy_2d";
        let from = ((from.0, from.1, 0), extent.into());
        self.add_copy_box(CALL, dst.core().box_from(CALL, (at.0, at.1, 0), src.core(), from)?, deps)
    }

    /// Adds a copy of linear device memory `src`, seen as `dst.height()` rows of `src_pitch`
    /// elements, into all of `dst`. `src` must hold them: `src_pitch >= dst.width()` and
    /// `(height - 1) * src_pitch + width <= src.len()`.
    ///
    /// ```no_run
    /// use cuda_graph::memory::PitchedBuffer;
    /// let linear = cuda_graph::DeviceBuffer::<u32>::zeroed(40)?;
    /// let rows = PitchedBuffer::<u32>::zeroed(8, 4)?;
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.add_memcpy_2d_from_linear(&rows, &linear.ptr(), 10, &[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_memcpy_2d_from_linear<T: DeviceRepr>(
        &self, dst: &PitchedBuffer<T>, src: &DevicePtr<T>, src_pitch: usize, deps: &[&dyn AsNode],
    ) -> Result<MemcpyNode> {
        const CALL: &str = "GraphBuilder::add_memcpy_2d_from_linear";
        self.add_linear_copy(CALL, dst.core(), src, ((src_pitch, dst.height()), true), deps)
    }

    /// Adds a copy of all of `src` into linear device memory `dst`, as `src.height()` rows of
    /// `dst_pitch` elements; `dst` must hold them.
    ///
    /// ```no_run
    /// use cuda_graph::memory::PitchedBuffer;
    /// let rows = PitchedBuffer::<u32>::zeroed(8, 4)?;
    /// let linear = cuda_graph::DeviceBuffer::<u32>::zeroed(32)?;
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.add_memcpy_2d_to_linear(&linear.ptr(), 8, &rows, &[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_memcpy_2d_to_linear<T: DeviceRepr>(
        &self, dst: &DevicePtr<T>, dst_pitch: usize, src: &PitchedBuffer<T>, deps: &[&dyn AsNode],
    ) -> Result<MemcpyNode> {
        const CALL: &str = "GraphBuilder::add_memcpy_2d_to_linear";
        self.add_linear_copy(CALL, src.core(), dst, ((dst_pitch, src.height()), false), deps)
    }

    /// Adds a copy of all of `core` from (`into_core`) or into `linear` device memory, seen
    /// as slices of `layout` (row pitch, rows per slice), as a memcpy node.
    pub(super) fn add_linear_copy<T: DeviceRepr>(
        &self, call: &'static str, core: &PitchedCore<T>, linear: &DevicePtr<T>,
        (layout, into_core): ((usize, usize), bool), deps: &[&dyn AsNode],
    ) -> Result<MemcpyNode> {
        let side = (linear.addr() as _, linear.len());
        let copy = core.linear_copy(call, side, layout, into_core, DEVICE_TO_DEVICE, linear.keep_alive())?;
        self.add_copy_box(call, copy, deps)
    }

    /// Adds `copy` (2-D or 3-D, checked) as a memcpy node keeping its sides with the graph.
    pub(super) fn add_copy_box(
        &self, call: &'static str, copy: CheckedCopy, deps: &[&dyn AsNode],
    ) -> Result<MemcpyNode> {
        if copy.is_empty() {
            return Err(CudaError::refused(call, Empty::Extent));
        }
        crate::memory::check_owners_on(&copy.keep, self.device(), call)?;
        self.add_params(call, copy, deps)
    }
}
