//! Completion without blocking a thread: a [`Completion`] future that resolves once the work
//! queued before it on a stream (or an event, or an exec's launch) has finished, woken by a
//! host function CUDA calls at that point (`cudaLaunchHostFunc`), never by polling.
//!
//! The future is runtime-agnostic: any executor drives it (it needs only `Waker`s). The
//! waker is called on CUDA's callback thread, where CUDA calls are forbidden: executors'
//! wakers only schedule the task, which is fine. Dropping the future early cancels nothing
//! (the work runs on) and leaks nothing (the host function still runs and frees its state).
//!
//! ```no_run
//! # async fn example() -> cuda_graph::Result<()> {
//! let stream = cuda_graph::Stream::new()?;
//! // ... queue work on `stream` ...
//! stream.completion()?.await?; // the task sleeps; the thread serves others meanwhile
//! # Ok(()) }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use crate::error::{CudaError, Result};
use crate::event::{Event, EventOptions};
use crate::stream::{Stream, StreamOptions};

/// What the host function and the future share.
#[derive(Default)]
struct Shared {
    done: bool,
    waker: Option<Waker>,
}

/// A future that resolves when the work it follows has finished ([`Stream::completion`],
/// [`Event::completion`], [`GraphExec::launch_completion`](crate::graph::GraphExec::launch_completion)).
/// Its output is `Err` when that work failed (the error a query of the marker event gives).
///
/// ```no_run
/// use std::future::Future;
/// fn is_a_future(_: &impl Future<Output = cuda_graph::Result<()>>) {}
/// let completion = cuda_graph::Stream::new()?.completion()?;
/// is_a_future(&completion);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[must_use = "a completion does nothing unless awaited"]
pub struct Completion {
    shared: Arc<Mutex<Shared>>,
    /// Recorded just before the host function: queried once it ran, for the work's status.
    marker: Event,
}

impl std::fmt::Debug for Completion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completion").field("done", &lock(&self.shared).done).finish()
    }
}

fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Completion {
    /// Marks the work queued so far on `stream` and queues the host function that completes
    /// the future.
    fn after(stream: &Stream) -> Result<Completion> {
        // A marker and a host function recorded into a capture would run at the graph's
        // launches instead: refuse (the gate is released before the calls below, which take
        // it themselves; a capture begun meanwhile makes `launch_host_fn` refuse).
        drop(crate::capture_gate::refuse_during_capture(stream, "Stream::completion")?);
        let marker = Event::with_options(EventOptions { timing: false, blocking_sync: false })?;
        marker.record(stream)?;
        let shared = Arc::new(Mutex::new(Shared::default()));
        let signal = shared.clone();
        stream.launch_host_fn(move || {
            let waker = {
                let mut state = lock(&signal);
                state.done = true;
                state.waker.take()
            };
            if let Some(waker) = waker {
                waker.wake();
            }
        })?;
        Ok(Completion { shared, marker })
    }

    /// True once the work has finished (the future would be ready), without waiting.
    pub fn is_done(&self) -> bool {
        lock(&self.shared).done
    }
}

impl Future for Completion {
    type Output = Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        {
            let mut state = lock(&self.shared);
            if !state.done {
                match &mut state.waker {
                    Some(waker) if waker.will_wake(cx.waker()) => {}
                    slot => *slot = Some(cx.waker().clone()),
                }
                return Poll::Pending;
            }
        }
        // The host function ran: everything before it finished, or failed.
        Poll::Ready(match self.marker.is_complete() {
            Ok(true) => Ok(()),
            Ok(false) => Err(CudaError::refused("Completion", crate::Refusal::MarkerNotComplete)),
            Err(err) => Err(err),
        })
    }
}

impl Stream {
    /// A future that resolves once the work queued on this stream so far has finished
    /// (`cudaEventRecord`, then `cudaLaunchHostFunc` to wake it). Refused while the stream
    /// is being captured (the host function would be captured instead).
    ///
    /// ```no_run
    /// # async fn f() -> cuda_graph::Result<()> {
    /// let stream = cuda_graph::Stream::new()?;
    /// let data = cuda_graph::DeviceBuffer::<u32>::zeroed(1 << 20)?;
    /// let mut copy = cuda_graph::DeviceBuffer::<u32>::zeroed(1 << 20)?;
    /// copy.copy_from_device_async(&data, &stream)?;
    /// stream.completion()?.await?;
    /// # Ok(()) }
    /// ```
    pub fn completion(&self) -> Result<Completion> {
        Completion::after(self)
    }
}

impl Event {
    /// A future that resolves once this event's latest record (at the time of this call)
    /// has completed: a stream of the current device waits for the event, and the host
    /// function follows the wait there. An event never recorded resolves at once.
    ///
    /// ```no_run
    /// # async fn f() -> cuda_graph::Result<()> {
    /// let stream = cuda_graph::Stream::new()?;
    /// let event = cuda_graph::Event::new()?;
    /// event.record(&stream)?;
    /// event.completion()?.await?;
    /// # Ok(()) }
    /// ```
    pub fn completion(&self) -> Result<Completion> {
        let waiter = Stream::with_options(StreamOptions { non_blocking: true, priority: None })?;
        waiter.wait_event(self)?;
        // Dropping `waiter` does not cancel what it queued: the wait and the host function run.
        Completion::after(&waiter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_completion_wakes_its_latest_waker_once_done() {
        struct Flag(std::sync::atomic::AtomicBool);
        impl std::task::Wake for Flag {
            fn wake(self: Arc<Self>) {
                self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let shared = Arc::new(Mutex::new(Shared::default()));
        let flag = Arc::new(Flag(false.into()));
        lock(&shared).waker = Some(Waker::from(flag.clone()));
        // What the host function does:
        let waker = {
            let mut state = lock(&shared);
            state.done = true;
            state.waker.take()
        };
        waker.unwrap().wake();
        assert!(flag.0.load(std::sync::atomic::Ordering::SeqCst));
        assert!(lock(&shared).done && lock(&shared).waker.is_none());
    }
}
