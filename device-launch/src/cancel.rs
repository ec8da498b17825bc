//! Stopping a device-side loop from the host: a [`CancelFlag`] that kernels read
//! (`dl_cancelled(flag)`, `DL_RELAUNCH_SELF_UNLESS_CANCELLED(flag, slot)` in
//! `device_launch.cuh`) and the host sets while the loop runs, and a [`RunningLoop`] guard
//! whose drop stops the loop and waits for it, so dropping a running scheduler never hangs.
//!
//! The flag is a `u32` of device memory. [`CancelFlag::cancel`] writes it with a memset on the
//! flag's own non-blocking stream, ordered with no other work: it lands while a
//! self-relaunching loop holds its stream, and the loop's next run sees it and does not
//! relaunch. (A synchronous write would wait for the loop, which never ends.)

use std::sync::{Mutex, PoisonError};

use cuda_graph::kernel::KernelArgs;
use cuda_graph::{DeviceBuffer, DeviceConstPtr, Stream, StreamOptions};

use crate::error::Result;
use crate::error_slot::ErrorSlot;
use crate::launcher::Launcher;

/// A host-set flag that device code checks to stop (see the module docs).
///
/// ```no_run
/// let flag = device_launch::CancelFlag::new()?;
/// let argument = flag.arg(); // a `const uint32_t*` kernel parameter
/// flag.cancel()?;            // kernels reading it now see it set
/// flag.reset()?;
/// # Ok::<(), device_launch::Error>(())
/// ```
#[derive(Debug)]
pub struct CancelFlag {
    flag: Mutex<DeviceBuffer<u32>>,
    stream: Stream,
}

impl CancelFlag {
    /// A cleared flag, with its own non-blocking stream for writing it.
    pub fn new() -> Result<CancelFlag> {
        Ok(CancelFlag {
            flag: Mutex::new(DeviceBuffer::zeroed(1)?),
            stream: Stream::with_options(StreamOptions { non_blocking: true, priority: None })?,
        })
    }

    /// The kernel argument (`const uint32_t* cancel`): non-zero once cancelled.
    pub fn arg(&self) -> DeviceConstPtr<u32> {
        self.lock().ptr().as_const()
    }

    /// Sets the flag, and returns once it is written to device memory (it does not wait for
    /// the kernels that read it).
    pub fn cancel(&self) -> Result<()> {
        self.write(0x01)
    }

    /// Clears the flag, for the next run of the loop.
    pub fn reset(&self) -> Result<()> {
        self.write(0)
    }

    fn write(&self, byte: u8) -> Result<()> {
        self.lock().memset_async(byte, &self.stream)?;
        self.stream.synchronize()?;
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, DeviceBuffer<u32>> {
        self.flag.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A launcher's loop running on a stream until stopped ([`Launcher::start`]). Its kernel must
/// end the loop once its [`CancelFlag`] is set (`DL_RELAUNCH_SELF_UNLESS_CANCELLED`).
/// [`stop`](RunningLoop::stop) sets the flag, waits for the loop and reads the error slot;
/// dropping the guard does the same, keeping errors for [`cuda_graph::take_unreported_errors`].
#[derive(Debug)]
#[must_use = "dropping the guard stops the loop at once"]
pub struct RunningLoop<'a> {
    stream: &'a Stream,
    flag: &'a CancelFlag,
    slot: &'a ErrorSlot,
    stopped: bool,
}

impl<A: KernelArgs> Launcher<A> {
    /// Launches the launcher's graph on `stream` ([`launch`](Launcher::launch)) for a loop
    /// that runs until `flag` is cancelled: the returned guard stops it (clearing `flag`
    /// first, so that a flag set earlier does not end the loop at once).
    ///
    /// ```no_run
    /// # fn f<A: cuda_graph::KernelArgs>(launcher: &device_launch::Launcher<A>, flag: &device_launch::CancelFlag, slot: &device_launch::ErrorSlot) -> device_launch::Result<()> {
    /// let stream = cuda_graph::Stream::new()?;
    /// let running = launcher.start(&stream, flag, slot)?;
    /// // ... the device loop serves work meanwhile ...
    /// running.stop()?; // sets the flag, waits for the loop, reads the error slot
    /// # Ok(()) }
    /// ```
    pub fn start<'a>(
        &'a self, stream: &'a Stream, flag: &'a CancelFlag, slot: &'a ErrorSlot,
    ) -> Result<RunningLoop<'a>> {
        flag.reset()?;
        self.launch(stream)?;
        Ok(RunningLoop { stream, flag, slot, stopped: false })
    }
}

impl RunningLoop<'_> {
    /// Sets the flag, waits for the loop to end (`stream` synchronized) and returns the
    /// device-side launch failures it met, as [`Launcher::run`] does.
    pub fn stop(mut self) -> Result<()> {
        self.stopped = true;
        self.flag.cancel()?;
        self.stream.synchronize()?;
        self.slot.check()??;
        Ok(())
    }
}

impl Drop for RunningLoop<'_> {
    fn drop(&mut self) {
        if self.stopped {
            return;
        }
        // Without the flag set, waiting would never end: set it even if that fails once.
        let cancelled = self.flag.cancel().or_else(|_| self.flag.cancel());
        if let Err(err) = cancelled.and_then(|()| Ok(self.stream.synchronize()?)) {
            eprintln!("device_launch::RunningLoop: stopping the loop failed: {err}");
        }
    }
}
