//! `PitchedCore<T>`: what a [`PitchedBuffer`](super::PitchedBuffer) (one slice, described in
//! 2-D) and a [`PitchedVolume`](super::PitchedVolume) both are: a pitched device allocation of
//! an extent, its host round trips, and its checked copies (`memory::copy_bounds`) to and from
//! other pitched allocations, linear device memory and pinned host memory, queued with what
//! keeps their sides alive (`memory::copy_queue`).

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use crate::runtime as sys;

use super::copy_bounds::{CheckedCopy, Extent3D, Side, Volume};
use super::copy_queue::{
    linear_box_side, linear_side, queue_copy, run_now, whole_copy, LinearSide, DEVICE_TO_DEVICE,
};
use super::{Allocation, DeviceRepr, KeepAlive};
use crate::error::Result;
use crate::stream::Stream;

/// A pitched allocation of `extent` elements of `T`, rows `pitch` bytes apart and slices
/// `pitch * height` apart. `flat` cores (2-D buffers) name rectangles in refusals and see
/// linear memory as one slice of rows.
pub(crate) struct PitchedCore<T: DeviceRepr> {
    pub(super) allocation: Arc<Allocation>,
    pub(super) extent: Extent3D,
    pub(super) pitch: usize,
    flat: bool,
    _element: PhantomData<T>,
}

impl<T: DeviceRepr> PitchedCore<T> {
    /// A zeroed allocation of `extent` (`cudaMallocPitch` when `flat`, else `cudaMalloc3D`;
    /// then `cudaMemset`, synchronous); every size must be non-zero.
    pub(super) fn zeroed(call: &'static str, extent: Extent3D, flat: bool) -> Result<PitchedCore<T>> {
        let row_bytes = super::bytes_for::<T>(extent.width, call)?;
        let (allocation, pitch) = if flat {
            Allocation::pitched(call, row_bytes, extent.height)?
        } else {
            Allocation::volume(call, row_bytes, extent.height, extent.depth)?
        };
        Ok(PitchedCore { allocation: Arc::new(allocation), extent, pitch, flat, _element: PhantomData })
    }

    /// `Debug` as the public type `name`: address, width and height (`flat`) or extent, pitch.
    pub(super) fn debug_as(&self, name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct(name);
        out.field("ptr", &self.as_raw());
        if self.flat {
            out.field("width", &self.extent.width).field("height", &self.extent.height);
        } else {
            out.field("extent", &self.extent);
        }
        out.field("pitch", &self.pitch).finish()
    }

    pub(super) fn as_raw(&self) -> *mut c_void {
        self.allocation.ptr()
    }

    pub(super) fn keep_alive(&self) -> KeepAlive {
        self.allocation.clone()
    }

    /// The volume (a plane when `flat`) its boxes must lie in.
    pub(crate) fn volume(&self) -> Volume {
        let (e, base) = (self.extent, self.allocation.ptr() as usize);
        if self.flat {
            return Volume::plane(base, self.pitch, e.width, e.height);
        }
        Volume { base, pitch: self.pitch, width: e.width, rows: e.height, depth: e.depth, flat: false }
    }

    /// The box `extent` of `src` at `from` copied into this allocation at `at`, both checked.
    pub(crate) fn box_from(
        &self, call: &'static str, at: (usize, usize, usize), src: &PitchedCore<T>,
        (from, extent): ((usize, usize, usize), Extent3D),
    ) -> Result<CheckedCopy> {
        let dst_side = Side { what: "destination", volume: self.volume(), origin: at };
        let src_side = Side { what: "source", volume: src.volume(), origin: from };
        let keep = vec![self.keep_alive(), src.keep_alive()];
        CheckedCopy::checked(call, dst_side, src_side, extent, size_of::<T>(), DEVICE_TO_DEVICE, keep)
    }

    /// Queues [`box_from`](Self::box_from) on `stream`.
    pub(super) fn box_from_async(
        &mut self, call: &'static str, at: (usize, usize, usize), src: &PitchedCore<T>,
        from_extent: ((usize, usize, usize), Extent3D), stream: &Stream,
    ) -> Result<()> {
        let copy = self.box_from(call, at, src, from_extent)?;
        queue_copy::<T>(call, copy, &[&self.allocation, &src.allocation], None, stream)
    }

    /// All of this allocation copied from (`into_self`) or into linear memory at `base` of
    /// `len` elements, seen as slices of `layout` (row pitch, rows per slice; a flat core's
    /// one slice of rows takes only the pitch), kept alive by `other`.
    pub(crate) fn linear_copy(
        &self, call: &'static str, (base, len): (*mut c_void, usize), layout: (usize, usize),
        into_self: bool, kind: sys::cudaMemcpyKind, other: impl IntoIterator<Item = KeepAlive>,
    ) -> Result<CheckedCopy> {
        let what = if into_self { "source" } else { "destination" };
        let linear = if self.flat {
            linear_side::<T>(call, what, base, len, layout.0, self.extent.width)?
        } else {
            linear_box_side::<T>(call, what, base, len, layout, self.extent)?
        };
        let keep = [self.keep_alive()].into_iter().chain(other).collect();
        self.whole(call, linear, into_self, kind, keep)
    }

    /// Queues a copy of all of this allocation from (`into_self`) or into `linear` (a device
    /// buffer: may be captured; a pinned one: fenced, refused while capturing), seen as slices
    /// of `layout`, on `stream`.
    pub(super) fn linear_async(
        &self, call: &'static str, linear: &impl LinearSide<T>, (layout, into_self): ((usize, usize), bool),
        stream: &Stream,
    ) -> Result<()> {
        let (base, len, owner) = linear.span();
        let copy = self.linear_copy(call, (base, len), layout, into_self, linear.kind(into_self), [owner])?;
        linear.queue(call, copy, &[&self.allocation], into_self, stream)
    }

    /// All of this allocation copied from `other` (`into_self`) or into it.
    fn whole(
        &self, call: &'static str, other: Side, into_self: bool, kind: sys::cudaMemcpyKind,
        keep: Vec<KeepAlive>,
    ) -> Result<CheckedCopy> {
        whole_copy(call, (self.volume(), self.extent), other, into_self, size_of::<T>(), kind, keep)
    }

    /// Host memory at `base` of `len` elements holding this extent packed.
    fn packed(&self, call: &'static str, what: &'static str, base: *mut c_void, len: usize) -> Result<Side> {
        let e = self.extent;
        linear_box_side::<T>(call, what, base, len, (e.width.max(1), e.height.max(1)), e)
    }

    /// Writes `data`, packed (element (x, y, z) at `(z * height + y) * width + x`), into all of
    /// this allocation (`cudaMemcpy3D`, synchronous); `data` must hold exactly the extent.
    pub(super) fn write(&self, call: &'static str, data: &[T]) -> Result<()> {
        let host = self.packed(call, "source", data.as_ptr().cast_mut().cast(), data.len())?;
        let kind = sys::cudaMemcpyKind::cudaMemcpyHostToDevice;
        let copy = self.whole(call, host, true, kind, vec![self.keep_alive()])?;
        // SAFETY: the host side is `data`, checked to hold the packed box, and only read.
        unsafe { run_now(self.allocation.device(), &copy) }
    }

    /// The values, packed, without the row padding (`cudaMemcpy3D`, synchronous on the legacy
    /// stream).
    pub(super) fn to_vec(&self, call: &'static str) -> Result<Vec<T>> {
        let len = self.extent.elements().unwrap_or(0); // fits: the allocation holds more bytes
        let mut out = Vec::<T>::with_capacity(len);
        let host = self.packed(call, "destination", out.as_mut_ptr().cast(), len)?;
        let kind = sys::cudaMemcpyKind::cudaMemcpyDeviceToHost;
        let copy = self.whole(call, host, false, kind, vec![self.keep_alive()])?;
        // SAFETY: the host side is `out`'s capacity, checked to hold the packed box; no
        // reference to its uninitialized elements exists.
        unsafe { run_now(self.allocation.device(), &copy) }?;
        // SAFETY: cudaMemcpy3D wrote all `len` elements, and any bit pattern is a valid T.
        unsafe { out.set_len(len) };
        Ok(out)
    }
}
