//! `PitchedBuffer<T>`: a 2-D device allocation with rows padded by CUDA (`cudaMallocPitch`),
//! and its 2-D stream copies (`cudaMemcpy3DAsync` of depth 1) to and from pitched, linear device and
//! pinned host memory.
//!
//! Every copy's rectangle is checked to lie, row by row, inside both sides before CUDA sees it
//! (`memory::copy_bounds`). What keeps the copies sound after the borrows end is what keeps the 1-D
//! copies sound (`memory::async_ops`): device memory is freed only after the work using it,
//! pinned memory is fenced, and copies of pinned memory are refused while capturing.

use std::ffi::c_void;
use std::fmt;

use super::copy_bounds::Extent2D;
use super::pitched_core::PitchedCore;
use super::{DeviceBuffer, DeviceRepr, KeepAlive, PinnedBuffer};
use crate::error::Result;
use crate::stream::Stream;

pitched_type! {
    /// `height` rows of `width` values of `T` in device memory, each row starting `pitch` bytes
    /// after the one before (`cudaMallocPitch`: CUDA pads rows for aligned access). Shared with
    /// copies and graph nodes like a [`DeviceBuffer`]: freed after the last of them.
    ///
    /// ```no_run
    /// use cuda_graph::memory::PitchedBuffer;
    /// let image = PitchedBuffer::<f32>::zeroed(1000, 64)?;
    /// assert!(image.pitch() >= 1000 * 4);
    /// assert_eq!(image.to_vec()?, vec![0.0; 64_000]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub struct PitchedBuffer;
}

impl<T: DeviceRepr> PitchedBuffer<T> {
    /// `height` zeroed rows of `width` elements (`cudaMallocPitch`, then `cudaMemset`;
    /// synchronous like [`DeviceBuffer::zeroed`]). Both must be non-zero.
    ///
    /// ```no_run
    /// let rows = cuda_graph::memory::PitchedBuffer::<u8>::zeroed(3, 2)?;
    /// assert_eq!((rows.width(), rows.height()), (3, 2));
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn zeroed(width: usize, height: usize) -> Result<PitchedBuffer<T>> {
        let extent = Extent2D { width, height }.into();
        Ok(PitchedBuffer { core: PitchedCore::zeroed("PitchedBuffer::zeroed", extent, true)? })
    }

    /// Elements per row.
    ///
    /// ```no_run
    /// assert_eq!(cuda_graph::memory::PitchedBuffer::<u32>::zeroed(5, 2)?.width(), 5);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn width(&self) -> usize {
        self.core.extent.width
    }

    /// Rows.
    ///
    /// ```no_run
    /// assert_eq!(cuda_graph::memory::PitchedBuffer::<u32>::zeroed(5, 2)?.height(), 2);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn height(&self) -> usize {
        self.core.extent.height
    }

    /// Bytes from one row's start to the next's (CUDA's choice, at least `width` elements).
    ///
    /// ```no_run
    /// assert!(cuda_graph::memory::PitchedBuffer::<u32>::zeroed(5, 2)?.pitch() >= 20);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn pitch(&self) -> usize {
        self.core.pitch
    }

    pitched_accessors!("(0, 0)", "PitchedBuffer::<u32>::zeroed(5, 2)?");

    /// The rows, without their padding, `width * height` values (`cudaMemcpy3D` of depth 1,
    /// synchronous, on the legacy stream; ordered as [`DeviceBuffer::to_vec`] is).
    ///
    /// ```no_run
    /// let rows = cuda_graph::memory::PitchedBuffer::<u16>::zeroed(3, 2)?;
    /// assert_eq!(rows.to_vec()?, [0; 6]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.core.to_vec("PitchedBuffer::to_vec")
    }

    /// Queues a copy of `extent` from `src` at `from` (column, row) into this buffer at `at`
    /// on `stream` (`cudaMemcpy3DAsync` of depth 1) and returns at once. Both rectangles must lie inside
    /// their buffers. May be captured (as [`DeviceBuffer::copy_from_device_async`]).
    ///
    /// ```no_run
    /// use cuda_graph::memory::{Extent2D, PitchedBuffer};
    /// let stream = cuda_graph::Stream::new()?;
    /// let (mut dst, src) = (PitchedBuffer::<u32>::zeroed(8, 8)?, PitchedBuffer::<u32>::zeroed(4, 4)?);
    /// dst.copy_rect_from_async((4, 4), &src, (0, 0), Extent2D { width: 4, height: 4 }, &stream)?;
    /// assert!(dst.copy_rect_from_async((5, 4), &src, (0, 0), Extent2D { width: 4, height: 4 }, &stream).is_err());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_rect_from_async(
        &mut self, at: (usize, usize), src: &PitchedBuffer<T>, from: (usize, usize), extent: Extent2D,
        stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "PitchedBuffer::copy_rect_from_async";
        let from = ((from.0, from.1, 0), extent.into());
        self.core.box_from_async(CALL, (at.0, at.1, 0), &src.core, from, stream)
    }

    /// Queues a copy of all of `src`, seen as `height` rows of `src_pitch` elements, into
    /// this buffer on `stream` (`cudaMemcpy3DAsync` of depth 1). `src` must hold them: `src_pitch >=
    /// width` and `(height - 1) * src_pitch + width <= src.len()`. May be captured.
    ///
    /// ```no_run
    /// use cuda_graph::memory::PitchedBuffer;
    /// let stream = cuda_graph::Stream::new()?;
    /// let linear = cuda_graph::DeviceBuffer::from_slice(&[1u32, 2, 3, 4, 5, 6])?;
    /// let mut rows = PitchedBuffer::<u32>::zeroed(3, 2)?;
    /// rows.copy_from_device_async(&linear, 3, &stream)?;
    /// stream.synchronize()?;
    /// assert_eq!(rows.to_vec()?, [1, 2, 3, 4, 5, 6]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_from_device_async(
        &mut self, src: &DeviceBuffer<T>, src_pitch: usize, stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "PitchedBuffer::copy_from_device_async";
        self.core.linear_async(CALL, src, ((src_pitch, self.height()), true), stream)
    }

    /// Queues a copy of pinned `src`, seen as `height` rows of `src_pitch` elements, into
    /// this buffer on `stream`. Writing or dropping `src` waits for the copy (a fence, as
    /// [`DeviceBuffer::copy_from_pinned_async`]). Refused while `stream` is being captured.
    ///
    /// ```no_run
    /// use cuda_graph::memory::PitchedBuffer;
    /// let stream = cuda_graph::Stream::new()?;
    /// let host = cuda_graph::PinnedBuffer::from_slice(&[1u8, 2, 0, 3, 4, 0])?;
    /// let mut rows = PitchedBuffer::<u8>::zeroed(2, 2)?;
    /// rows.copy_from_pinned_async(&host, 3, &stream)?;
    /// stream.synchronize()?;
    /// assert_eq!(rows.to_vec()?, [1, 2, 3, 4]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_from_pinned_async(
        &mut self, src: &PinnedBuffer<T>, src_pitch: usize, stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "PitchedBuffer::copy_from_pinned_async";
        self.core.linear_async(CALL, src, ((src_pitch, self.height()), true), stream)
    }

    /// Queues a copy of this buffer's rows into `dst`, as `height` rows of `dst_pitch`
    /// elements, on `stream` (`cudaMemcpy3DAsync` of depth 1); `dst` must hold them. May be captured.
    ///
    /// ```no_run
    /// use cuda_graph::memory::PitchedBuffer;
    /// let stream = cuda_graph::Stream::new()?;
    /// let rows = PitchedBuffer::<u32>::zeroed(3, 2)?;
    /// let mut linear = cuda_graph::DeviceBuffer::from_slice(&[9u32; 8])?;
    /// rows.copy_to_device_async(&mut linear, 4, &stream)?; // rows at 0 and 4
    /// stream.synchronize()?;
    /// assert_eq!(linear.to_vec()?, [0, 0, 0, 9, 0, 0, 0, 9]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_to_device_async(
        &self, dst: &mut DeviceBuffer<T>, dst_pitch: usize, stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "PitchedBuffer::copy_to_device_async";
        self.core.linear_async(CALL, dst, ((dst_pitch, self.height()), false), stream)
    }

    /// Queues a copy of this buffer's rows into pinned `dst`, as `height` rows of `dst_pitch`
    /// elements, on `stream`. Reading `dst` waits for the copy. Refused while capturing.
    ///
    /// ```no_run
    /// use cuda_graph::memory::PitchedBuffer;
    /// let stream = cuda_graph::Stream::new()?;
    /// let rows = PitchedBuffer::<u8>::zeroed(2, 2)?;
    /// let mut host = cuda_graph::PinnedBuffer::from_slice(&[7u8; 6])?;
    /// rows.copy_to_pinned_async(&mut host, 3, &stream)?;
    /// assert_eq!(host.as_slice()?, [0, 0, 7, 0, 0, 7]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_to_pinned_async(
        &self, dst: &mut PinnedBuffer<T>, dst_pitch: usize, stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "PitchedBuffer::copy_to_pinned_async";
        self.core.linear_async(CALL, dst, ((dst_pitch, self.height()), false), stream)
    }
}
