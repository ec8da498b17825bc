//! Work that another library queues on this crate's streams through its own calls (NCCL's
//! collectives, say): kept alive and ordered as this crate's own stream operations are.

use crate::capture_gate::{enter_queue, refuse_if_capturing, retain_for_capture};
use crate::error::{CudaError, Result};
use crate::memory::{note_unordered_uses, KeepAlive};
use crate::stream::Stream;

/// One stream's share of work queued through raw calls: the stream and the owners of what
/// that work uses ([`DeviceBuffer::keep_alive`](crate::DeviceBuffer::keep_alive), and any
/// handle the work needs alive, such as a communicator).
///
/// ```no_run
/// use cuda_graph::memory::RawWork;
/// let stream = cuda_graph::Stream::new()?;
/// let data = cuda_graph::DeviceBuffer::<f32>::zeroed(256)?;
/// let part = RawWork::new(&stream, vec![data.keep_alive()]);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct RawWork<'a> {
    stream: &'a Stream,
    owners: Vec<KeepAlive>,
}

impl<'a> RawWork<'a> {
    /// `owners` used by work queued on `stream`.
    pub fn new(stream: &'a Stream, owners: Vec<KeepAlive>) -> RawWork<'a> {
        RawWork { stream, owners }
    }
}

/// Runs `queue`, which queues work on the streams of `work` through raw calls, so that the
/// work is kept alive and ordered like this crate's own stream operations:
/// - while no capture of this crate can begin or end on those streams (the capture gate is
///   held from the checks until `queue` returns);
/// - a stream captured through this crate ([`Stream::begin_capture`],
///   [`Stream::begin_capture_to_graph`]) hands its owners to the graph being captured, which
///   keeps them as long as it and its execs live; a stream put in capture mode by raw calls
///   is refused (`InvalidArgument` naming `call`), since nothing would keep them;
/// - otherwise each device allocation among the owners is marked as used on its stream, so
///   that its drop waits for that work where the free would not be ordered after it (a
///   non-blocking stream, another device's stream: see `memory::pool`, "Freeing").
///
/// What `queue` does is the caller's: the raw calls inside it must use only memory the owners
/// keep, on the streams named. A capture's graph keeps the owners; work not captured must be
/// queued before `queue` returns.
///
/// ```no_run
/// use cuda_graph::memory::{queue_raw_work, RawWork};
/// use cuda_graph::{sys, DeviceBuffer, Stream};
/// let stream = Stream::new()?;
/// let mut data = DeviceBuffer::<u8>::zeroed(64)?;
/// let parts = [RawWork::new(&stream, vec![data.keep_alive()])];
/// queue_raw_work("my memset", &parts, || {
///     // SAFETY: `data` holds 64 bytes and is kept alive (and its drop ordered) as above.
///     let status = unsafe { sys::cudaMemsetAsync(data.as_raw(), 0, 64, stream.as_raw()) };
///     if status == sys::cudaError::cudaSuccess { Ok(()) } else { Err(cuda_graph::CudaError::from_code(status.0 as i32, "cudaMemsetAsync")) }
/// })?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub fn queue_raw_work<R, E: From<CudaError>>(
    call: &'static str, work: &[RawWork<'_>], queue: impl FnOnce() -> Result<R, E>,
) -> Result<R, E> {
    let gate = enter_queue(call)?;
    for part in work {
        if part.stream.is_context_relative() {
            // Several streams may be of several devices: no one current context serves them.
            return Err(CudaError::refused(call, crate::Refusal::ContextRelativeStream).into());
        }
        if !retain_for_capture(&gate, part.stream, call, || part.owners.clone(), false)? {
            refuse_if_capturing(&gate, part.stream, call)?;
        }
        note_unordered_uses(&part.owners, part.stream);
    }
    let queued = queue();
    drop(gate);
    queued
}
