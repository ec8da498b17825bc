//! Host functions: Rust closures that CUDA calls on one of its own threads, in stream order
//! ([`Stream::launch_host_fn`]) or every time a graph's host node runs ([`HostCallback`]).
//!
//! # Panics
//! A panic must not unwind into CUDA's thread, so every host function runs under
//! [`std::panic::catch_unwind`]. A caught panic is recorded, the stream goes on with its next
//! work, and [`take_unreported_errors`](crate::take_unreported_errors) hands the record out as
//! [`CudaError::HostFunctionPanicked`].
//!
//! # No CUDA calls inside
//! CUDA forbids CUDA calls inside a host function. Dropping a crate resource that must call
//! CUDA to release itself (a buffer, a pinned buffer, an event, a pool a closure captured) is
//! therefore not done there: the release is handed to a short-lived thread that runs it once
//! the host function has returned (the machinery is the `release` module's). Waiting for device work inside a host function (reading a
//! [`PinnedBuffer`](crate::PinnedBuffer) that a copy is still filling, say) returns an error.

use std::any::Any;
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::runtime as sys;

use crate::capture_gate::refuse_during_capture;
use crate::error::{check, CudaError, Result};
use crate::release::run_in_host_fn;
use crate::stream::Stream;

/// A one-shot closure waiting for its stream to reach it.
type OneShot = Box<dyn FnOnce() + Send>;

/// One-shot closures by id. CUDA receives the id, not a pointer, so a host function that runs
/// more often than once (a stream callback captured into a graph and replayed) finds nothing
/// the second time instead of reading a freed box.
static ONE_SHOTS: Mutex<BTreeMap<u64, OneShot>> = Mutex::new(BTreeMap::new());
static NEXT_ONE_SHOT: AtomicU64 = AtomicU64::new(1);

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Stream {
    /// Queues `f` to run on a CUDA thread once all work queued before it on this stream has
    /// finished; work queued after it waits for it to return (`cudaLaunchHostFunc`).
    ///
    /// `f` must not call CUDA (CUDA forbids it; see the module docs for what this crate does
    /// about resources `f` drops). A panic in `f` is caught and reported by
    /// [`take_unreported_errors`](crate::take_unreported_errors); the stream carries on. If the context fails before the stream
    /// reaches `f`, CUDA never calls it and `f` is leaked, not dropped.
    ///
    /// Refused (`InvalidArgument`) while the stream is being captured: a captured host
    /// function runs on every replay of the graph, and `f` can run only once. Use a graph
    /// host node for that.
    ///
    /// ```no_run
    /// use std::sync::mpsc;
    /// let stream = cuda_graph::Stream::new()?;
    /// let (done, finished) = mpsc::channel();
    /// stream.launch_host_fn(move || done.send("copies finished").unwrap())?;
    /// stream.synchronize()?;
    /// assert_eq!(finished.recv().unwrap(), "copies finished");
    /// assert!(cuda_graph::take_unreported_errors().is_empty());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn launch_host_fn<F>(&self, f: F) -> Result<()>
    where
        F: FnOnce() + Send + 'static,
    {
        let _gate = refuse_during_capture(self, "Stream::launch_host_fn")?;
        let id = NEXT_ONE_SHOT.fetch_add(1, Ordering::Relaxed);
        lock(&ONE_SHOTS).insert(id, Box::new(f));
        let user_data = id as usize as *mut c_void;
        // SAFETY: the stream is alive; the trampoline is a valid host function for any user
        // data, which here is only a key into ONE_SHOTS, never dereferenced.
        let status = unsafe { sys::cudaLaunchHostFunc(self.as_raw(), Some(one_shot_trampoline), user_data) };
        if let Err(err) = check(status, "cudaLaunchHostFunc") {
            let unqueued = lock(&ONE_SHOTS).remove(&id);
            drop(unqueued);
            return Err(err);
        }
        Ok(())
    }
}

/// CUDA's entry point for one-shot closures: `user_data` is the id in `ONE_SHOTS`.
unsafe extern "C" fn one_shot_trampoline(user_data: *mut c_void) {
    let id = user_data as usize as u64;
    let _ = catch_unwind(move || {
        let f = lock(&ONE_SHOTS).remove(&id);
        match f {
            Some(f) => run_guarded(f),
            None => record(CudaError::refused("Stream::launch_host_fn", crate::Refusal::OneShotCalledAgain)),
        }
    });
}

/// Runs a host function's body: catches its panic (recording it), and hands the resources
/// it dropped to another thread to release (see the module docs).
pub(crate) fn run_guarded(f: impl FnOnce()) {
    let leaked = run_in_host_fn(|| {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
            let message = panic_message(payload.as_ref());
            // Dropping a payload can itself panic; that must not unwind into CUDA either.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            record(CudaError::HostFunctionPanicked { message });
        }
    });
    if let Some(err) = leaked {
        record(err);
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "(panic payload is not a string)".to_owned()
    }
}

/// Keeps a host function's error for [`take_unreported_errors`](crate::take_unreported_errors):
/// CUDA's thread has no caller to hand it to.
fn record(err: CudaError) {
    crate::release::record_unreported_error(err);
}

/// A closure that CUDA may call many times (a graph host node runs it on every launch),
/// boxed behind a C entry point. It owns the box: keep it (as a
/// [`KeepAlive`](crate::KeepAlive), e.g. `Arc::new(callback)`) for as long as any graph or
/// exec holds [`HostCallback::raw_parts`] and any launch that may call it has not completed;
/// the box is freed when it drops, without waiting for anything.
#[allow(dead_code)] // for graph host nodes
pub(crate) struct HostCallback {
    call: unsafe extern "C" fn(*mut c_void),
    user_data: *mut c_void,
    free: unsafe fn(*mut c_void),
}

// SAFETY: the boxed closure is `Send + Sync`, and so may be called from CUDA's threads (even
// concurrently, by two execs of one graph) and dropped on any thread.
unsafe impl Send for HostCallback {}
// SAFETY: as above; `&HostCallback` only hands out the raw parts.
unsafe impl Sync for HostCallback {}

#[allow(dead_code)] // for graph host nodes
impl HostCallback {
    /// Boxes `f` behind a trampoline that catches its panics (recorded for
    /// [`take_unreported_errors`](crate::take_unreported_errors)).
    pub(crate) fn new<F>(f: F) -> HostCallback
    where
        F: Fn() + Send + Sync + 'static,
    {
        HostCallback {
            call: repeatable_trampoline::<F>,
            user_data: Box::into_raw(Box::new(f)).cast(),
            free: free_boxed::<F>,
        }
    }

    /// The function and user data for `cudaHostNodeParams { fn_, userData }` (or
    /// `cudaLaunchHostFunc`); valid while `self` lives.
    pub(crate) fn raw_parts(&self) -> (sys::cudaHostFn_t, *mut c_void) {
        (Some(self.call), self.user_data)
    }
}

impl Drop for HostCallback {
    fn drop(&mut self) {
        // SAFETY: `user_data` is the box `new` made for this `free`, freed only here, once.
        // Resources the closure captured defer their own CUDA calls if this runs inside a
        // host function.
        let _ = catch_unwind(AssertUnwindSafe(|| unsafe { (self.free)(self.user_data) }));
    }
}

/// CUDA's entry point for repeatable closures: `user_data` is a live `Box<F>`.
#[allow(dead_code)] // for graph host nodes
unsafe extern "C" fn repeatable_trampoline<F: Fn() + Send + Sync + 'static>(user_data: *mut c_void) {
    // SAFETY: `user_data` was made by `HostCallback::new::<F>` and is alive: its owner is the
    // keep-alive list of the graph family whose host node passes it, which every exec that
    // may launch that node keeps (as its source, an update's graph, or retired after an
    // update) until its last launch completed: such execs fence every launch and wait for
    // or check the fence before letting go (graph/exec/release.rs, graph/retired.rs). `F: Sync`
    // allows calls from several threads at once.
    let f = unsafe { &*user_data.cast::<F>() };
    let _ = catch_unwind(AssertUnwindSafe(|| run_guarded(f)));
}

/// Frees the box of a [`HostCallback`].
///
/// # Safety
/// `user_data` must come from `Box::<F>::into_raw` and not have been freed.
#[allow(dead_code)] // for graph host nodes
unsafe fn free_boxed<F>(user_data: *mut c_void) {
    // SAFETY: guaranteed by the caller.
    drop(unsafe { Box::from_raw(user_data.cast::<F>()) });
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::sync::{mpsc, Arc};

    use super::*;
    use crate::release::{defer_drop, in_host_fn};

    /// The error record is global: tests that read it take turns.
    static RECORD_READERS: Mutex<()> = Mutex::new(());

    #[test]
    fn a_repeatable_callback_runs_each_time_and_its_panics_are_recorded() {
        let _turn = lock(&RECORD_READERS);
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let callback = HostCallback::new(move || {
            if counted.fetch_add(1, Ordering::SeqCst) == 1 {
                panic!("second call fails: unit-test marker 7781");
            }
        });
        let (call, user_data) = callback.raw_parts();
        let call = call.unwrap();
        for _ in 0..3 {
            // SAFETY: the parts belong to `callback`, which is alive.
            unsafe { call(user_data) };
        }
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        let errors = crate::take_unreported_errors();
        assert!(
            errors.iter().any(|e| matches!(e, CudaError::HostFunctionPanicked { message }
                if message == "second call fails: unit-test marker 7781")),
            "{errors:?}"
        );
        drop(callback);
        assert_eq!(Arc::strong_count(&calls), 1, "dropping the callback frees the closure");
    }

    #[test]
    fn a_one_shot_runs_once_and_a_second_call_is_reported_not_undefined() {
        let _turn = lock(&RECORD_READERS);
        let (sender, receiver) = mpsc::channel();
        let id = NEXT_ONE_SHOT.fetch_add(1, Ordering::Relaxed);
        lock(&ONE_SHOTS).insert(id, Box::new(move || sender.send(id).unwrap()));
        // SAFETY: the trampoline accepts any user data; it is only a key.
        unsafe { one_shot_trampoline(id as usize as *mut c_void) };
        assert_eq!(receiver.try_recv(), Ok(id));
        // SAFETY: as above.
        unsafe { one_shot_trampoline(id as usize as *mut c_void) };
        let again = Some(&crate::Refusal::OneShotCalledAgain);
        assert!(crate::take_unreported_errors().iter().any(|err| err.refusal() == again));
    }

    #[test]
    fn resources_dropped_inside_a_host_function_are_released_on_another_thread() {
        struct Probe(mpsc::Sender<std::thread::ThreadId>);
        impl Drop for Probe {
            fn drop(&mut self) {
                if in_host_fn() {
                    let sender = self.0.clone();
                    defer_drop(Probe(sender));
                } else {
                    let _ = self.0.send(std::thread::current().id());
                }
            }
        }
        let (sender, receiver) = mpsc::channel();
        let probe = Probe(sender);
        assert!(!in_host_fn());
        run_guarded(move || {
            assert!(in_host_fn());
            drop(probe);
        });
        assert!(!in_host_fn());
        let released_on = receiver.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        assert_ne!(released_on, std::thread::current().id());
    }
}
