//! Events: markers recorded into a stream, to wait for, to order other streams after, and to
//! time the work between two of them.

use std::ptr;

use crate::runtime as sys;

use crate::device::Device;
use crate::error::{check, check_done, CudaError, Result};
use crate::release::{deferred_in_host_fn, record_drop_error};
use crate::stream::{runtime_handle, Stream};

mod raw;

pub use raw::BorrowedEvent;

/// How to create an [`Event`]. The default records timestamps and waits by spinning.
///
/// ```
/// use cuda_graph::EventOptions;
/// let marker_only = EventOptions { timing: false, ..EventOptions::default() };
/// assert!(!marker_only.timing && !marker_only.blocking_sync);
/// assert!(EventOptions::default().timing);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventOptions {
    /// Record timestamps, for [`Event::elapsed_ms`]. Without them (`cudaEventDisableTiming`)
    /// recording and waiting are cheaper; use that for pure ordering.
    pub timing: bool,
    /// Make [`Event::synchronize`] block the thread until the event completes
    /// (`cudaEventBlockingSync`) instead of spinning on the CPU.
    pub blocking_sync: bool,
}

impl Default for EventOptions {
    fn default() -> EventOptions {
        EventOptions { timing: true, blocking_sync: false }
    }
}

/// A CUDA event (`cudaEvent_t`) of the device current when it was created (or the one given
/// to [`Event::with_options_on`]), destroyed on drop. It records only into streams of its
/// device; any stream may wait for it.
///
/// An event completes when the stream it was last recorded into reaches it. Use it to wait
/// on the host ([`Event::synchronize`], [`Event::is_complete`]), to make another stream wait
/// on the device ([`Stream::wait_event`]), or to time the work between two events
/// ([`Event::elapsed_ms`]).
///
/// ```no_run
/// use cuda_graph::{DeviceBuffer, Event, Stream};
/// let stream = Stream::new()?;
/// let (start, end) = (Event::new()?, Event::new()?);
/// let source = DeviceBuffer::<u8>::zeroed(64 << 20)?;
/// let mut target = DeviceBuffer::<u8>::zeroed(64 << 20)?;
/// start.record(&stream)?;
/// target.copy_from_device_async(&source, &stream)?;
/// end.record(&stream)?;
/// end.synchronize()?;
/// println!("64 MiB copied in {:.3} ms", Event::elapsed_ms(&start, &end)?);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug)]
pub struct Event {
    raw: sys::cudaEvent_t,
    device: Device,
    /// Created with timing (not `cudaEventDisableTiming`).
    timing: bool,
    /// Made by other code ([`Event::from_raw`], [`Event::borrow_raw`]): it may have been
    /// recorded in a capture this crate did not begin, so a stream waiting on it is marked
    /// (see [`Stream::wait_event`]).
    foreign: bool,
}

runtime_handle! {
    Event(EventOptions);
    /// An event with timing enabled, on the current device (`cudaEventCreateWithFlags`).
    ///
    /// ```no_run
    /// let event = cuda_graph::Event::new()?;
    /// assert!(event.is_complete()?, "an event never recorded counts as complete");
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    new;
    /// An event with the given options on `device`, whatever the thread's current device is.
    ///
    /// ```no_run
    /// use cuda_graph::{Device, Event, EventOptions, Stream};
    /// let second = Device::get(1)?;
    /// let event = Event::with_options_on(second, EventOptions::default())?;
    /// event.record(&Stream::new_on(second)?)?;
    /// assert_eq!(event.device(), second);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    with_options_on;
}

impl Event {
    /// An event with the given options, on the current device (`cudaEventCreateWithFlags`).
    ///
    /// ```no_run
    /// use cuda_graph::{Event, EventOptions};
    /// let fence = Event::with_options(EventOptions { timing: false, blocking_sync: true })?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn with_options(options: EventOptions) -> Result<Event> {
        let device = Device::current()?;
        let mut flags = sys::cudaEventDefault;
        if !options.timing {
            flags |= sys::cudaEventDisableTiming;
        }
        if options.blocking_sync {
            flags |= sys::cudaEventBlockingSync;
        }
        let mut raw = ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; the flags are valid event flags.
        check(unsafe { sys::cudaEventCreateWithFlags(&mut raw, flags) }, "cudaEventCreateWithFlags")?;
        Ok(Event { raw, device, timing: options.timing, foreign: false })
    }

    /// The device the event belongs to.
    ///
    /// ```no_run
    /// let event = cuda_graph::Event::new()?;
    /// assert_eq!(event.device(), cuda_graph::Device::current()?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn device(&self) -> Device {
        self.device
    }

    /// An event without timing, already recorded into `stream`: a fence that completes when
    /// `stream` has finished the work queued so far. For code that holds the capture gate for
    /// the work it fences (pinned copies, exec launches), whose capture checks cover the
    /// record: it takes no guard itself (a second read guard on one thread would wait behind
    /// a waiting writer, which waits for the first: a deadlock).
    pub(crate) fn fence(stream: &Stream) -> Result<Event> {
        let event =
            Event::with_options_on(stream.device(), EventOptions { timing: false, blocking_sync: false })?;
        // SAFETY: the event and the stream are alive.
        check(unsafe { sys::cudaEventRecord(event.raw, stream.as_raw()) }, "cudaEventRecord")?;
        Ok(event)
    }

    /// Records the event into `stream` (`cudaEventRecord`): it completes once the work
    /// queued on `stream` before this call has finished. Recording again moves the marker.
    ///
    /// ```no_run
    /// let stream = cuda_graph::Stream::new()?;
    /// let event = cuda_graph::Event::new()?;
    /// event.record(&stream)?;
    /// event.synchronize()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    ///
    /// Refused, naming both devices, when `stream` belongs to another device than the event;
    /// refused too while `stream` is captured by code outside this crate (cudarc's
    /// `begin_capture` on a stream it made): a stream waiting on the event would join that
    /// capture, whose graph keeps nothing of this crate's work alive.
    pub fn record(&self, stream: &Stream) -> Result<()> {
        if stream.device() != self.device {
            return Err(CudaError::refused(
                "Event::record",
                crate::Refusal::DevicesDiffer {
                    pair: crate::refusal::DevicePair::EventAndStream,
                    first: self.device.ordinal(),
                    second: stream.device().ordinal(),
                },
            ));
        }
        // A stream that captures for other code is refused: a stream of this crate waiting on
        // the event would join that capture (see `capture_gate`). Held until CUDA has the
        // record, so no capture begins between the check and the call.
        let gate = crate::capture_gate::enter_queue_on(stream, "Event::record")?;
        crate::capture_gate::with_capture_sink(stream, "Event::record", |_| Ok(()))?;
        // SAFETY: the event and the stream are alive.
        let status = unsafe { sys::cudaEventRecord(self.raw, stream.as_raw()) };
        drop(gate);
        check(status, "cudaEventRecord")
    }

    /// Waits on the host until the event has completed (`cudaEventSynchronize`); at once if
    /// it was never recorded.
    ///
    /// ```no_run
    /// let stream = cuda_graph::Stream::new()?;
    /// let event = cuda_graph::Event::new()?;
    /// event.record(&stream)?;
    /// event.synchronize()?;
    /// assert!(event.is_complete()?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: the event is alive.
        check(unsafe { sys::cudaEventSynchronize(self.raw) }, "cudaEventSynchronize")
    }

    /// True when the event has completed (or was never recorded), without waiting
    /// (`cudaEventQuery`; `cudaErrorNotReady` is `false`).
    ///
    /// ```no_run
    /// let stream = cuda_graph::Stream::new()?;
    /// let event = cuda_graph::Event::new()?;
    /// event.record(&stream)?;
    /// while !event.is_complete()? {
    ///     std::thread::yield_now();
    /// }
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn is_complete(&self) -> Result<bool> {
        // SAFETY: the event is alive.
        check_done(unsafe { sys::cudaEventQuery(self.raw) }, "cudaEventQuery")
    }

    /// Milliseconds between two completed events (`cudaEventElapsedTime`; resolution about
    /// half a microsecond). Both need timing ([`EventOptions::timing`]) and must have been
    /// recorded; an event not yet complete is `cudaErrorNotReady`.
    ///
    /// ```no_run
    /// use cuda_graph::{Event, Stream};
    /// let stream = Stream::new()?;
    /// let (start, end) = (Event::new()?, Event::new()?);
    /// start.record(&stream)?;
    /// // ... queue the work to time ...
    /// end.record(&stream)?;
    /// end.synchronize()?;
    /// let ms = Event::elapsed_ms(&start, &end)?;
    /// assert!(ms >= 0.0);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    ///
    /// Refused, naming both devices, for events of two devices (their clocks differ).
    pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f32> {
        if start.device != end.device {
            return Err(CudaError::refused(
                "Event::elapsed_ms",
                crate::Refusal::DevicesDiffer {
                    pair: crate::refusal::DevicePair::StartAndEndEvent,
                    first: start.device.ordinal(),
                    second: end.device.ordinal(),
                },
            ));
        }
        let mut ms = 0.0f32;
        // SAFETY: both events are alive; `ms` is a valid, writable f32.
        check(unsafe { sys::cudaEventElapsedTime(&mut ms, start.raw, end.raw) }, "cudaEventElapsedTime")?;
        Ok(ms)
    }

    /// The raw handle, for calls this crate does not wrap (graph event nodes, say). The
    /// event still owns it.
    ///
    /// ```no_run
    /// let event = cuda_graph::Event::new()?;
    /// assert!(!event.as_raw().is_null());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn as_raw(&self) -> sys::cudaEvent_t {
        self.raw
    }

    /// Whether the event records timestamps (created with `timing: true`, the default).
    /// Events that launches record programmatically must not
    /// ([`LaunchAttributes`](crate::kernel::LaunchAttributes) checks it).
    ///
    /// ```no_run
    /// use cuda_graph::{Event, EventOptions};
    /// assert!(Event::new()?.records_timing());
    /// assert!(!Event::with_options(EventOptions { timing: false, ..Default::default() })?.records_timing());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn records_timing(&self) -> bool {
        self.timing
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        // CUDA calls are not allowed inside a host function: destroy it elsewhere.
        let (device, timing, foreign) = (self.device, self.timing, self.foreign);
        if deferred_in_host_fn(|| Event {
            raw: std::mem::replace(&mut self.raw, ptr::null_mut()),
            device,
            timing,
            foreign,
        }) {
            return;
        }
        // SAFETY: the handle is owned and destroyed once. An event still pending in a stream
        // may be destroyed: CUDA releases it once it completes.
        record_drop_error(unsafe { sys::cudaEventDestroy(self.raw) }, "cudaEventDestroy");
    }
}

impl Stream {
    /// Makes all work queued on this stream after this call wait until `event` has completed
    /// (`cudaStreamWaitEvent`), without blocking the host. The wait is for the event's most
    /// recent record at the time of this call; an event never recorded is no wait at all.
    ///
    /// ```no_run
    /// use cuda_graph::{DeviceBuffer, Event, Stream};
    /// let (producer, consumer) = (Stream::new()?, Stream::new()?);
    /// let source = DeviceBuffer::from_slice(&[1u32, 2, 3])?;
    /// let mut middle = DeviceBuffer::<u32>::zeroed(3)?;
    /// let mut target = DeviceBuffer::<u32>::zeroed(3)?;
    /// middle.copy_from_device_async(&source, &producer)?;
    /// let produced = Event::new()?;
    /// produced.record(&producer)?;
    /// consumer.wait_event(&produced)?;
    /// target.copy_from_device_async(&middle, &consumer)?;
    /// consumer.synchronize()?;
    /// assert_eq!(target.to_vec()?, [1, 2, 3]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        // The wait may join this stream into a capture: no launch on it may be between its
        // capture check and its CUDA call meanwhile (see `capture_gate`).
        let _gate = crate::capture_gate::enter_wait(self, event.foreign)?;
        // SAFETY: the stream and the event are alive; flags 0 is the default wait.
        check(unsafe { sys::cudaStreamWaitEvent(self.as_raw(), event.raw, 0) }, "cudaStreamWaitEvent")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_can_be_shared_between_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Event>();
    }

    #[test]
    fn default_options_time_and_spin() {
        assert_eq!(EventOptions::default(), EventOptions { timing: true, blocking_sync: false });
    }
}
