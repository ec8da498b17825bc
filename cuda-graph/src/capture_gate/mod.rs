//! The gate between queuing work on a stream and changing which streams capture, and the
//! registry of captures in progress (`registry`) that it keeps in step with CUDA.
//!
//! A stream-launch concept, below everything that queues work (`kernel`, `memory`, `event`,
//! `host_fn`, `graph`'s launches) and below `graph`, which begins and ends captures: graph
//! families receive what captured work points to through [`CaptureTarget`].
//!
//! # The race it closes
//! `Stream` is `Sync`: one thread may queue a kernel on a stream while another begins a
//! capture on it. Work queued on a stream that captures becomes a node of the captured graph
//! and runs at every launch of it, so the graph must own the buffers that work points to.
//! Code that queues work therefore asks "is this stream capturing, and into which graph of
//! ours?" and then makes the CUDA call. Without the gate, a capture could begin (or a stream
//! join one through an event wait) between the question and the call: the work is captured
//! but its buffers are not retained, and the graph later replays on freed memory.
//!
//! # Why the gate makes it impossible
//! A process-wide reader-writer lock:
//! - every operation that queues work on a stream ([`enter_queue`], a read guard) holds the
//!   gate from *before* it looks at the stream's capture state until *after* CUDA has
//!   accepted the work;
//! - every operation that changes a stream's capture state through this crate and registers
//!   where its owners go ([`enter_change`], the write guard) does both under the gate:
//!   beginning a capture (`cudaStreamBeginCapture[ToGraph]` and its registry entry), ending
//!   one (`cudaStreamEndCapture` and removing the entry), and a wait that may join a stream
//!   into a capture (`cudaStreamWaitEvent` while a capture runs).
//!
//! A read and a write guard never overlap, so for the whole time a queuing operation holds
//! its guard, no stream's capture state changes through this crate and the registry agrees
//! with CUDA: what the operation saw is what its CUDA call meets. Either the stream was not
//! capturing, and the work runs now (ordinary stream semantics), or it was capturing into a
//! registered graph, and the owners were handed to that graph before the work was captured.
//!
//! # Streams and captures of other code
//! A capture begun outside this crate (cudarc's safe `CudaStream::begin_capture` on a stream
//! it made, raw calls) is not in the registry. Work of this crate queued into one would be
//! recorded without its owners, so it is refused. The cheap path (ask CUDA only while a
//! capture of this crate runs) holds for the crate's own streams, which can only capture
//! through it; every other stream asks CUDA each time ([`capture_possible`]).
//!
//! # Cost
//! Queuing takes an uncontended read lock: two atomic read-modify-writes on one word, no
//! allocation, no CUDA call. Writers are rare (begin, end, joins during a capture) and short.
//!
//! # Deadlock freedom
//! The gate is not re-entrant, so no guard holder takes it again. Under a read guard, code
//! takes only mutexes that no holder keeps while entering the gate (the capture registry, a
//! family's state, a pinned buffer's fences, the host-function table); the write guard is
//! taken with no guard held, never while waiting for a graph family (`begin_capture_to_graph`
//! marks the family first), and held only across one non-blocking CUDA call and the
//! registry update. The guards are released before a capture guard's destructor can run
//! (which takes the write guard itself).

mod device_waits;
mod registry;

use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::error::{CudaError, Result};

pub(crate) use device_waits::{defer_until_no_capture, device_wait_allowed, drop_deferred};
#[cfg(feature = "cudarc")]
pub(crate) use registry::note_foreign_capture_possible;
pub(crate) use registry::{
    capture_id, capture_possible, enter_wait, refuse_during_capture, refuse_if_capturing, register,
    retain_for_capture, unregister, with_capture_sink, CaptureTarget, Sink,
};

static GATE: RwLock<()> = RwLock::new(());

/// Held while work is queued on a stream (see the module docs).
#[must_use = "the gate protects the CUDA call that follows: hold the guard until it returns"]
pub(crate) struct QueueGuard {
    _read: RwLockReadGuard<'static, ()>,
    /// For a default-stream handle: its device's primary context, current until the work is
    /// queued (see `Stream::make_current`).
    _bound: Option<crate::device::CurrentFor>,
}

/// Held while a stream's capture state changes (see the module docs).
#[must_use = "the gate protects the CUDA call that follows: hold the guard until it returns"]
pub(crate) struct ChangeGuard {
    _write: RwLockWriteGuard<'static, ()>,
}

/// Enters the gate to queue work on a stream, for `call`. Never held across another
/// `enter_*`. Waits while a capture begins or ends on another thread. Refused inside a host
/// function, where no CUDA call is allowed (nor waiting for a writer whose peers' work may
/// be queued behind that very host function).
pub(crate) fn enter_queue(call: &'static str) -> Result<QueueGuard> {
    // Inside a host function every CUDA call is refused (see `runtime`), and waiting here for
    // a writer could wait for work queued behind this very host function: refuse at once.
    if crate::runtime::in_host_fn() {
        return Err(CudaError::refused(call, crate::Refusal::InHostFunction));
    }
    let read = GATE.read().unwrap_or_else(PoisonError::into_inner);
    Ok(QueueGuard { _read: read, _bound: None })
}

/// [`enter_queue`] for work queued on `stream`: a default-stream handle's device is also made
/// current until the guard drops (`Stream::make_current`), so the work lands on the default
/// stream of the device the crate's bookkeeping assumes.
pub(crate) fn enter_queue_on(stream: &crate::stream::Stream, call: &'static str) -> Result<QueueGuard> {
    let mut gate = enter_queue(call)?;
    if stream.is_context_relative() {
        gate._bound = Some(stream.make_current()?);
    }
    Ok(gate)
}

/// Enters the gate to begin or end a capture, or to join a stream into one.
pub(crate) fn enter_change() -> ChangeGuard {
    ChangeGuard { _write: GATE.write().unwrap_or_else(PoisonError::into_inner) }
}

/// The gate is process-wide and its tests run in parallel: a test that holds one read guard
/// and takes a second would wait behind another test's waiting writer, which waits for the
/// first guard (a deadlock seen once in `cargo test`). They take turns.
#[cfg(test)]
static ONE_GATE_TEST_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
mod tests {
    //! The protocol, with CUDA's stream replaced by a model: a stream that is capturing or
    //! not, which records into the current capture whatever is queued on it. One thread
    //! begins and ends captures in a loop (registering each as the real code does), another
    //! queues work after the same check the real launch makes. Every captured piece of work
    //! must have had its owner handed to its capture.

    use super::*;
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    use std::thread;

    use crate::capture_gate::ONE_GATE_TEST_AT_A_TIME;

    fn gate_to_myself() -> std::sync::MutexGuard<'static, ()> {
        ONE_GATE_TEST_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[derive(Default)]
    struct ModelStream {
        /// The capture id, or 0 when not capturing.
        capture: AtomicU64,
        /// Per capture id: the work captured (what CUDA records).
        captured: Mutex<HashMap<u64, Vec<u32>>>,
    }

    impl ModelStream {
        fn queue(&self, work: u32) {
            let id = self.capture.load(Ordering::SeqCst);
            if id != 0 {
                self.captured.lock().unwrap().entry(id).or_default().push(work);
            }
        }
    }

    #[test]
    fn every_captured_launch_had_its_owner_retained() {
        let _turn = gate_to_myself();
        let stream = Arc::new(ModelStream::default());
        // The registry: per capture id, the owners handed to it.
        let registry: Arc<Mutex<HashMap<u64, Vec<u32>>>> = Arc::default();
        let retained: Arc<Mutex<HashMap<u64, Vec<u32>>>> = Arc::default();
        let done = Arc::new(AtomicBool::new(false));

        let launcher = {
            let (stream, registry, done) = (stream.clone(), registry.clone(), done.clone());
            thread::spawn(move || {
                let mut work = 0u32;
                while !done.load(Ordering::SeqCst) {
                    work += 1;
                    let _gate = enter_queue("test").unwrap();
                    let id = stream.capture.load(Ordering::SeqCst);
                    if id != 0 {
                        if let Some(owners) = registry.lock().unwrap().get_mut(&id) {
                            owners.push(work);
                        }
                    }
                    thread::yield_now(); // widen the window between the check and the call
                    stream.queue(work);
                }
            })
        };

        for id in 1..=2000u64 {
            {
                let _gate = enter_change();
                stream.capture.store(id, Ordering::SeqCst);
                registry.lock().unwrap().insert(id, Vec::new());
            }
            thread::yield_now();
            let _gate = enter_change();
            stream.capture.store(0, Ordering::SeqCst);
            let owners = registry.lock().unwrap().remove(&id).unwrap();
            retained.lock().unwrap().insert(id, owners);
        }
        done.store(true, Ordering::SeqCst);
        launcher.join().unwrap();

        let captured = stream.captured.lock().unwrap();
        let retained = retained.lock().unwrap();
        for (id, work) in captured.iter() {
            assert_eq!(
                Some(work),
                retained.get(id),
                "capture {id}: captured work whose owner was not retained"
            );
        }
    }

    #[test]
    fn readers_share_the_gate_and_a_writer_waits_for_them() {
        let _turn = gate_to_myself();
        let reader = enter_queue("test").unwrap();
        let second = enter_queue("test").unwrap(); // readers do not exclude each other
        let entered = Arc::new(AtomicBool::new(false));
        let writer = {
            let entered = entered.clone();
            thread::spawn(move || {
                let _change = enter_change();
                entered.store(true, Ordering::SeqCst);
            })
        };
        thread::sleep(std::time::Duration::from_millis(50));
        assert!(!entered.load(Ordering::SeqCst), "a capture change entered while work was being queued");
        drop((reader, second));
        writer.join().unwrap();
        assert!(entered.load(Ordering::SeqCst));
    }
}
