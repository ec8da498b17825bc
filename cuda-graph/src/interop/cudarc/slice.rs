//! [`CudarcSlice`]: a cudarc device slice shared with this crate's kernels, copies, graphs and
//! execs, kept alive by them as a [`DeviceBuffer`](crate::DeviceBuffer) is.

use std::fmt;
use std::sync::Arc;

use ::cudarc::driver::{CudaSlice, DevicePtr as _};

use super::{driver_error, primary_device};
use crate::device::Device;
use crate::error::Result;
use crate::memory::{DevicePtr, DeviceRepr, DeviceSlice, KeepAlive};
use crate::release::{defer_drop, in_host_fn, record_drop_failure};

/// A cudarc [`CudaSlice`] given to this crate: [`ptr`](CudarcSlice::ptr) and
/// [`slice`](CudarcSlice::slice) make kernel arguments, copy and memset endpoints and graph
/// memory of it, each holding a share of it; the `CudaSlice` is dropped (cudarc frees it)
/// when the last share goes, after waiting for its device, so no kernel, copy or exec launch
/// queued before runs on freed memory. That is how this crate frees `cudaMalloc` memory, and
/// what makes sharing safe: cudarc's own frees are ordered only after work it tracked.
///
/// [`new`](CudarcSlice::new) waits for the slice's stream, so work of this crate queued
/// afterwards, on any stream, sees cudarc's allocation and what was queued into it. Later
/// cudarc work on it ([`cudarc`](CudarcSlice::cudarc)) and this crate's work are ordered only
/// by the streams they share: a race gives wrong values, never undefined behaviour (any bit
/// pattern is a valid `T`, [`DeviceRepr`]).
///
/// ```no_run
/// use cudarc::driver::CudaContext;
/// use cuda_graph::interop::cudarc::CudarcSlice;
/// use cuda_graph::{graph::Graph, DeviceBuffer};
/// let ctx = CudaContext::new(0).expect("cudarc context");
/// let data = ctx.default_stream().clone_htod(&[1u32, 2, 3]).expect("cudarc copy");
/// let shared = CudarcSlice::new(data)?;
/// let copy = DeviceBuffer::<u32>::zeroed(3)?;
/// let graph = Graph::new()?;
/// graph.add_memcpy(&copy.ptr(), &shared.ptr(), 3, &[])?;
/// drop(shared); // the graph keeps the cudarc slice alive
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct CudarcSlice<T: DeviceRepr> {
    held: Arc<Held<T>>,
    addr: u64,
    len: usize,
}

impl<T: DeviceRepr> fmt::Debug for CudarcSlice<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CudarcSlice({:#x}, len {}, device {})", self.addr, self.len, self.held.device.ordinal())
    }
}

/// The shared owner: drops the cudarc slice only after its device is idle.
struct Held<T: DeviceRepr> {
    slice: Option<CudaSlice<T>>,
    device: Device,
}

impl<T: DeviceRepr> Drop for Held<T> {
    fn drop(&mut self) {
        if self.slice.is_none() {
            return;
        }
        // CUDA calls are not allowed inside a host function: wait and free on another thread.
        if in_host_fn() {
            defer_drop(Held { slice: self.slice.take(), device: self.device });
            return;
        }
        let device = self.device;
        if let Err(err) = device.with_current(|| device.synchronize()) {
            // Work may still use the memory: leak it rather than let cudarc free it under it.
            record_drop_failure(err);
            std::mem::forget(self.slice.take());
        }
        // Else the slice drops with this value's fields: cudarc frees it, the device idle.
    }
}

impl<T: DeviceRepr> CudarcSlice<T> {
    /// Shares `slice` with this crate. Waits for the slice's stream (`cuStreamSynchronize`), so
    /// that its allocation and the work cudarc queued into it are done before any work of
    /// this crate uses it. Refused for a slice of a non-primary cudarc context.
    ///
    /// ```no_run
    /// let ctx = cudarc::driver::CudaContext::new(0).expect("cudarc context");
    /// let zeros = ctx.default_stream().alloc_zeros::<f32>(1024).expect("cudarc allocation");
    /// let shared = cuda_graph::interop::cudarc::CudarcSlice::new(zeros)?;
    /// assert_eq!(shared.len(), 1024);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn new(slice: CudaSlice<T>) -> Result<CudarcSlice<T>> {
        let device = primary_device(slice.context(), "CudarcSlice::new")?;
        slice.stream().synchronize().map_err(|err| driver_error(err, "cuStreamSynchronize"))?;
        let len = slice.len();
        let addr = {
            // Reading the address on the slice's own stream records a read there (cudarc's
            // event tracking), which is already complete after the wait above.
            let (addr, _record) = slice.device_ptr(slice.stream());
            addr
        };
        Ok(CudarcSlice { held: Arc::new(Held { slice: Some(slice), device }), addr, len })
    }

    /// A typed pointer to the first element, holding a share of the slice: a kernel
    /// argument, a copy or memset endpoint, graph memory.
    ///
    /// ```no_run
    /// # let shared: cuda_graph::interop::cudarc::CudarcSlice<u32> = todo!();
    /// let second_half = shared.ptr().offset(shared.len() / 2)?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn ptr(&self) -> DevicePtr<T> {
        DevicePtr::owned(self.addr, self.len, self.held.clone() as KeepAlive)
    }

    /// The whole slice as a [`DeviceSlice`] (pointer and length in one kernel argument),
    /// holding a share of it.
    pub fn slice(&self) -> DeviceSlice<T> {
        self.ptr().into_slice()
    }

    /// The cudarc slice, for cudarc's calls (copies to the host, cudarc launches). Work
    /// queued through it is ordered with this crate's only by streams (see the type's docs).
    pub fn cudarc(&self) -> &CudaSlice<T> {
        self.held.slice.as_ref().expect("a shared slice is only taken by its last owner")
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the slice has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device the memory lives on.
    pub fn device(&self) -> Device {
        self.held.device
    }

    /// Gives the cudarc slice back, once nothing of this crate shares it any more (no
    /// pointer, graph or exec holds it): refused, giving `self` back, otherwise. Waits for
    /// the device first, since stream launches of this crate that used it hold no share.
    ///
    /// ```no_run
    /// let ctx = cudarc::driver::CudaContext::new(0).expect("cudarc context");
    /// let zeros = ctx.default_stream().alloc_zeros::<u32>(8).expect("cudarc allocation");
    /// let shared = cuda_graph::interop::cudarc::CudarcSlice::new(zeros)?;
    /// let back = shared.into_cudarc().expect("nothing else shares it");
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn into_cudarc(self) -> std::result::Result<CudaSlice<T>, CudarcSlice<T>> {
        let CudarcSlice { held, addr, len } = self;
        match Arc::try_unwrap(held) {
            Ok(mut held) => {
                let device = held.device;
                if device.with_current(|| device.synchronize()).is_err() {
                    return Err(CudarcSlice { held: Arc::new(held), addr, len });
                }
                Ok(held.slice.take().expect("the slice is taken once"))
            }
            Err(held) => Err(CudarcSlice { held, addr, len }),
        }
    }
}
