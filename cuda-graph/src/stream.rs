//! Streams: ordered queues of device work.

use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use crate::runtime as sys;

use crate::device::{note_in_use, CurrentFor, Device};
use crate::error::{check, check_done, Result};

mod raw;

pub use raw::BorrowedStream;

/// How to create a [`Stream`].
///
/// ```
/// let options = cuda_graph::StreamOptions { non_blocking: true, priority: Some(-1) };
/// assert!(options.non_blocking);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamOptions {
    /// Do not synchronize with the legacy default stream (`cudaStreamNonBlocking`).
    pub non_blocking: bool,
    /// Scheduling priority; lower numbers run first. `None` is the default priority. See
    /// [`Stream::priority_range`].
    pub priority: Option<i32>,
}

/// For a type `T` that owns a CUDA stream or event handle, with options `O`: `Send` and
/// `Sync`, and, with the docs given, `T::new()` (`T::with_options(O::default())`) and
/// `T::with_options_on(device, options)` (`T::with_options` with `device` current).
macro_rules! runtime_handle {
    (
        $ty:ident($options:ident);
        $(#[$new_doc:meta])* new;
        $(#[$on_doc:meta])* with_options_on;
    ) => {
        // SAFETY: CUDA streams and events may be used (queued on, recorded, queried, waited
        // for) and destroyed from any host thread; the runtime serializes access to them.
        // Besides its handle the type holds plain `Copy` data.
        unsafe impl Send for $ty {}
        // SAFETY: every operation through a shared reference is a thread-safe runtime call.
        unsafe impl Sync for $ty {}

        impl $ty {
            $(#[$new_doc])*
            pub fn new() -> $crate::error::Result<$ty> {
                $ty::with_options($options::default())
            }

            $(#[$on_doc])*
            pub fn with_options_on(device: $crate::device::Device, options: $options) -> $crate::error::Result<$ty> {
                device.with_current(|| $ty::with_options(options))
            }
        }
    };
}
pub(crate) use runtime_handle;

/// A CUDA stream of one device, destroyed on drop.
///
/// The stream belongs to the device current when it was made ([`Stream::new`]) or to the one
/// named ([`Stream::new_on`]); work queued on it runs there, and launches switch to that
/// device for the call when another one is current (see [`Device`], "Several devices").
///
/// Dropping a stream does not wait: work already queued still runs to completion
/// (`cudaStreamDestroy` semantics). Buffers and graphs used by that work must outlive it,
/// which the borrows of the launching calls ensure until the stream is synchronized.
///
/// ```no_run
/// use cuda_graph::Stream;
/// let stream = Stream::new()?;
/// // ... queue work ...
/// stream.synchronize()?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug)]
pub struct Stream {
    raw: sys::cudaStream_t,
    /// Created with `cudaStreamNonBlocking`: not ordered with the legacy default stream.
    non_blocking: bool,
    /// The device it was created on (`cudaStreamGetDevice`).
    device: Device,
    /// Whether the stream may take part in a capture that this crate did not begin: it was
    /// made by other code ([`Stream::from_raw`], [`Stream::borrow_raw`], cudarc's streams),
    /// shown to other code that can begin one on it (`to_cudarc`), or made to wait on an event
    /// of other code (which may join it into their capture). Work queued on such a stream
    /// asks CUDA whether it is capturing every time, instead of only while a capture of this
    /// crate runs (see `capture_gate`). Never cleared.
    foreign_capture: AtomicBool,
    /// A default-stream handle (null, `cudaStreamLegacy`, `cudaStreamPerThread`): it names the
    /// default stream of whichever context is current at each call, so work queued on it
    /// makes `device`'s primary context current first ([`Stream::make_current`]).
    context_relative: bool,
    /// The driver context the stream belongs to, as an address (0: unknown, or a
    /// default-stream handle), read at the first launch that asks (`driver::stream_context`).
    driver_context: OnceLock<usize>,
}

runtime_handle! {
    Stream(StreamOptions);
    /// A blocking stream of default priority on the current device.
    new;
    /// A stream with the given flags and priority on `device` (see [`Stream::new_on`]).
    ///
    /// ```no_run
    /// use cuda_graph::{Device, Stream, StreamOptions};
    /// let options = StreamOptions { non_blocking: true, priority: None };
    /// let stream = Stream::with_options_on(Device::get(0)?, options)?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    with_options_on;
}

impl Stream {
    /// A blocking stream of default priority on `device`, whatever the thread's current
    /// device is (it stays current).
    ///
    /// ```no_run
    /// use cuda_graph::{Device, Stream};
    /// let second = Device::get(1)?;
    /// let stream = Stream::new_on(second)?;
    /// assert_eq!(stream.device(), second);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn new_on(device: Device) -> Result<Stream> {
        Stream::with_options_on(device, StreamOptions::default())
    }

    /// A stream with the given flags and priority on the current device.
    pub fn with_options(options: StreamOptions) -> Result<Stream> {
        let flags = if options.non_blocking { sys::cudaStreamNonBlocking } else { sys::cudaStreamDefault };
        let mut raw = ptr::null_mut();
        match options.priority {
            Some(priority) => check(
                // SAFETY: `raw` is a valid out-pointer; CUDA clamps the priority to its range.
                unsafe { sys::cudaStreamCreateWithPriority(&mut raw, flags, priority) },
                "cudaStreamCreateWithPriority",
            )?,
            None => check(
                // SAFETY: `raw` is a valid out-pointer.
                unsafe { sys::cudaStreamCreateWithFlags(&mut raw, flags) },
                "cudaStreamCreateWithFlags",
            )?,
        }
        let mut ordinal = 0;
        // SAFETY: the stream was just created; `ordinal` is a valid, writable int.
        let status = unsafe { sys::cudaStreamGetDevice(raw, &mut ordinal) };
        // Owned from here: dropped (destroyed) if asking for its device failed.
        let mut stream = Stream::owned(raw, options.non_blocking, Device::from_ordinal(0));
        check(status, "cudaStreamGetDevice")?;
        stream.device = Device::from_ordinal(ordinal);
        note_in_use(stream.device);
        if let Some(context) = stream.driver_context() {
            // Made by the runtime in the device's primary context (see `runtime`).
            sys::record_primary_context(stream.device.ordinal(), context);
        }
        Ok(stream)
    }

    /// The device the stream belongs to.
    ///
    /// ```no_run
    /// let stream = cuda_graph::Stream::new()?;
    /// assert_eq!(stream.device(), cuda_graph::Device::current()?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    #[inline]
    pub fn device(&self) -> Device {
        self.device
    }

    /// The (least, greatest) priorities the current device supports; numerically lower is
    /// higher priority, so the second value is the highest priority.
    pub fn priority_range() -> Result<(i32, i32)> {
        let (mut least, mut greatest) = (0, 0);
        check(
            // SAFETY: both are valid, writable i32s.
            unsafe { sys::cudaDeviceGetStreamPriorityRange(&mut least, &mut greatest) },
            "cudaDeviceGetStreamPriorityRange",
        )?;
        Ok((least, greatest))
    }

    /// This stream's priority.
    pub fn priority(&self) -> Result<i32> {
        let mut priority = 0;
        // SAFETY: the stream is alive; `priority` is writable.
        check(unsafe { sys::cudaStreamGetPriority(self.raw, &mut priority) }, "cudaStreamGetPriority")?;
        Ok(priority)
    }

    /// Waits until all work queued so far has finished.
    pub fn synchronize(&self) -> Result<()> {
        let _on_device = self.make_current()?;
        // SAFETY: the stream is alive.
        check(unsafe { sys::cudaStreamSynchronize(self.raw) }, "cudaStreamSynchronize")
    }

    /// True when all queued work has finished (`cudaStreamQuery`), without waiting.
    pub fn is_idle(&self) -> Result<bool> {
        let _on_device = self.make_current()?;
        // SAFETY: the stream is alive.
        check_done(unsafe { sys::cudaStreamQuery(self.raw) }, "cudaStreamQuery")
    }

    /// A stream of this crate's own making (queuing on it takes the cheap capture check).
    fn owned(raw: sys::cudaStream_t, non_blocking: bool, device: Device) -> Stream {
        Stream {
            raw,
            non_blocking,
            device,
            foreign_capture: AtomicBool::new(false),
            context_relative: false,
            driver_context: OnceLock::new(),
        }
    }

    /// A stream other code made (or a default-stream handle): queuing on it always asks CUDA
    /// about capture.
    fn foreign(raw: sys::cudaStream_t, non_blocking: bool, device: Device) -> Stream {
        let context_relative = (raw as usize) <= 2;
        Stream {
            raw,
            non_blocking,
            device,
            foreign_capture: AtomicBool::new(true),
            context_relative,
            driver_context: OnceLock::new(),
        }
    }

    /// Makes the stream's device current for the work about to be queued on it, until the
    /// guard drops: a thread-local read when the crate remembers it current already (the
    /// stream's handle names its context, so a stale memory can only make CUDA refuse the
    /// call); for a default-stream handle, which names the default stream of whatever
    /// context is current, the device's primary context is always made current.
    #[inline]
    pub(crate) fn make_current(&self) -> Result<CurrentFor> {
        if self.context_relative {
            CurrentFor::always(self.device)
        } else {
            CurrentFor::new(self.device)
        }
    }

    /// The driver context the stream belongs to, as an address (`cuStreamGetCtx`, read once);
    /// `None` for a default-stream handle, whose context is whichever is current, or when the
    /// driver cannot say.
    #[inline]
    pub(crate) fn driver_context(&self) -> Option<usize> {
        if self.context_relative {
            return None;
        }
        let context =
            *self.driver_context.get_or_init(|| crate::driver::stream_context(self.raw).unwrap_or(0));
        (context != 0).then_some(context)
    }

    /// Whether the handle is a default-stream handle, whose meaning depends on the current
    /// context (see [`Stream::make_current`]).
    #[inline]
    pub(crate) fn is_context_relative(&self) -> bool {
        self.context_relative
    }

    /// Whether the stream may be captured by code other than this crate (see the field's
    /// docs): one relaxed load.
    #[inline]
    pub(crate) fn may_capture_elsewhere(&self) -> bool {
        self.foreign_capture.load(Ordering::Relaxed)
    }

    /// From now on, work queued on this stream asks CUDA about capture every time: other code
    /// may begin a capture on it, or join it into one. Called under the capture gate's write
    /// guard (`capture_gate::note_foreign_capture_possible`), whose release orders the store
    /// before every later queuing operation's read guard.
    pub(crate) fn set_foreign_capture(&self) {
        self.foreign_capture.store(true, Ordering::Relaxed);
    }

    /// Whether the stream was created non-blocking ([`StreamOptions::non_blocking`]): its
    /// work is not ordered with the legacy default stream.
    pub(crate) fn is_non_blocking(&self) -> bool {
        self.non_blocking
    }

    /// The raw handle, for calls this crate does not wrap. The stream still owns it.
    pub fn as_raw(&self) -> sys::cudaStream_t {
        self.raw
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // CUDA calls are not allowed inside a host function: destroy it on another thread.
        if self.raw.is_null() {
            return;
        }
        let (non_blocking, device) = (self.non_blocking, self.device);
        let moved = || Stream::owned(std::mem::replace(&mut self.raw, ptr::null_mut()), non_blocking, device);
        if crate::release::deferred_in_host_fn(moved) {
            return;
        }
        // SAFETY: the handle is owned and destroyed once; queued work still completes.
        let status = unsafe { sys::cudaStreamDestroy(self.raw) };
        crate::release::record_drop_error(status, "cudaStreamDestroy");
    }
}
