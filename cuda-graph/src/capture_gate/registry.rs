//! The captures in progress that this crate began, and where the owners of the work they
//! record go: kept until the captured graph lets go of them. Read and changed under the
//! capture gate (the parent module).

use std::collections::HashMap;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::runtime as sys;

use super::{enter_change, enter_queue_on, ChangeGuard, QueueGuard};
use crate::error::{check, CudaError, Result};
use crate::release::KeepAlive;
use crate::stream::Stream;

/// Where the owners met during a capture go: a list for the new graph, or the target family
/// (with the lineage of the graph or body captured into: the graphs whose conditional
/// handles captured kernels may receive).
pub(crate) enum Sink {
    /// A capture into a new graph: the owners it met, and whether any work calls a host
    /// function.
    New { owners: Vec<KeepAlive>, host_work: bool },
    /// A capture into an existing graph (or body) of the crate.
    Into { target: Arc<dyn CaptureTarget>, lineage: Arc<[u64]> },
}

/// An existing graph that a stream captures into: the graph layer implements it for its
/// graph families, so that this layer, below it, can hand them owners.
pub(crate) trait CaptureTarget: Send + Sync {
    /// Keeps `owners` alive as long as the graph and its execs; `host_work` says one of them
    /// is a host function that execs must not drop while a launch may still call it.
    fn retain(&self, owners: Vec<KeepAlive>, host_work: bool);
}

/// Captures in progress, by CUDA's capture id (shared by every stream joined into one).
static CAPTURES: Mutex<Option<HashMap<u64, Sink>>> = Mutex::new(None);

/// How many entries `CAPTURES` has: read without the lock on every kernel launch, so launches
/// pay one atomic load while no capture runs.
static ACTIVE_CAPTURES: AtomicUsize = AtomicUsize::new(0);

fn captures<R>(f: impl FnOnce(&mut HashMap<u64, Sink>) -> R) -> R {
    let mut guard = CAPTURES.lock().unwrap_or_else(PoisonError::into_inner);
    let map = guard.get_or_insert_with(HashMap::new);
    let result = f(map);
    ACTIVE_CAPTURES.store(map.len(), Ordering::Release);
    result
}

/// True while a capture begun through this crate is in progress on any stream.
pub(crate) fn any_capture_active() -> bool {
    ACTIVE_CAPTURES.load(Ordering::Acquire) != 0
}

/// Whether work queued on `stream` must ask CUDA whether the stream captures: while a capture
/// of this crate runs, and always on a stream that other code may capture (one it made, one
/// shown to it, one joined to its event: [`Stream::may_capture_elsewhere`]).
///
/// Why this is enough for the crate's own streams: a stream of this crate's making captures
/// only through this crate (registered here), or after joining a capture through
/// `Stream::wait_event`. The event waited for was recorded either by this crate, which
/// refuses to record on a stream that captures for others ([`with_capture_sink`]), so the
/// join is into a capture of this crate, or by other code (a raw event), and then the wait
/// marks the stream first ([`note_foreign_capture_possible`]).
#[inline]
pub(crate) fn capture_possible(stream: &Stream) -> bool {
    any_capture_active() || stream.may_capture_elsewhere()
}

/// Marks `stream` as one other code may capture ([`Stream::may_capture_elsewhere`]), under
/// the gate's write guard: a queuing operation that began before waits for nothing here and
/// is not captured by a capture begun after this call; every one that begins after sees the
/// mark (the write guard's release orders it before their read guard).
pub(crate) fn note_foreign_capture_possible(stream: &Stream) {
    if stream.may_capture_elsewhere() {
        return;
    }
    let _change = enter_change();
    stream.set_foreign_capture();
}

/// What a wait that may join a stream into a capture holds (see [`enter_wait`]): the read
/// guard while no capture of this crate runs (none can begin while it is held), else the
/// write guard (the wait may join one: a change of capture membership).
pub(crate) struct WaitGuard {
    _queue: Option<QueueGuard>,
    _change: Option<ChangeGuard>,
    _bound: Option<crate::device::CurrentFor>,
}

/// Enters the capture gate for `cudaStreamWaitEvent` on `stream`, which joins the waiting
/// stream into the capture that recorded the event: as a writer while a capture of this
/// crate runs (so no launch is between its check and its call when the stream joins), else
/// as a reader (no capture can begin while it is held, so the wait joins none of ours).
/// An event of other code (`foreign_event`) may have been recorded in a capture of theirs:
/// the stream is marked first ([`note_foreign_capture_possible`]), so that work queued on it
/// afterwards asks CUDA and is refused if it joined one.
pub(crate) fn enter_wait(stream: &Stream, foreign_event: bool) -> Result<WaitGuard> {
    if foreign_event {
        note_foreign_capture_possible(stream);
    }
    let queue = enter_queue_on(stream, "Stream::wait_event")?;
    if !any_capture_active() {
        return Ok(WaitGuard { _queue: Some(queue), _change: None, _bound: None });
    }
    drop(queue);
    let bound = if stream.is_context_relative() { Some(stream.make_current()?) } else { None };
    Ok(WaitGuard { _queue: None, _change: Some(enter_change()), _bound: bound })
}

/// The id of the capture `stream` takes part in, if any.
pub(crate) fn capture_id(stream: sys::cudaStream_t) -> Result<Option<u64>> {
    let mut status = sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusNone;
    let mut id = 0;
    check(
        // SAFETY: `stream` is a live stream: every caller passes the handle of a borrowed
        // `Stream`. `status` and `id` are writable locals of the types CUDA writes; the other
        // out-pointers are null, which asks CUDA not to return them.
        unsafe {
            sys::cudaStreamGetCaptureInfo(
                stream,
                &mut status,
                &mut id,
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        },
        "cudaStreamGetCaptureInfo",
    )?;
    Ok((status != sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusNone).then_some(id))
}

/// For code that queues work on a stream (kernel launches, async copies, host functions),
/// called under the capture gate ([`enter_queue`], held until the work is queued): when
/// `stream` is capturing through this crate, keeps `owners()` alive as long as the captured
/// graph and its execs. `host_work` says the work calls a host function (one of `owners`),
/// so execs wait for their last launch before dropping it. Returns whether it kept them;
/// `false` when the stream is not capturing. Refuses (for `call`) a stream that captures for
/// other code (see [`with_capture_sink`]).
pub(crate) fn retain_for_capture(
    _gate: &QueueGuard, stream: &Stream, call: &'static str, owners: impl FnOnce() -> Vec<KeepAlive>,
    host_work: bool,
) -> Result<bool> {
    with_capture_sink(stream, call, |sink| match sink {
        Some(sink) => {
            sink.retain(owners(), host_work);
            Ok(true)
        }
        None => Ok(false),
    })
}

/// Runs `f` with the registry entry of the capture `stream` takes part in (`None` when it
/// does not capture). Call it under the capture gate. A stream that captures into a graph
/// this crate did not begin (a capture begun by cudarc or by raw calls on a stream it made or
/// was shown) is refused for `call`: what the work points to would not be kept by that
/// graph, which may run after the memory is freed.
pub(crate) fn with_capture_sink<R>(
    stream: &Stream, call: &'static str, f: impl FnOnce(Option<&mut Sink>) -> Result<R>,
) -> Result<R> {
    if !capture_possible(stream) {
        return f(None);
    }
    let Some(id) = capture_id(stream.as_raw())? else { return f(None) };
    captures(|map| match map.get_mut(&id) {
        Some(sink) => f(Some(sink)),
        None => Err(foreign_capture(call)),
    })
}

/// The refusal of work queued on a stream that captures for other code.
pub(crate) fn foreign_capture(call: &'static str) -> CudaError {
    CudaError::refused(call, crate::Refusal::CapturedElsewhere)
}

impl Sink {
    /// Keeps `owners` alive as long as the graph this capture makes or adds to.
    pub(crate) fn retain(&mut self, owners: Vec<KeepAlive>, host_work: bool) {
        match self {
            Sink::New { owners: list, host_work: any_host_work } => {
                list.extend(owners);
                *any_host_work |= host_work;
            }
            Sink::Into { target, .. } => target.retain(owners, host_work),
        }
    }
}

/// Registers capture `id`, just begun on a stream (under the write guard).
pub(crate) fn register(_change: &ChangeGuard, id: u64, sink: Sink) {
    captures(|map| map.insert(id, sink));
}

/// Forgets capture `id`, just ended (under the write guard), and returns where its owners went.
pub(crate) fn unregister(_change: &ChangeGuard, id: u64) -> Option<Sink> {
    captures(|map| map.remove(&id))
}

/// Refuses `call` while `stream` is being captured (`cudaStreamIsCapturing`): work captured
/// into a graph that this crate does not see would not keep its memory alive. On success,
/// returns the capture gate (see the parent module): hold it until the work is queued,
/// so that no capture begins on `stream` between this check and the CUDA call.
pub(crate) fn refuse_during_capture(stream: &Stream, call: &'static str) -> Result<QueueGuard> {
    let gate = enter_queue_on(stream, call)?;
    refuse_if_capturing(&gate, stream, call)?;
    Ok(gate)
}

pub(crate) fn refuse_if_capturing(_gate: &QueueGuard, stream: &Stream, call: &'static str) -> Result<()> {
    let mut status = sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusNone;
    // SAFETY: the stream is alive; `status` is a valid, writable capture status.
    check(unsafe { sys::cudaStreamIsCapturing(stream.as_raw(), &mut status) }, "cudaStreamIsCapturing")?;
    if status == sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusNone {
        Ok(())
    } else {
        Err(CudaError::refused(call, crate::Refusal::NotCapturable))
    }
}
