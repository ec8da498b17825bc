//! Two-dimensional copies: the bounds arithmetic that keeps every row of a rectangle inside
//! the memory each side owns, checked before CUDA sees the copy, and the checked copy itself
//! in the forms CUDA takes (`cudaMemcpy2DAsync`'s arguments, `cudaMemcpy3DParms` of depth 1).
//!
//! A side is a plane: rows of `width` usable elements whose starts are `pitch` bytes apart.
//! A pitched buffer's plane is its width, height and CUDA's pitch; linear memory (a device
//! buffer, a pinned buffer) is seen as rows of a caller-chosen pitch in elements, and its
//! plane holds only the rows that fit its length whole.

use std::ffi::c_void;

use cudart_graph_sys as sys;

use crate::error::{CudaError, Result};
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

/// One side of a 2-D copy: `base` (the address of element (0, 0)), rows of `width` usable
/// elements starting `pitch` bytes apart, `rows` of them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plane {
    pub(crate) base: usize,
    pub(crate) pitch: usize,
    pub(crate) width: usize,
    pub(crate) rows: usize,
}

impl Plane {
    /// Linear memory of `len` elements of `size` bytes seen as rows of `pitch` elements,
    /// for `call`; `what` names the side in a refusal. Only whole rows count: the last row
    /// may be short only by what follows its `width` used elements, which `rect` checks.
    pub(crate) fn linear(
        call: &'static str,
        what: &str,
        base: usize,
        len: usize,
        pitch: usize,
        size: usize,
    ) -> Result<LinearPlane> {
        if pitch == 0 {
            return Err(CudaError::invalid(call, format!("the {what}'s row pitch is 0 elements")));
        }
        let pitch_bytes = pitch.checked_mul(size).ok_or_else(|| {
            CudaError::invalid(call, format!("the {what}'s pitch of {pitch} elements overflows"))
        })?;
        Ok(LinearPlane { base, len, pitch, pitch_bytes })
    }

    /// The address of element (`x`, `y`) of a rectangle `extent` at that origin, checked
    /// to lie with every row inside the plane (`x + width <= self.width`,
    /// `y + height <= self.rows`); `what` names the side.
    pub(crate) fn rect(
        &self,
        call: &'static str,
        what: &str,
        origin: (usize, usize),
        extent: Extent2D,
        size: usize,
    ) -> Result<usize> {
        let (x, y) = origin;
        let fits =
            |start: usize, count: usize, room: usize| start.checked_add(count).is_some_and(|end| end <= room);
        if !fits(x, extent.width, self.width) || !fits(y, extent.height, self.rows) {
            return Err(CudaError::invalid(
                call,
                format!(
                    "a {}x{} rectangle at ({x}, {y}) does not fit the {what} of {}x{} elements",
                    extent.width, extent.height, self.width, self.rows
                ),
            ));
        }
        // In bounds of an allocation of `pitch * rows` bytes, so no overflow is possible.
        Ok(self.base + y * self.pitch + x * size)
    }
}

/// Linear memory seen as rows of `pitch` elements, before a copy's width is known.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LinearPlane {
    base: usize,
    len: usize,
    pitch: usize,
    pitch_bytes: usize,
}

impl LinearPlane {
    /// The plane of rows `width` elements wide: refused when `width > pitch` (rows would
    /// overlap); as many rows as `len` holds, the last one needing only `width` elements.
    pub(crate) fn for_width(&self, call: &'static str, what: &str, width: usize) -> Result<Plane> {
        if width > self.pitch {
            return Err(CudaError::invalid(
                call,
                format!("rows of {width} elements do not fit the {what}'s pitch of {} elements", self.pitch),
            ));
        }
        let rows = if self.len < width { 0 } else { (self.len - width) / self.pitch + 1 };
        Ok(Plane { base: self.base, pitch: self.pitch_bytes, width, rows })
    }
}

/// A checked 2-D copy of `width_bytes` by `height` rows, with what it must keep alive.
pub(crate) struct Copy2D {
    pub(crate) dst: usize,
    pub(crate) dst_pitch: usize,
    pub(crate) src: usize,
    pub(crate) src_pitch: usize,
    pub(crate) width_bytes: usize,
    pub(crate) height: usize,
    pub(crate) kind: sys::cudaMemcpyKind,
    pub(crate) keep: Vec<KeepAlive>,
}

/// Where a 2-D copy goes or comes from: a plane and the rectangle's origin in it.
pub(crate) struct Side<'a> {
    pub(crate) what: &'a str,
    pub(crate) plane: Plane,
    pub(crate) origin: (usize, usize),
}

impl Copy2D {
    /// A copy of `extent` elements of `size` bytes from `src` to `dst`, both checked.
    pub(crate) fn checked(
        call: &'static str,
        dst: Side<'_>,
        src: Side<'_>,
        extent: Extent2D,
        size: usize,
        kind: sys::cudaMemcpyKind,
        keep: Vec<KeepAlive>,
    ) -> Result<Copy2D> {
        let dst_addr = dst.plane.rect(call, dst.what, dst.origin, extent, size)?;
        let src_addr = src.plane.rect(call, src.what, src.origin, extent, size)?;
        let width_bytes =
            extent.width.checked_mul(size).ok_or_else(|| CudaError::invalid(call, "row overflow"))?;
        Ok(Copy2D {
            dst: dst_addr,
            dst_pitch: dst.plane.pitch,
            src: src_addr,
            src_pitch: src.plane.pitch,
            width_bytes,
            height: extent.height,
            kind,
            keep,
        })
    }

    /// Whether nothing is to be copied.
    pub(crate) fn is_empty(&self) -> bool {
        self.width_bytes == 0 || self.height == 0
    }

    /// As `cudaMemcpy3DParms` of depth 1, for memcpy nodes.
    pub(crate) fn params3d(&self) -> sys::cudaMemcpy3DParms {
        let pitched = |ptr: usize, pitch: usize| sys::cudaPitchedPtr {
            ptr: ptr as *mut c_void,
            pitch,
            xsize: self.width_bytes,
            ysize: self.height,
        };
        sys::cudaMemcpy3DParms {
            srcPtr: pitched(self.src, self.src_pitch),
            dstPtr: pitched(self.dst, self.dst_pitch),
            extent: sys::cudaExtent { width: self.width_bytes, height: self.height, depth: 1 },
            kind: self.kind,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CALL: &str = "copy2d";

    fn pitched(width: usize, rows: usize) -> Plane {
        Plane { base: 0x1000, pitch: 512, width, rows }
    }

    #[test]
    fn rectangles_inside_a_pitched_plane_give_their_first_address() {
        let plane = pitched(100, 10);
        let e = Extent2D { width: 20, height: 3 };
        assert_eq!(plane.rect(CALL, "dst", (80, 7), e, 4).unwrap(), 0x1000 + 7 * 512 + 80 * 4);
        let err = plane.rect(CALL, "destination", (81, 7), e, 4).unwrap_err().to_string();
        assert!(err.contains("a 20x3 rectangle at (81, 7) does not fit the destination of 100x10"), "{err}");
        assert!(plane.rect(CALL, "dst", (0, 8), e, 4).is_err(), "rows past the last");
        assert!(plane.rect(CALL, "dst", (usize::MAX, 0), e, 4).is_err(), "overflow is refused");
    }

    #[test]
    fn linear_memory_holds_whole_rows_and_a_last_row_of_the_used_width() {
        // 10 rows of pitch 16, then 8 more elements: an 11th row of width 8 fits, of 9 not.
        let linear = Plane::linear(CALL, "source", 0, 168, 16, 4).unwrap();
        assert_eq!(linear.for_width(CALL, "source", 8).unwrap().rows, 11);
        assert_eq!(linear.for_width(CALL, "source", 9).unwrap().rows, 10);
        assert_eq!(linear.for_width(CALL, "source", 16).unwrap().pitch, 64);
        let err = linear.for_width(CALL, "source", 17).unwrap_err().to_string();
        assert!(err.contains("rows of 17 elements do not fit the source's pitch of 16"), "{err}");
        let short = Plane::linear(CALL, "source", 0, 3, 16, 4).unwrap();
        assert_eq!(short.for_width(CALL, "source", 4).unwrap().rows, 0);
        assert!(Plane::linear(CALL, "source", 0, 3, 0, 4).is_err());
        assert!(Plane::linear(CALL, "source", 0, 3, usize::MAX, 4).is_err());
    }

    #[test]
    fn a_checked_copy_stays_inside_both_sides_every_row() {
        let dst = Side { what: "destination", plane: pitched(100, 10), origin: (0, 0) };
        let src_plane =
            Plane::linear(CALL, "source", 0x9000, 50, 10, 8).unwrap().for_width(CALL, "source", 10).unwrap();
        let src = Side { what: "source", plane: src_plane, origin: (0, 0) };
        let kind = sys::cudaMemcpyKind::cudaMemcpyDeviceToDevice;
        let copy =
            Copy2D::checked(CALL, dst, src, Extent2D { width: 10, height: 5 }, 8, kind, vec![]).unwrap();
        // The last byte read is inside the 50 elements of the source, the last written inside
        // the destination's rectangle.
        assert_eq!(copy.src + (copy.height - 1) * copy.src_pitch + copy.width_bytes, 0x9000 + 50 * 8);
        assert_eq!(copy.dst + (copy.height - 1) * copy.dst_pitch + copy.width_bytes, 0x1000 + 4 * 512 + 80);
        let raw = copy.params3d();
        assert_eq!((raw.extent.width, raw.extent.height, raw.extent.depth), (80, 5, 1));
        assert_eq!((raw.srcPtr.pitch, raw.dstPtr.pitch), (80, 512));

        let dst = Side { what: "destination", plane: pitched(100, 10), origin: (0, 0) };
        let src = Side { what: "source", plane: src_plane, origin: (0, 0) };
        let err = Copy2D::checked(CALL, dst, src, Extent2D { width: 10, height: 6 }, 8, kind, vec![]);
        let err = err.err().unwrap().to_string();
        assert!(err.contains("a 10x6 rectangle at (0, 0) does not fit the source of 10x5"), "{err}");
    }
}
