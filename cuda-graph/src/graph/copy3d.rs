//! 3-D memcpy nodes (`cudaMemcpy3DParms`): between pitched volumes, and between a volume and
//! linear device memory seen as slices of rows. Every box is checked inside both sides before
//! CUDA sees it (`memory::copy_bounds`); the node keeps both sides alive with the graph and
//! its execs, as the 2-D nodes do (`graph::copy2d`).

use super::{AsNode, GraphBuilder, MemcpyNode};
use crate::error::Result;
use crate::memory::{DevicePtr, DeviceRepr, Extent3D, PitchedVolume};

impl GraphBuilder {
    /// Adds a copy of the box `extent` from `src` at `from` (column, row, slice) into `dst` at
    /// `at`. Both boxes must lie inside their volumes, and the extent must not be empty.
    ///
    /// ```no_run
    /// use cuda_graph::memory::{Extent3D, PitchedVolume};
    /// let dst = PitchedVolume::<f32>::zeroed(Extent3D { width: 32, height: 32, depth: 32 })?;
    /// let src = PitchedVolume::<f32>::zeroed(Extent3D { width: 8, height: 8, depth: 8 })?;
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.add_memcpy_3d(&dst, (4, 4, 4), &src, (0, 0, 0), src.extent(), &[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_memcpy_3d<T: DeviceRepr>(
        &self, dst: &PitchedVolume<T>, at: (usize, usize, usize), src: &PitchedVolume<T>,
        from: (usize, usize, usize), extent: Extent3D, deps: &[&dyn AsNode],
    ) -> Result<MemcpyNode> {
        const CALL: &str = "GraphBuilder::add_memcpy_3d";
        self.add_copy_box(CALL, dst.core().box_from(CALL, at, src.core(), (from, extent))?, deps)
    }

    /// Adds a copy of linear device memory `src`, seen as slices of `slice_rows` rows of
    /// `pitch` elements, into all of `dst`. `src` must hold them: `pitch >= width`,
    /// `slice_rows >= height`, and the last slice's used rows inside `src.len()`.
    ///
    /// ```no_run
    /// use cuda_graph::memory::{Extent3D, PitchedVolume};
    /// let linear = cuda_graph::DeviceBuffer::<u32>::zeroed(10 * 6 * 3)?;
    /// let volume = PitchedVolume::<u32>::zeroed(Extent3D { width: 8, height: 4, depth: 3 })?;
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.add_memcpy_3d_from_linear(&volume, &linear.ptr(), 10, 6, &[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_memcpy_3d_from_linear<T: DeviceRepr>(
        &self, dst: &PitchedVolume<T>, src: &DevicePtr<T>, pitch: usize, slice_rows: usize,
        deps: &[&dyn AsNode],
    ) -> Result<MemcpyNode> {
        const CALL: &str = "GraphBuilder::add_memcpy_3d_from_linear";
        self.add_linear_copy(CALL, dst.core(), src, ((pitch, slice_rows), true), deps)
    }

    /// Adds a copy of all of `src` into linear device memory `dst`, as slices of `slice_rows`
    /// rows of `pitch` elements; `dst` must hold them.
    ///
    /// ```no_run
    /// use cuda_graph::memory::{Extent3D, PitchedVolume};
    /// let volume = PitchedVolume::<u32>::zeroed(Extent3D { width: 8, height: 4, depth: 3 })?;
    /// let linear = cuda_graph::DeviceBuffer::<u32>::zeroed(8 * 4 * 3)?;
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.add_memcpy_3d_to_linear(&linear.ptr(), 8, 4, &volume, &[])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn add_memcpy_3d_to_linear<T: DeviceRepr>(
        &self, dst: &DevicePtr<T>, pitch: usize, slice_rows: usize, src: &PitchedVolume<T>,
        deps: &[&dyn AsNode],
    ) -> Result<MemcpyNode> {
        const CALL: &str = "GraphBuilder::add_memcpy_3d_to_linear";
        self.add_linear_copy(CALL, src.core(), dst, ((pitch, slice_rows), false), deps)
    }
}
