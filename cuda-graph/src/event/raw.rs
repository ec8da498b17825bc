//! Raw event handles in and out: adopting an event another library made
//! ([`Event::from_raw`]), borrowing one ([`Event::borrow_raw`], [`BorrowedEvent`]), and
//! handing one over ([`Event::into_raw`]).

use std::mem::ManuallyDrop;

use crate::runtime as sys;

use super::Event;
use crate::device::Device;
use crate::error::{CudaError, Result};
use crate::release::borrowed_handle;

impl Event {
    /// Takes ownership of an event made by calls this crate does not wrap: the returned
    /// `Event` destroys it on drop. A null handle is refused.
    ///
    /// # Safety
    /// `raw` must be a live event (`cudaEventCreate*`, or the driver's `cuEventCreate`) of the
    /// current device's primary context, which nothing else destroys: ownership passes to the
    /// returned value.
    ///
    /// ```no_run
    /// use cuda_graph::{sys, Event};
    /// let mut raw = std::ptr::null_mut();
    /// // SAFETY: `raw` is a valid out-pointer.
    /// assert_eq!(unsafe { sys::cudaEventCreate(&mut raw) }, sys::cudaError::cudaSuccess);
    /// // SAFETY: a live event of the current device, owned by nothing else.
    /// let event = unsafe { Event::from_raw(raw) }?;
    /// assert!(event.is_complete()?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn from_raw(raw: sys::cudaEvent_t) -> Result<Event> {
        if raw.is_null() {
            return Err(CudaError::refused("Event::from_raw", crate::Refusal::NullHandle { what: "event" }));
        }
        // Whether it records timing cannot be asked of CUDA: taken as not, so that this crate's
        // early refusal of timed events where CUDA needs untimed ones (launch attributes)
        // leaves the verdict to CUDA, which checks the event itself.
        // Its device cannot be asked of CUDA either: the caller promises the current one.
        Ok(Event { raw, timing: false, device: Device::current()?, foreign: true })
    }

    /// Borrows an event this crate does not own, for as long as `'a`: the returned value
    /// derefs to an [`Event`] (record it, wait for it, make streams wait on it) and does not
    /// destroy the event when dropped.
    ///
    /// # Safety
    /// `raw` must be an event of the current device's primary context that stays alive, not
    /// destroyed by its owner, for all of `'a`.
    ///
    /// ```no_run
    /// use cuda_graph::{Event, Stream};
    /// let owner = Event::new()?;
    /// // SAFETY: `owner` outlives the borrow.
    /// let borrowed = unsafe { Event::borrow_raw(owner.as_raw()) }?;
    /// borrowed.record(&Stream::new()?)?;
    /// drop(borrowed);
    /// owner.synchronize()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn borrow_raw<'a>(raw: sys::cudaEvent_t) -> Result<BorrowedEvent<'a>> {
        // SAFETY: the caller's promise covers ownership too: the wrapper never destroys it.
        let event = unsafe { Event::from_raw(raw) }?;
        Ok(BorrowedEvent::new(event))
    }

    /// Hands the event over: returns the raw handle without destroying it. The caller owns
    /// it from now on (destroy it with `cudaEventDestroy`).
    ///
    /// ```no_run
    /// use cuda_graph::{sys, Event};
    /// let raw = Event::new()?.into_raw();
    /// // SAFETY: `raw` is a live event that nothing else owns any more.
    /// assert_eq!(unsafe { sys::cudaEventDestroy(raw) }, sys::cudaError::cudaSuccess);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn into_raw(self) -> sys::cudaEvent_t {
        ManuallyDrop::new(self).raw
    }
}

borrowed_handle! {
    /// An event this crate uses but does not own ([`Event::borrow_raw`]): it derefs to
    /// [`Event`], and dropping it leaves the event alone.
    ///
    /// ```no_run
    /// let owner = cuda_graph::Event::new()?;
    /// // SAFETY: `owner` outlives the borrow.
    /// let borrowed: cuda_graph::BorrowedEvent<'_> = unsafe { cuda_graph::Event::borrow_raw(owner.as_raw()) }?;
    /// assert!(borrowed.is_complete()?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    BorrowedEvent(Event)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_null_event_is_refused_before_cuda() {
        // SAFETY: refused before any CUDA call.
        let err = unsafe { Event::from_raw(std::ptr::null_mut()) }.unwrap_err();
        assert_eq!(err.refusal(), Some(&crate::Refusal::NullHandle { what: "event" }), "{err}");
    }

    #[test]
    fn handing_out_and_borrowing_never_destroy() {
        // Adopting an event asks CUDA for the current device (the event's, as the caller
        // promises), so this needs a device, though CUDA never sees the handle.
        gpu_test_support::require_gpu!();
        // A fake handle: neither path may call cudaEventDestroy on it.
        let fake = 0x1000 as sys::cudaEvent_t;
        // SAFETY: the fake handle is never used by CUDA: borrowed, then dropped.
        let borrowed = unsafe { Event::borrow_raw(fake) }.unwrap();
        assert_eq!(borrowed.as_raw(), fake);
        // SAFETY: as above: owned, then handed out again without a CUDA call.
        let owned = unsafe { Event::from_raw(fake) }.unwrap();
        assert_eq!(owned.into_raw(), fake);
    }
}
