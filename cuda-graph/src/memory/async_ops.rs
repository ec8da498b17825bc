//! Asynchronous copies and memsets on a stream (`cudaMemcpyAsync`, `cudaMemsetAsync`).
//!
//! # Why these are safe although the borrows end before the copy runs
//! Each call returns as soon as the work is queued, so the borrows of its arguments end while
//! the device may still be copying. What keeps that sound:
//! - **Device memory** ([`DeviceBuffer`]) is never read or written by the host directly, only
//!   through CUDA calls ordered by CUDA, and it cannot be freed under queued work: a
//!   `cudaMalloc` buffer's drop waits for the device before `cudaFree`, and a stream-ordered
//!   buffer's free is queued behind the work on blocking streams, or waits for the device
//!   when the work is on a non-blocking stream (each call below marks the buffers it queues
//!   work on; see `memory::pool`, "Freeing"). Ordering between streams is yours to state
//!   with events, as in CUDA: unordered work gives wrong values, not undefined behaviour
//!   (any bit pattern is a valid [`DeviceRepr`]).
//! - **Pinned host memory** ([`PinnedBuffer`]) *is* read and written by the host, so a copy
//!   still in flight is a real hazard: the host could read half-copied data, change data
//!   being copied out, or free the buffer under the copy. Each call therefore leaves a fence
//!   (an event recorded right after the copy) on the buffer, and every host access waits for
//!   the fences it conflicts with: [`PinnedBuffer::as_slice`] for copies writing into the
//!   buffer, [`PinnedBuffer::as_mut_slice`] and the buffer's drop for all of them. A copy into
//!   pinned memory takes it by `&mut`, so no slice of it exists when the copy is queued.
//!
//! This was chosen over `unsafe fn`s with a contract (every caller would carry the proof) and
//! over holding buffers until the stream is synchronized (`Stream` would have to know all the
//! buffers, and a host read would still race the copy): the fences cost one event per copy,
//! make waiting as narrow as possible (for that copy, not the whole stream), and leave
//! nothing for the caller to get wrong.
//!
//! # While a stream is being captured
//! A captured operation does not run: it becomes a node of the graph being captured, which
//! may run many times, long after this call. Device-only operations
//! ([`DeviceBuffer::copy_from_device_async`], [`DeviceBuffer::memset_async`]) hand their
//! buffers to that graph (which keeps them alive like its own nodes') when the capture was
//! started through this crate ([`Stream::begin_capture`]); under a capture started by raw
//! calls they are refused. Copies to or from pinned memory are always refused while
//! capturing: a captured copy would run at each launch of the graph, which nothing would
//! then fence or check against slices of the buffer. Use the graph memcpy nodes instead
//! ([`GraphBuilder::add_memcpy_from_host`](crate::GraphBuilder::add_memcpy_from_host),
//! [`add_memcpy_to_host`](crate::GraphBuilder::add_memcpy_to_host)), whose launches do both.
//! Each call holds the capture gate (`capture_gate/mod.rs`) from its capture check to its
//! CUDA call, so a capture begun by another thread cannot start between the two.

use crate::runtime as sys;

use crate::capture_gate::{
    enter_queue_on, refuse_during_capture, refuse_if_capturing, retain_for_capture, QueueGuard,
};
use crate::error::{check, CudaError, Result};
use crate::memory::pinned::DeviceAccess;
use crate::memory::{DeviceBuffer, DeviceRepr, KeepAlive, PinnedBuffer};
use crate::stream::Stream;

/// Lets device-only work be queued on `stream`: at once when it is not capturing; when it
/// captures through this crate, after handing `owners` to the captured graph; refused under a
/// capture started by raw calls. Returns the capture gate: hold it until the work is queued.
pub(super) fn retain_if_capturing(
    stream: &Stream, call: &'static str, owners: impl FnOnce() -> Vec<KeepAlive>,
) -> Result<QueueGuard> {
    let gate = enter_queue_on(stream, call)?;
    if !retain_for_capture(&gate, stream, call, owners, false)? {
        refuse_if_capturing(&gate, stream, call)?;
    }
    Ok(gate)
}

pub(super) fn expect_same_len(target: usize, source: usize, call: &'static str) -> Result<()> {
    if target == source {
        Ok(())
    } else {
        Err(CudaError::refused(call, crate::refusal::Lengths::TargetAndSource { target, from: source }))
    }
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Queues a copy of `src` (pinned host memory) into this buffer on `stream`
    /// (`cudaMemcpyAsync`, host to device) and returns at once. Lengths must match.
    ///
    /// `src` stays readable meanwhile; writing it ([`PinnedBuffer::as_mut_slice`]) or dropping
    /// it waits for this copy (see the module docs). Refused while `stream` is being captured.
    ///
    /// ```no_run
    /// use cuda_graph::{DeviceBuffer, PinnedBuffer, Stream};
    /// let stream = Stream::new()?;
    /// let input = PinnedBuffer::from_slice(&[1u32, 2, 3, 4])?;
    /// let mut device = DeviceBuffer::<u32>::zeroed(4)?;
    /// device.copy_from_pinned_async(&input, &stream)?;
    /// stream.synchronize()?;
    /// assert_eq!(device.to_vec()?, [1, 2, 3, 4]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_from_pinned_async(&mut self, src: &PinnedBuffer<T>, stream: &Stream) -> Result<()> {
        // `&mut self`: the device side is written.
        self.pinned_copy_async("DeviceBuffer::copy_from_pinned_async", src, DeviceAccess::Reads, stream)
    }

    /// Queues a copy of this buffer into `dst` (pinned host memory) on `stream`
    /// (`cudaMemcpyAsync`, device to host) and returns at once. Lengths must match.
    ///
    /// Reading `dst` ([`PinnedBuffer::as_slice`]) waits for this copy, so no explicit
    /// synchronization is needed before looking at the result. Refused while `stream` is being
    /// captured.
    ///
    /// ```no_run
    /// use cuda_graph::{DeviceBuffer, PinnedBuffer, Stream};
    /// let stream = Stream::new()?;
    /// let device = DeviceBuffer::from_slice(&[5i64, 6])?;
    /// let mut output = PinnedBuffer::<i64>::zeroed(2)?;
    /// device.copy_to_pinned_async(&mut output, &stream)?;
    /// assert_eq!(output.as_slice()?, [5, 6]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_to_pinned_async(&self, dst: &mut PinnedBuffer<T>, stream: &Stream) -> Result<()> {
        // `&mut dst`: no slice of the pinned side is alive while the copy is queued.
        self.pinned_copy_async("DeviceBuffer::copy_to_pinned_async", dst, DeviceAccess::Writes, stream)
    }

    /// Queues, for `call`, a copy between this buffer and `pinned` on `stream`: from `pinned`
    /// into this buffer when the device `Reads` it, the other way when it `Writes` it. Then
    /// fences `pinned`. The callers borrow mutably the side that is written.
    fn pinned_copy_async(
        &self, call: &'static str, pinned: &PinnedBuffer<T>, access: DeviceAccess, stream: &Stream,
    ) -> Result<()> {
        let (target, source) = match access {
            DeviceAccess::Reads => (self.len(), pinned.len()),
            DeviceAccess::Writes => (pinned.len(), self.len()),
        };
        expect_same_len(target, source, call)?;
        if self.bytes() == 0 {
            return Ok(());
        }
        super::placement::check_allocation_on(&self.allocation, stream.device(), call)?;
        let _gate = refuse_during_capture(stream, call)?;
        self.note_use_on(stream);
        let (dst, src, kind) = match access {
            DeviceAccess::Reads => {
                (self.as_raw(), pinned.as_raw(), sys::cudaMemcpyKind::cudaMemcpyHostToDevice)
            }
            DeviceAccess::Writes => {
                (pinned.as_raw(), self.as_raw(), sys::cudaMemcpyKind::cudaMemcpyDeviceToHost)
            }
        };
        check(
            // SAFETY: both sides hold `bytes()` bytes (lengths checked above); any bit pattern is
            // a valid T. The device side lives until the copy is done (see the module docs). The
            // pinned side's host access waits for the fence set below; when the copy writes it,
            // the caller holds it by `&mut`, so no slice of it is alive now.
            unsafe { sys::cudaMemcpyAsync(dst, src, self.bytes(), kind, stream.as_raw()) },
            "cudaMemcpyAsync",
        )?;
        pinned.fence_after(stream, access)
    }

    /// Queues a copy of `src` into this buffer on `stream` (`cudaMemcpyAsync`, device to
    /// device) and returns at once. Lengths must match. May be captured (see the module docs).
    ///
    /// ```no_run
    /// use cuda_graph::{DeviceBuffer, Stream};
    /// let stream = Stream::new()?;
    /// let source = DeviceBuffer::from_slice(&[0.5f64; 8])?;
    /// let mut target = DeviceBuffer::<f64>::zeroed(8)?;
    /// target.copy_from_device_async(&source, &stream)?;
    /// stream.synchronize()?;
    /// assert_eq!(target.to_vec()?, [0.5; 8]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_from_device_async(&mut self, src: &DeviceBuffer<T>, stream: &Stream) -> Result<()> {
        const CALL: &str = "DeviceBuffer::copy_from_device_async";
        expect_same_len(self.len(), src.len(), CALL)?;
        if self.bytes() == 0 {
            return Ok(());
        }
        let _gate = retain_if_capturing(stream, CALL, || vec![self.keep_alive(), src.keep_alive()])?;
        self.note_use_on(stream);
        src.note_use_on(stream);
        // SAFETY: both allocations hold `bytes()` bytes and live until the copy is done, or as
        // long as the graph capturing it (see the module docs); `&mut self` and `&src` are
        // distinct allocations.
        check(
            unsafe {
                sys::cudaMemcpyAsync(
                    self.as_raw(),
                    src.as_raw(),
                    self.bytes(),
                    sys::cudaMemcpyKind::cudaMemcpyDeviceToDevice,
                    stream.as_raw(),
                )
            },
            "cudaMemcpyAsync",
        )
    }

    /// Queues setting every byte of the buffer to `byte` on `stream` (`cudaMemsetAsync`) and
    /// returns at once. May be captured (see the module docs).
    ///
    /// ```no_run
    /// use cuda_graph::{DeviceBuffer, Stream};
    /// let stream = Stream::new()?;
    /// let mut flags = DeviceBuffer::<u32>::zeroed(4)?;
    /// flags.memset_async(0xff, &stream)?;
    /// stream.synchronize()?;
    /// assert_eq!(flags.to_vec()?, [u32::MAX; 4]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn memset_async(&mut self, byte: u8, stream: &Stream) -> Result<()> {
        if self.bytes() == 0 {
            return Ok(());
        }
        super::placement::check_allocation_on(
            &self.allocation,
            stream.device(),
            "DeviceBuffer::memset_async",
        )?;
        let _gate = retain_if_capturing(stream, "DeviceBuffer::memset_async", || vec![self.keep_alive()])?;
        self.note_use_on(stream);
        // SAFETY: the allocation holds `bytes()` bytes and lives until the memset is done, or
        // as long as the graph capturing it (see the module docs); any bit pattern is a valid T.
        check(
            unsafe { sys::cudaMemsetAsync(self.as_raw(), i32::from(byte), self.bytes(), stream.as_raw()) },
            "cudaMemsetAsync",
        )
    }
}
