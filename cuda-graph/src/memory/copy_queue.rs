//! Running checked 2-D and 3-D copies (`memory::copy_bounds`): queued on a stream
//! (`cudaMemcpy3DAsync`) with what keeps their sides alive, or synchronously between device
//! memory and a host `Vec` or slice (`cudaMemcpy3D`); and the sides of whole-buffer copies.
//!
//! What keeps a queued copy sound after the borrows end is what keeps the 1-D copies sound
//! (`memory::async_ops`): device memory is freed only after the work using it, pinned memory
//! is fenced, and copies of pinned memory are refused while capturing.

use std::ffi::c_void;
use std::sync::Arc;

use crate::runtime as sys;

use super::async_ops::retain_if_capturing;
use super::buffer::finish_on_legacy_stream;
use super::copy_bounds::{CheckedCopy, Extent3D, Side, Volume};
use super::pinned::DeviceAccess;
use super::{Allocation, DeviceBuffer, DeviceRepr, KeepAlive, PinnedBuffer};
use crate::capture_gate::refuse_during_capture;
use crate::device::Device;
use crate::error::{check, Result};
use crate::stream::Stream;

pub(crate) const DEVICE_TO_DEVICE: sys::cudaMemcpyKind = sys::cudaMemcpyKind::cudaMemcpyDeviceToDevice;

/// Linear memory at `base` of `len` elements of `T` as one slice of rows `pitch` elements
/// apart, `width` of them used: the side of a whole 2-D copy.
pub(crate) fn linear_side<T>(
    call: &'static str, what: &'static str, base: *mut c_void, len: usize, pitch: usize, width: usize,
) -> Result<Side> {
    let layout = Volume::linear(call, what, base as usize, len, pitch, size_of::<T>())?;
    Ok(Side::whole(what, layout.for_width(call, what, width)?))
}

/// Linear memory at `base` of `len` elements of `T` as slices of `slice_rows` rows `pitch`
/// elements apart, `extent.height` rows of `extent.width` used in each: the side of a whole
/// 3-D copy.
pub(crate) fn linear_box_side<T>(
    call: &'static str, what: &'static str, base: *mut c_void, len: usize,
    (pitch, slice_rows): (usize, usize), extent: Extent3D,
) -> Result<Side> {
    let layout = Volume::linear(call, what, base as usize, len, pitch, size_of::<T>())?;
    Ok(Side::whole(what, layout.for_box(call, what, extent.width, extent.height, slice_rows)?))
}

/// All of `me` (a pitched buffer or volume of `extent`) copied from `other` (`into_me`) or
/// into it, elements of `size` bytes.
pub(crate) fn whole_copy(
    call: &'static str, (me, extent): (Volume, Extent3D), other: Side, into_me: bool, size: usize,
    kind: sys::cudaMemcpyKind, keep: Vec<KeepAlive>,
) -> Result<CheckedCopy> {
    let me = Side::whole(if into_me { "destination" } else { "source" }, me);
    let (dst, src) = if into_me { (me, other) } else { (other, me) };
    CheckedCopy::checked(call, dst, src, extent, size, kind, keep)
}

/// Queues `copy` on `stream`: device-only copies may be captured (their owners handed to the
/// graph); a copy with a `pinned` side is refused while capturing and fences that side.
pub(crate) fn queue_copy<T: DeviceRepr>(
    call: &'static str, copy: CheckedCopy, device_sides: &[&Arc<Allocation>],
    pinned: Option<(&PinnedBuffer<T>, DeviceAccess)>, stream: &Stream,
) -> Result<()> {
    if copy.is_empty() {
        return Ok(());
    }
    for allocation in device_sides {
        super::placement::check_allocation_on(allocation, stream.device(), call)?;
    }
    let _gate = match pinned {
        Some(_) => refuse_during_capture(stream, call)?,
        None => retain_if_capturing(stream, call, || copy.keep.clone())?,
    };
    for allocation in device_sides {
        allocation.note_use_on(stream);
    }
    let params = copy.params3d();
    check(
        // SAFETY: every row of both boxes lies inside memory its side owns (checked by
        // `CheckedCopy::checked` against the buffers' lengths and volumes), of the kinds
        // `kind` names; any bit pattern is a valid T. The device sides live until the copy is
        // done (see `memory::async_ops`); a pinned side is fenced below, and when written it
        // is held by `&mut`, so no slice of it is alive now. `params` outlives the call.
        unsafe { sys::cudaMemcpy3DAsync(&params, stream.as_raw()) },
        "cudaMemcpy3DAsync",
    )?;
    match pinned {
        Some((buffer, access)) => buffer.fence_after(stream, access),
        None => Ok(()),
    }
}

/// Linear memory on the other side of a queued 2-D, 3-D or symbol copy, and how the copy is
/// queued with it: a device buffer's copy may be captured and keeps the buffer alive, a
/// pinned buffer's is refused while capturing and fences the buffer.
pub(crate) trait LinearSide<T: DeviceRepr> {
    /// The address, the length in elements and the owner of the memory.
    fn span(&self) -> (*mut c_void, usize, KeepAlive);

    /// The kind of a copy from this memory into device memory (`to_device`) or back.
    fn kind(&self, to_device: bool) -> sys::cudaMemcpyKind;

    /// Queues `copy` between this memory and the device allocations `device_sides` (for
    /// `to_device` as [`kind`](Self::kind)) on `stream`, as [`queue_copy`] does.
    fn queue(
        &self, call: &'static str, copy: CheckedCopy, device_sides: &[&Arc<Allocation>], to_device: bool,
        stream: &Stream,
    ) -> Result<()>;
}

impl<T: DeviceRepr> LinearSide<T> for DeviceBuffer<T> {
    fn span(&self) -> (*mut c_void, usize, KeepAlive) {
        (self.as_raw(), self.len(), self.keep_alive())
    }

    fn kind(&self, _to_device: bool) -> sys::cudaMemcpyKind {
        DEVICE_TO_DEVICE
    }

    fn queue(
        &self, call: &'static str, copy: CheckedCopy, device_sides: &[&Arc<Allocation>], _to_device: bool,
        stream: &Stream,
    ) -> Result<()> {
        queue_copy::<T>(call, copy, &[device_sides, &[&self.allocation]].concat(), None, stream)
    }
}

impl<T: DeviceRepr> LinearSide<T> for PinnedBuffer<T> {
    fn span(&self) -> (*mut c_void, usize, KeepAlive) {
        (self.as_raw(), self.len(), self.keep_alive())
    }

    fn kind(&self, to_device: bool) -> sys::cudaMemcpyKind {
        DeviceAccess::of_copy(to_device).0
    }

    fn queue(
        &self, call: &'static str, copy: CheckedCopy, device_sides: &[&Arc<Allocation>], to_device: bool,
        stream: &Stream,
    ) -> Result<()> {
        queue_copy(call, copy, device_sides, Some((self, DeviceAccess::of_copy(to_device).1)), stream)
    }
}

/// Runs `copy` between device memory of `device` and host memory at once (`cudaMemcpy3D`,
/// on the legacy stream), and waits for it.
///
/// # Safety
/// The host side of `copy` must be valid for every byte the copy reads or writes (its box
/// checked inside host memory the caller holds, writable when written), and no reference to
/// what it writes may be alive.
pub(crate) unsafe fn run_now(device: Device, copy: &CheckedCopy) -> Result<()> {
    if copy.is_empty() {
        return Ok(());
    }
    let params = copy.params3d();
    device.with_current(|| {
        // SAFETY: the device side lies inside memory `copy.keep` holds (checked); the caller
        // promises the host side; `params` outlives the call.
        check(unsafe { sys::cudaMemcpy3D(&params) }, "cudaMemcpy3D")?;
        if copy.kind != sys::cudaMemcpyKind::cudaMemcpyDeviceToHost {
            finish_on_legacy_stream("cudaStreamSynchronize after cudaMemcpy3D")?;
        }
        Ok(())
    })
}
