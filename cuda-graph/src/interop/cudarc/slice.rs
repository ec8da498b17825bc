//! [`CudarcSlice`]: a cudarc device slice shared with this crate's kernels, copies, graphs and
//! execs, kept alive by them as a [`DeviceBuffer`](crate::DeviceBuffer) is.

use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

use crate::runtime as sys;
use ::cudarc::driver::{CudaSlice, DevicePtr as _};

use super::{driver_error, primary_device};
use crate::device::Device;
use crate::error::Result;
use crate::memory::{Allocation, DevicePtr, DeviceRepr, DeviceSlice, KeepAlive};

/// A cudarc [`CudaSlice`] given to this crate: [`ptr`](CudarcSlice::ptr) and
/// [`slice`](CudarcSlice::slice) make kernel arguments, copy and memset endpoints and graph
/// memory of it, each holding a share of it; the `CudaSlice` is dropped (cudarc frees it)
/// when the last share goes, after waiting for its device and every other device whose work
/// used it, so no kernel, copy or exec launch queued before runs on freed memory. Its shares
/// are the same record as a [`DeviceBuffer`](crate::DeviceBuffer)'s, so launches and nodes of
/// another device check peer (or pool) access for it and mark it used there. That is how this crate frees `cudaMalloc` memory, and
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
    /// The record kernels, copies, graphs and execs keep (as they keep a `DeviceBuffer`'s):
    /// device checks and frees see it like this crate's own memory. Its drop waits for every
    /// device that used the memory, then drops its share of `slice`.
    allocation: Arc<Allocation>,
    /// cudarc's slice, for [`cudarc`](CudarcSlice::cudarc); the allocation's release holds
    /// the other share, so cudarc frees it only after that wait.
    slice: Arc<CudaSlice<T>>,
    addr: u64,
    len: usize,
}

impl<T: DeviceRepr> fmt::Debug for CudarcSlice<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CudarcSlice({:#x}, len {}, device {})", self.addr, self.len, self.device().ordinal())
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
        let pool = if len == 0 { std::ptr::null_mut() } else { memory_pool(addr)? };
        let slice = Arc::new(slice);
        let release = {
            let share = slice.clone();
            Box::new(move || drop(share)) as Box<dyn FnOnce() + Send>
        };
        let bytes = len.saturating_mul(size_of::<T>());
        let ptr = if len == 0 { std::ptr::null_mut() } else { addr as usize as *mut c_void };
        let allocation = Arc::new(Allocation::foreign(ptr, bytes, device, pool, release));
        Ok(CudarcSlice { allocation, slice, addr, len })
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
        DevicePtr::owned(self.addr, self.len, self.allocation.clone() as KeepAlive)
    }

    /// The whole slice as a [`DeviceSlice`] (pointer and length in one kernel argument),
    /// holding a share of it.
    pub fn slice(&self) -> DeviceSlice<T> {
        self.ptr().into_slice()
    }

    /// The cudarc slice, for cudarc's calls (copies to the host, cudarc launches). Work
    /// queued through it is ordered with this crate's only by streams (see the type's docs).
    pub fn cudarc(&self) -> &CudaSlice<T> {
        &self.slice
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
        self.allocation.device()
    }

    /// Gives the cudarc slice back, once nothing of this crate shares it any more (no
    /// pointer, graph or exec holds it): refused, giving `self` back, otherwise. Waits first
    /// for its device and every other device whose work used it, since stream launches of
    /// this crate that used it hold no share.
    ///
    /// ```no_run
    /// let ctx = cudarc::driver::CudaContext::new(0).expect("cudarc context");
    /// let zeros = ctx.default_stream().alloc_zeros::<u32>(8).expect("cudarc allocation");
    /// let shared = cuda_graph::interop::cudarc::CudarcSlice::new(zeros)?;
    /// let back = shared.into_cudarc().expect("nothing else shares it");
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn into_cudarc(self) -> std::result::Result<CudaSlice<T>, CudarcSlice<T>> {
        let CudarcSlice { allocation, slice, addr, len } = self;
        let mut allocation = match Arc::try_unwrap(allocation) {
            Ok(allocation) => allocation,
            Err(allocation) => return Err(CudarcSlice { allocation, slice, addr, len }),
        };
        if !allocation.uses_finished() {
            return Err(CudarcSlice { allocation: Arc::new(allocation), slice, addr, len });
        }
        // Nothing of this crate holds or runs on it: the release (and its share) goes unused.
        allocation.disarm();
        drop(allocation);
        // The release's share went with it, and `self` was the only other owner of `slice`.
        Ok(Arc::try_unwrap(slice).unwrap_or_else(|_| unreachable!("the cudarc slice has one owner left")))
    }
}

/// The memory pool `addr` was allocated from (`CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE`; cudarc
/// allocates stream-ordered where the device supports it), or null for memory of no pool:
/// other devices reach pool memory only where its pool grants them access.
fn memory_pool(addr: u64) -> Result<sys::cudaMemPool_t> {
    use ::cudarc::driver::sys as driver;
    let mut pool: driver::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: `pool` is a writable `CUmemoryPool`, the type this attribute writes; `addr` is
    // a live allocation of cudarc's (the caller's slice); the driver only looks it up.
    let status = unsafe {
        driver::cuPointerGetAttribute(
            (&mut pool as *mut driver::CUmemoryPool).cast(),
            driver::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
            addr,
        )
    };
    status.result().map_err(|err| driver_error(err, "cuPointerGetAttribute(MEMPOOL_HANDLE)"))?;
    Ok(pool.cast())
}
