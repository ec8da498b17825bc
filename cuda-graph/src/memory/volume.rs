//! `PitchedVolume<T>`: a 3-D device allocation with rows padded by CUDA (`cudaMalloc3D`), and
//! its 3-D copies (`cudaMemcpy3DAsync`, `cudaMemcpy3D`) to and from other volumes, linear
//! device memory, pinned host memory and host slices.
//!
//! Every box is checked to lie, row by row, inside both sides before CUDA sees it
//! (`memory::copy_bounds`); queued copies keep their sides alive as the 2-D and 1-D copies do
//! (`memory::copy_queue`, `memory::async_ops`).

use std::ffi::c_void;
use std::fmt;

use super::copy_bounds::Extent3D;
use super::pitched_core::PitchedCore;
use super::{DeviceBuffer, DeviceRepr, KeepAlive, PinnedBuffer};
use crate::error::Result;
use crate::stream::Stream;

pitched_type! {
    /// `depth` slices of `height` rows of `width` values of `T` in device memory, rows `pitch`
    /// bytes apart and slices `pitch * height` bytes apart (`cudaMalloc3D`: CUDA pads rows for
    /// aligned access). Shared with copies and graph nodes like a [`DeviceBuffer`]: freed after
    /// the last of them.
    ///
    /// Linear memory takes part in its copies as slices of rows: a caller-chosen row pitch and
    /// rows per slice, in elements, of which the volume's width and height are used.
    ///
    /// ```no_run
    /// use cuda_graph::memory::{Extent3D, PitchedVolume};
    /// let volume = PitchedVolume::<f32>::zeroed(Extent3D { width: 100, height: 20, depth: 8 })?;
    /// assert!(volume.pitch() >= 400);
    /// assert_eq!(volume.to_vec()?, vec![0.0; 16_000]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub struct PitchedVolume;
}

impl<T: DeviceRepr> PitchedVolume<T> {
    /// A zeroed volume of `extent` (`cudaMalloc3D`, then `cudaMemset`; synchronous like
    /// [`DeviceBuffer::zeroed`]). Every size must be non-zero.
    ///
    /// ```no_run
    /// use cuda_graph::memory::{Extent3D, PitchedVolume};
    /// let extent = Extent3D { width: 3, height: 2, depth: 4 };
    /// assert_eq!(PitchedVolume::<u8>::zeroed(extent)?.extent(), extent);
    /// assert!(PitchedVolume::<u8>::zeroed(Extent3D { depth: 0, ..extent }).is_err());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn zeroed(extent: Extent3D) -> Result<PitchedVolume<T>> {
        Ok(PitchedVolume { core: PitchedCore::zeroed("PitchedVolume::zeroed", extent, false)? })
    }

    /// A volume of `extent` holding `data`, packed (element (x, y, z) at
    /// `(z * height + y) * width + x`); `data` must hold exactly `extent.elements()` values.
    /// Synchronous, like [`DeviceBuffer::from_slice`].
    ///
    /// ```no_run
    /// use cuda_graph::memory::{Extent3D, PitchedVolume};
    /// let data: Vec<u32> = (0..24).collect();
    /// let volume = PitchedVolume::from_slice(Extent3D { width: 4, height: 3, depth: 2 }, &data)?;
    /// assert_eq!(volume.to_vec()?, data);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn from_slice(extent: Extent3D, data: &[T]) -> Result<PitchedVolume<T>> {
        let volume = PitchedVolume::zeroed(extent)?;
        volume.core.write("PitchedVolume::from_slice", data)?;
        Ok(volume)
    }

    /// The volume's values, packed (element (x, y, z) at `(z * height + y) * width + x`),
    /// without the row padding (`cudaMemcpy3D`, synchronous on the legacy stream; ordered as
    /// [`DeviceBuffer::to_vec`] is).
    ///
    /// ```no_run
    /// use cuda_graph::memory::{Extent3D, PitchedVolume};
    /// let volume = PitchedVolume::<u16>::zeroed(Extent3D { width: 3, height: 2, depth: 2 })?;
    /// assert_eq!(volume.to_vec()?, [0; 12]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.core.to_vec("PitchedVolume::to_vec")
    }

    /// Width, height and depth in elements, rows and slices.
    ///
    /// ```no_run
    /// use cuda_graph::memory::{Extent3D, PitchedVolume};
    /// let extent = Extent3D { width: 5, height: 2, depth: 3 };
    /// assert_eq!(PitchedVolume::<u32>::zeroed(extent)?.extent().depth, 3);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn extent(&self) -> Extent3D {
        self.core.extent
    }

    /// Bytes from one row's start to the next's (CUDA's choice, at least `width` elements);
    /// slices are `pitch * height` bytes apart.
    ///
    /// ```no_run
    /// use cuda_graph::memory::{Extent3D, PitchedVolume};
    /// let volume = PitchedVolume::<u32>::zeroed(Extent3D { width: 5, height: 2, depth: 3 })?;
    /// assert!(volume.pitch() >= 20);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn pitch(&self) -> usize {
        self.core.pitch
    }

    pitched_accessors!(
        "(0, 0, 0)",
        "PitchedVolume::<u32>::zeroed(Extent3D { width: 5, height: 2, depth: 3 })?"
    );

    /// Queues a copy of the box `extent` from `src` at `from` (column, row, slice) into this
    /// volume at `at` on `stream` (`cudaMemcpy3DAsync`) and returns at once. Both boxes must
    /// lie inside their volumes. May be captured (as
    /// [`DeviceBuffer::copy_from_device_async`]).
    ///
    /// ```no_run
    /// use cuda_graph::memory::{Extent3D, PitchedVolume};
    /// let stream = cuda_graph::Stream::new()?;
    /// let big = Extent3D { width: 8, height: 8, depth: 8 };
    /// let (mut dst, src) = (PitchedVolume::<u32>::zeroed(big)?, PitchedVolume::<u32>::zeroed(big)?);
    /// let cube = Extent3D { width: 4, height: 4, depth: 4 };
    /// dst.copy_box_from_async((4, 4, 4), &src, (0, 0, 0), cube, &stream)?;
    /// assert!(dst.copy_box_from_async((4, 4, 5), &src, (0, 0, 0), cube, &stream).is_err());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_box_from_async(
        &mut self, at: (usize, usize, usize), src: &PitchedVolume<T>, from: (usize, usize, usize),
        extent: Extent3D, stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "PitchedVolume::copy_box_from_async";
        self.core.box_from_async(CALL, at, &src.core, (from, extent), stream)
    }

    /// Queues a copy of `src`, seen as slices of `slice_rows` rows of `pitch` elements, into
    /// all of this volume on `stream` (`cudaMemcpy3DAsync`). `src` must hold them: `pitch >=
    /// width`, `slice_rows >= height`, and the last slice's used rows inside `src.len()`.
    /// May be captured.
    ///
    /// ```no_run
    /// use cuda_graph::memory::{Extent3D, PitchedVolume};
    /// let stream = cuda_graph::Stream::new()?;
    /// let linear = cuda_graph::DeviceBuffer::from_slice(&[1u32, 2, 3, 4, 5, 6, 7, 8])?;
    /// let mut volume = PitchedVolume::<u32>::zeroed(Extent3D { width: 2, height: 2, depth: 2 })?;
    /// volume.copy_from_device_async(&linear, 2, 2, &stream)?;
    /// stream.synchronize()?;
    /// assert_eq!(volume.to_vec()?, [1, 2, 3, 4, 5, 6, 7, 8]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_from_device_async(
        &mut self, src: &DeviceBuffer<T>, pitch: usize, slice_rows: usize, stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "PitchedVolume::copy_from_device_async";
        self.core.linear_async(CALL, src, ((pitch, slice_rows), true), stream)
    }

    /// Queues a copy of pinned `src`, seen as slices of `slice_rows` rows of `pitch`
    /// elements, into all of this volume on `stream`. Writing or dropping `src` waits for the
    /// copy (a fence, as [`DeviceBuffer::copy_from_pinned_async`]). Refused while `stream` is
    /// being captured.
    ///
    /// ```no_run
    /// use cuda_graph::memory::{Extent3D, PitchedVolume};
    /// let stream = cuda_graph::Stream::new()?;
    /// let host = cuda_graph::PinnedBuffer::from_slice(&[1u8, 0, 2, 0, 3, 0, 4])?;
    /// let mut volume = PitchedVolume::<u8>::zeroed(Extent3D { width: 1, height: 2, depth: 2 })?;
    /// volume.copy_from_pinned_async(&host, 2, 2, &stream)?;
    /// stream.synchronize()?;
    /// assert_eq!(volume.to_vec()?, [1, 2, 3, 4]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_from_pinned_async(
        &mut self, src: &PinnedBuffer<T>, pitch: usize, slice_rows: usize, stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "PitchedVolume::copy_from_pinned_async";
        self.core.linear_async(CALL, src, ((pitch, slice_rows), true), stream)
    }

    /// Queues a copy of all of this volume into `dst`, as slices of `slice_rows` rows of
    /// `pitch` elements, on `stream` (`cudaMemcpy3DAsync`); `dst` must hold them. What lies
    /// between the rows and slices keeps its values. May be captured.
    ///
    /// ```no_run
    /// use cuda_graph::memory::{Extent3D, PitchedVolume};
    /// let stream = cuda_graph::Stream::new()?;
    /// let volume = PitchedVolume::<u32>::zeroed(Extent3D { width: 2, height: 1, depth: 2 })?;
    /// let mut linear = cuda_graph::DeviceBuffer::from_slice(&[9u32; 8])?;
    /// volume.copy_to_device_async(&mut linear, 3, 2, &stream)?; // slices at 0 and 6
    /// stream.synchronize()?;
    /// assert_eq!(linear.to_vec()?, [0, 0, 9, 9, 9, 9, 0, 0]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_to_device_async(
        &self, dst: &mut DeviceBuffer<T>, pitch: usize, slice_rows: usize, stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "PitchedVolume::copy_to_device_async";
        self.core.linear_async(CALL, dst, ((pitch, slice_rows), false), stream)
    }

    /// Queues a copy of all of this volume into pinned `dst`, as slices of `slice_rows` rows
    /// of `pitch` elements, on `stream`. Reading `dst` waits for the copy. Refused while
    /// capturing.
    ///
    /// ```no_run
    /// use cuda_graph::memory::{Extent3D, PitchedVolume};
    /// let stream = cuda_graph::Stream::new()?;
    /// let volume = PitchedVolume::<u8>::zeroed(Extent3D { width: 2, height: 1, depth: 2 })?;
    /// let mut host = cuda_graph::PinnedBuffer::from_slice(&[7u8; 5])?;
    /// volume.copy_to_pinned_async(&mut host, 3, 1, &stream)?;
    /// assert_eq!(host.as_slice()?, [0, 0, 7, 0, 0]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_to_pinned_async(
        &self, dst: &mut PinnedBuffer<T>, pitch: usize, slice_rows: usize, stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "PitchedVolume::copy_to_pinned_async";
        self.core.linear_async(CALL, dst, ((pitch, slice_rows), false), stream)
    }
}
