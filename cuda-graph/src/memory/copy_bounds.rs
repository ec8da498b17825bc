//! The bounds arithmetic of 2-D and 3-D copies: every row of a box kept inside the memory
//! each side owns, checked before CUDA sees the copy, and the checked copy itself as the
//! `cudaMemcpy3DParms` CUDA takes (depth 1 for a 2-D copy).
//!
//! A side is a volume: `depth` slices of `rows` rows of `width` usable elements, rows starting
//! `pitch` bytes apart and slices `pitch * rows` bytes apart. A pitched buffer is one slice, a
//! pitched volume has CUDA's pitch and its own rows and slices; linear memory (a device
//! buffer, a pinned buffer) is seen as rows of a caller-chosen pitch in elements (and, in
//! 3-D, slices of a caller-chosen number of rows), and holds only the rows and slices that
//! fit its length.

use std::ffi::c_void;

use crate::runtime as sys;

use crate::error::{CudaError, Result};
use crate::refusal::{Bounds, CopyBox};
use crate::release::KeepAlive;

/// A rectangle of `width` elements by `height` rows, the shape of a 2-D copy.
///
/// ```
/// let extent = cuda_graph::memory::Extent2D { width: 64, height: 8 };
/// assert_eq!(extent.elements(), Some(512));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent2D {
    /// Elements per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
}

impl Extent2D {
    /// `width * height`, or `None` on overflow.
    ///
    /// ```
    /// assert_eq!(cuda_graph::memory::Extent2D { width: 3, height: 2 }.elements(), Some(6));
    /// ```
    pub fn elements(self) -> Option<usize> {
        self.width.checked_mul(self.height)
    }
}

/// A box of `width` elements by `height` rows by `depth` slices, the shape of a 3-D copy.
///
/// ```
/// let extent = cuda_graph::memory::Extent3D { width: 4, height: 3, depth: 2 };
/// assert_eq!(extent.elements(), Some(24));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent3D {
    /// Elements per row.
    pub width: usize,
    /// Rows per slice.
    pub height: usize,
    /// Slices.
    pub depth: usize,
}

impl Extent3D {
    /// `width * height * depth`, or `None` on overflow.
    ///
    /// ```
    /// let huge = cuda_graph::memory::Extent3D { width: usize::MAX, height: 2, depth: 1 };
    /// assert_eq!(huge.elements(), None);
    /// ```
    pub fn elements(self) -> Option<usize> {
        self.width.checked_mul(self.height)?.checked_mul(self.depth)
    }
}

impl From<Extent2D> for Extent3D {
    /// The rectangle as a box one slice deep.
    ///
    /// ```
    /// use cuda_graph::memory::{Extent2D, Extent3D};
    /// let flat = Extent3D::from(Extent2D { width: 5, height: 2 });
    /// assert_eq!(flat, Extent3D { width: 5, height: 2, depth: 1 });
    /// ```
    fn from(extent: Extent2D) -> Extent3D {
        Extent3D { width: extent.width, height: extent.height, depth: 1 }
    }
}

/// One side of a copy: `base` (the address of element (0, 0, 0)), `depth` slices of `rows`
/// rows of `width` usable elements, rows `pitch` bytes apart, slices `pitch * rows` apart.
/// `flat` sides (one slice, described in 2-D) name rectangles in refusals, others boxes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Volume {
    pub(crate) base: usize,
    pub(crate) pitch: usize,
    pub(crate) width: usize,
    pub(crate) rows: usize,
    pub(crate) depth: usize,
    pub(crate) flat: bool,
}

impl Volume {
    /// One slice of `rows` rows (a pitched buffer, or linear memory seen as rows).
    pub(crate) fn plane(base: usize, pitch: usize, width: usize, rows: usize) -> Volume {
        Volume { base, pitch, width, rows, depth: 1, flat: true }
    }

    /// Linear memory of `len` elements of `size` bytes seen as rows of `pitch` elements,
    /// for `call`; `what` names the side in a refusal.
    pub(crate) fn linear(
        call: &'static str, what: &'static str, base: usize, len: usize, pitch: usize, size: usize,
    ) -> Result<LinearLayout> {
        if pitch == 0 {
            return Err(CudaError::refused(call, crate::Refusal::ZeroPitch { side: what }));
        }
        let pitch_bytes = pitch
            .checked_mul(size)
            .ok_or_else(|| CudaError::refused(call, crate::refusal::Overflow::Pitch { side: what, pitch }))?;
        Ok(LinearLayout { base, len, pitch, pitch_bytes })
    }

    /// The address of element `origin` (column, row, slice) of a box `extent` there, checked
    /// to lie with every row inside the volume (`x + width <= self.width`, `y + height <=
    /// self.rows`, `z + depth <= self.depth`); `what` names the side.
    pub(crate) fn at(
        &self, call: &'static str, what: &'static str, origin: (usize, usize, usize), extent: Extent3D,
        size: usize,
    ) -> Result<usize> {
        let (x, y, z) = origin;
        let fits =
            |start: usize, count: usize, room: usize| start.checked_add(count).is_some_and(|end| end <= room);
        let inside = fits(x, extent.width, self.width)
            && fits(y, extent.height, self.rows)
            && fits(z, extent.depth, self.depth);
        if !inside {
            return Err(CudaError::refused(
                call,
                Bounds::CopyBox {
                    side: what,
                    geometry: Box::new(CopyBox {
                        origin,
                        extent: (extent.width, extent.height, extent.depth),
                        volume: (self.width, self.rows, self.depth),
                        flat: self.flat && z == 0 && extent.depth == 1,
                    }),
                },
            ));
        }
        // In bounds of memory of `pitch * rows * depth` bytes, so no overflow is possible.
        Ok(self.base + z * self.pitch * self.rows + y * self.pitch + x * size)
    }
}

/// Linear memory seen as rows of `pitch` elements, before a copy's width is known.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LinearLayout {
    base: usize,
    len: usize,
    pitch: usize,
    pitch_bytes: usize,
}

impl LinearLayout {
    /// One slice of rows `width` elements wide: refused when `width > pitch` (rows would
    /// overlap); as many rows as `len` holds, the last one needing only `width` elements.
    pub(crate) fn for_width(&self, call: &'static str, what: &'static str, width: usize) -> Result<Volume> {
        self.check_width(call, what, width)?;
        let rows = if self.len < width { 0 } else { (self.len - width) / self.pitch + 1 };
        Ok(Volume::plane(self.base, self.pitch_bytes, width, rows))
    }

    /// Slices of `slice_rows` rows, of which the first `height` are used, `width` elements of
    /// each: refused when `width > pitch` or `height > slice_rows` (slices would overlap); as
    /// many slices as `len` holds, the last one needing only its used rows.
    pub(crate) fn for_box(
        &self, call: &'static str, what: &'static str, width: usize, height: usize, slice_rows: usize,
    ) -> Result<Volume> {
        self.check_width(call, what, width)?;
        if height > slice_rows {
            return Err(CudaError::refused(
                call,
                crate::refusal::Bounds::SliceRows { side: what, height, slice_rows },
            ));
        }
        let overflow =
            || CudaError::refused(call, crate::refusal::Overflow::Slices { side: what, slice_rows });
        let slice = self.pitch.checked_mul(slice_rows).ok_or_else(overflow)?;
        self.pitch_bytes.checked_mul(slice_rows).ok_or_else(overflow)?;
        // The elements a slice's used rows span: `height - 1` whole rows and `width`.
        let used = if height == 0 { 0 } else { (height - 1) * self.pitch + width };
        let depth = match (self.len.checked_sub(used), slice) {
            (None, _) => 0,
            (Some(_), 0) => 0,
            (Some(rest), slice) => rest / slice + 1,
        };
        Ok(Volume { base: self.base, pitch: self.pitch_bytes, width, rows: slice_rows, depth, flat: false })
    }

    fn check_width(&self, call: &'static str, what: &'static str, width: usize) -> Result<()> {
        if width > self.pitch {
            return Err(CudaError::refused(
                call,
                crate::refusal::Bounds::RowWidth { side: what, width, pitch: self.pitch },
            ));
        }
        Ok(())
    }
}

/// Where a copy goes or comes from: a volume and the box's origin (column, row, slice) in it.
pub(crate) struct Side {
    pub(crate) what: &'static str,
    pub(crate) volume: Volume,
    pub(crate) origin: (usize, usize, usize),
}

impl Side {
    /// All of `volume`, from its first element.
    pub(crate) fn whole(what: &'static str, volume: Volume) -> Side {
        Side { what, volume, origin: (0, 0, 0) }
    }

    /// Where a box `extent` of elements of `size` bytes starts on this side, checked to lie
    /// with every row inside it.
    fn start_of(&self, call: &'static str, extent: Extent3D, size: usize) -> Result<CopyEnd> {
        let addr = self.volume.at(call, self.what, self.origin, extent, size)?;
        Ok(CopyEnd { addr, pitch: self.volume.pitch, rows: self.volume.rows })
    }
}

/// One side of a checked copy as CUDA takes it: the address of the box's first element,
/// rows `pitch` bytes apart and slices `pitch * rows` apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CopyEnd {
    pub(crate) addr: usize,
    pub(crate) pitch: usize,
    pub(crate) rows: usize,
}

/// A checked copy of `extent` (bytes per row, rows, slices) from `src` to `dst`, with what it
/// must keep alive.
pub(crate) struct CheckedCopy {
    pub(crate) dst: CopyEnd,
    pub(crate) src: CopyEnd,
    /// As CUDA takes it for memory that is not an array: the width in bytes.
    pub(crate) extent: sys::cudaExtent,
    pub(crate) kind: sys::cudaMemcpyKind,
    pub(crate) keep: Vec<KeepAlive>,
}

impl CheckedCopy {
    /// A copy of `extent` elements of `size` bytes from `src` to `dst`, both checked.
    pub(crate) fn checked(
        call: &'static str, dst: Side, src: Side, extent: Extent3D, size: usize, kind: sys::cudaMemcpyKind,
        keep: Vec<KeepAlive>,
    ) -> Result<CheckedCopy> {
        let (dst, src) = (dst.start_of(call, extent, size)?, src.start_of(call, extent, size)?);
        let width = extent
            .width
            .checked_mul(size)
            .ok_or_else(|| CudaError::refused(call, crate::refusal::Overflow::Row { width: extent.width }))?;
        let extent = sys::cudaExtent { width, height: extent.height, depth: extent.depth };
        Ok(CheckedCopy { dst, src, extent, kind, keep })
    }

    /// Whether nothing is to be copied.
    pub(crate) fn is_empty(&self) -> bool {
        self.extent.width == 0 || self.extent.height == 0 || self.extent.depth == 0
    }

    /// As `cudaMemcpy3DParms` (`cudaMemcpy3D`, `cudaMemcpy3DAsync`, memcpy nodes): each side
    /// a pitched pointer at its box's first element, positions 0.
    pub(crate) fn params3d(&self) -> sys::cudaMemcpy3DParms {
        let pitched = |end: CopyEnd| sys::cudaPitchedPtr {
            ptr: end.addr as *mut c_void,
            pitch: end.pitch,
            xsize: self.extent.width,
            ysize: end.rows,
        };
        sys::cudaMemcpy3DParms {
            srcPtr: pitched(self.src),
            dstPtr: pitched(self.dst),
            extent: self.extent,
            kind: self.kind,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CALL: &str = "copy";
    const D2D: sys::cudaMemcpyKind = sys::cudaMemcpyKind::cudaMemcpyDeviceToDevice;

    fn pitched(width: usize, rows: usize) -> Volume {
        Volume::plane(0x1000, 512, width, rows)
    }

    fn e2(width: usize, height: usize) -> Extent3D {
        Extent2D { width, height }.into()
    }

    /// The refusal `err` carries, which must be one of bounds.
    fn bounds(err: CudaError) -> Bounds {
        match err.refusal() {
            Some(crate::Refusal::OutOfBounds(bounds)) => bounds.clone(),
            _ => panic!("expected a refusal of bounds, got {err}"),
        }
    }

    /// A refused box of a copy, on side `side`.
    fn copy_box(
        side: &'static str, origin: (usize, usize, usize), extent: (usize, usize, usize),
        volume: (usize, usize, usize), flat: bool,
    ) -> Bounds {
        Bounds::CopyBox { side, geometry: Box::new(CopyBox { origin, extent, volume, flat }) }
    }

    #[test]
    fn rectangles_inside_a_pitched_plane_give_their_first_address() {
        let plane = pitched(100, 10);
        let e = e2(20, 3);
        assert_eq!(plane.at(CALL, "dst", (80, 7, 0), e, 4).unwrap(), 0x1000 + 7 * 512 + 80 * 4);
        let err = plane.at(CALL, "destination", (81, 7, 0), e, 4).unwrap_err();
        // The text users read, for a flat side.
        assert_eq!(
            err.to_string(),
            "copy: a 20x3 rectangle at (81, 7) does not fit the destination of 100x10 elements"
        );
        assert_eq!(bounds(err), copy_box("destination", (81, 7, 0), (20, 3, 1), (100, 10, 1), true));
        assert!(plane.at(CALL, "dst", (0, 8, 0), e, 4).is_err(), "rows past the last");
        assert!(plane.at(CALL, "dst", (usize::MAX, 0, 0), e, 4).is_err(), "overflow is refused");
    }

    #[test]
    fn boxes_inside_a_volume_give_their_first_address_and_refusals_name_all_three_sizes() {
        let volume = Volume { base: 0x10_000, pitch: 256, width: 50, rows: 8, depth: 6, flat: false };
        let e = Extent3D { width: 10, height: 3, depth: 2 };
        let first = volume.at(CALL, "source", (40, 5, 4), e, 4).unwrap();
        assert_eq!(first, 0x10_000 + 4 * 256 * 8 + 5 * 256 + 40 * 4);
        let err = volume.at(CALL, "source", (40, 5, 5), e, 4).unwrap_err();
        assert_eq!(bounds(err), copy_box("source", (40, 5, 5), (10, 3, 2), (50, 8, 6), false));
        assert!(volume.at(CALL, "source", (41, 5, 4), e, 4).is_err(), "a column too far");
        assert!(volume.at(CALL, "source", (40, 6, 4), e, 4).is_err(), "a row too far");
        assert!(volume.at(CALL, "source", (0, 0, usize::MAX), e, 4).is_err(), "overflow is refused");
        // A flat side asked for a deeper box names it as a box.
        let err = pitched(100, 10).at(CALL, "destination", (0, 0, 0), e, 4).unwrap_err();
        let deeper = copy_box("destination", (0, 0, 0), (10, 3, 2), (100, 10, 1), false);
        assert_eq!(bounds(err.clone()), deeper);
        assert!(err
            .to_string()
            .ends_with("a 10x3x2 box at (0, 0, 0) does not fit the destination of 100x10x1 elements"));
    }

    #[test]
    fn linear_memory_holds_whole_rows_and_a_last_row_of_the_used_width() {
        // 10 rows of pitch 16, then 8 more elements: an 11th row of width 8 fits, of 9 not.
        let linear = Volume::linear(CALL, "source", 0, 168, 16, 4).unwrap();
        assert_eq!(linear.for_width(CALL, "source", 8).unwrap().rows, 11);
        assert_eq!(linear.for_width(CALL, "source", 9).unwrap().rows, 10);
        assert_eq!(linear.for_width(CALL, "source", 16).unwrap().pitch, 64);
        let err = linear.for_width(CALL, "source", 17).unwrap_err();
        assert_eq!(bounds(err), Bounds::RowWidth { side: "source", width: 17, pitch: 16 });
        let short = Volume::linear(CALL, "source", 0, 3, 16, 4).unwrap();
        assert_eq!(short.for_width(CALL, "source", 4).unwrap().rows, 0);
        let err = Volume::linear(CALL, "source", 0, 3, 0, 4).err().unwrap();
        assert_eq!(err.refusal(), Some(&crate::Refusal::ZeroPitch { side: "source" }));
        let err = Volume::linear(CALL, "source", 0, 3, usize::MAX, 4).err().unwrap();
        let overflow = crate::refusal::Overflow::Pitch { side: "source", pitch: usize::MAX };
        assert_eq!(err.refusal(), Some(&overflow.into()));
    }

    #[test]
    fn linear_memory_holds_whole_slices_and_a_last_slice_of_the_used_rows() {
        // Rows of 10 elements, slices of 4 rows (40 elements); 3 rows of 7 are used per slice,
        // which span 2 * 10 + 7 = 27 elements. 2 slices and 27 elements: a third slice fits.
        let linear = Volume::linear(CALL, "source", 0x4000, 80 + 27, 10, 4).unwrap();
        let volume = linear.for_box(CALL, "source", 7, 3, 4).unwrap();
        assert_eq!((volume.width, volume.rows, volume.depth, volume.pitch), (7, 4, 3, 40));
        let one_short = Volume::linear(CALL, "source", 0, 80 + 26, 10, 4).unwrap();
        assert_eq!(one_short.for_box(CALL, "source", 7, 3, 4).unwrap().depth, 2);
        let err = linear.for_box(CALL, "source", 7, 5, 4).unwrap_err();
        assert_eq!(bounds(err), Bounds::SliceRows { side: "source", height: 5, slice_rows: 4 });
        assert!(linear.for_box(CALL, "source", 11, 3, 4).is_err(), "rows wider than the pitch");
        assert!(linear.for_box(CALL, "source", 7, 3, usize::MAX).is_err(), "slice overflow");
        assert!(linear.for_box(CALL, "source", 7, 3, 0).is_err(), "3 rows in slices of 0");
        let tiny = Volume::linear(CALL, "source", 0, 26, 10, 4).unwrap();
        assert_eq!(tiny.for_box(CALL, "source", 7, 3, 4).unwrap().depth, 0);
    }

    #[test]
    fn a_checked_copy_stays_inside_both_sides_every_row() {
        let dst = Side::whole("destination", pitched(100, 10));
        let src_plane =
            Volume::linear(CALL, "source", 0x9000, 50, 10, 8).unwrap().for_width(CALL, "source", 10).unwrap();
        let src = Side::whole("source", src_plane);
        let copy = CheckedCopy::checked(CALL, dst, src, e2(10, 5), 8, D2D, vec![]).unwrap();
        // The last byte read is inside the 50 elements of the source, the last written inside
        // the destination's rectangle.
        let (src, dst, extent) = (copy.src, copy.dst, copy.extent);
        assert_eq!(src.addr + (extent.height - 1) * src.pitch + extent.width, 0x9000 + 50 * 8);
        assert_eq!(dst.addr + (extent.height - 1) * dst.pitch + extent.width, 0x1000 + 4 * 512 + 80);
        let raw = copy.params3d();
        assert_eq!((raw.extent.width, raw.extent.height, raw.extent.depth), (80, 5, 1));
        assert_eq!((raw.srcPtr.pitch, raw.dstPtr.pitch), (80, 512));

        let dst = Side::whole("destination", pitched(100, 10));
        let src = Side::whole("source", src_plane);
        let err = CheckedCopy::checked(CALL, dst, src, e2(10, 6), 8, D2D, vec![]);
        let err = err.err().unwrap();
        assert_eq!(bounds(err), copy_box("source", (0, 0, 0), (10, 6, 1), (10, 5, 1), true));
    }

    #[test]
    fn a_checked_3d_copy_reaches_exactly_the_last_element_of_linear_memory() {
        // 3 slices of 4 rows of pitch 10 elements, the last slice only as long as its used rows.
        let len = 2 * 40 + 2 * 10 + 7;
        let linear = Volume::linear(CALL, "destination", 0x8000, len, 10, 2).unwrap();
        let dst = Side::whole("destination", linear.for_box(CALL, "destination", 7, 3, 4).unwrap());
        let vol = Volume { base: 0x20_000, pitch: 64, width: 20, rows: 6, depth: 5, flat: false };
        let src = Side { what: "source", volume: vol, origin: (13, 3, 2) };
        let e = Extent3D { width: 7, height: 3, depth: 3 };
        let copy = CheckedCopy::checked(CALL, dst, src, e, 2, D2D, vec![]).unwrap();
        let extent = copy.extent;
        let last = |end: CopyEnd| {
            end.addr
                + (extent.depth - 1) * end.pitch * end.rows
                + (extent.height - 1) * end.pitch
                + extent.width
        };
        assert_eq!(last(copy.dst), 0x8000 + len * 2);
        assert_eq!(last(copy.src), 0x20_000 + 4 * 64 * 6 + 5 * 64 + 20 * 2);
        let raw = copy.params3d();
        assert_eq!((raw.extent.width, raw.extent.height, raw.extent.depth), (14, 3, 3));
        assert_eq!((raw.dstPtr.pitch, raw.dstPtr.ysize, raw.srcPtr.pitch, raw.srcPtr.ysize), (20, 4, 64, 6));
        assert!(!copy.is_empty());

        let dst = Side::whole("destination", linear.for_box(CALL, "destination", 7, 3, 4).unwrap());
        let src = Side { what: "source", volume: vol, origin: (13, 3, 2) };
        let deeper = Extent3D { depth: 4, ..e };
        let err = CheckedCopy::checked(CALL, dst, src, deeper, 2, D2D, vec![]).err().unwrap();
        assert_eq!(bounds(err), copy_box("destination", (0, 0, 0), (7, 3, 4), (7, 4, 3), false));
    }
}
