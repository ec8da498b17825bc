//! Memory pools and stream-ordered allocation (`cudaMallocAsync`, `cudaMallocFromPoolAsync`).
//!
//! # Freeing
//! A stream-ordered buffer is shared like any other (see the crate docs, "Ownership") and is
//! freed when its last owner drops, which may be long after the allocating [`Stream`] is
//! gone, so the free cannot be queued on that stream: its handle may be destroyed. Instead:
//! - allocated on a **blocking** stream (the default, [`Stream::new`]) and used only on
//!   blocking streams and by graph execs: the free is `cudaFreeAsync` on the legacy default
//!   stream (`cudaStreamLegacy`), which CUDA runs after all work already queued on every
//!   blocking stream of the device, the allocating one included. The host does not wait. (A
//!   legacy-stream operation is a barrier between blocking streams, and it is not allowed
//!   while another thread captures a stream in global mode: the free then fails, is
//!   recorded for [`crate::take_unreported_errors`], and the memory leaks.)
//! - allocated on a blocking stream and used by a kernel launch, copy or memset on a
//!   **non-blocking** stream: that work is not ordered before the legacy stream, so each
//!   such call marks the buffer, and the drop of a marked buffer waits for the device
//!   (`cudaDeviceSynchronize`) and then calls `cudaFreeAsync` on the legacy default stream.
//!   Otherwise the pool could hand the memory to the next allocation while that work still
//!   writes it (`tests/in_flight_drops.rs` shows it). Marking costs nothing for buffers
//!   used on blocking streams, and nothing at all for launches while no such buffer exists.
//! - allocated on a **non-blocking** stream: no stream is ordered after that one, so the drop
//!   waits for the device (`cudaDeviceSynchronize`) and then calls `cudaFreeAsync` on the
//!   legacy default stream (the device is idle by then).
//!
//! Either way the free comes after all work queued so far that uses the buffer. A graph
//! exec that keeps such a buffer is ordered too, wherever it was launched: it records an
//! event after each launch and waits for (or, for what an update or setter replaced, checks)
//! its last launch before releasing the buffer (execs without such buffers record nothing;
//! see [`GraphExec`](crate::GraphExec)). If waiting fails (a lost context), the memory is
//! leaked rather than freed under work that may still use it.
//!
//! The allocation itself is ordered on its stream only, and CUDA requires work on another
//! stream to be ordered after it (an [`Event`](crate::Event), a synchronize) before it uses
//! the buffer. Safe code may skip that, so the pools this crate allocates from never hand out
//! memory whose previous owner's work may still be pending: they reuse only frees that have
//! completed on the device (`cudaMemPoolReuseAllowOpportunistic` on,
//! `cudaMemPoolReuseFollowEventDependencies` and `cudaMemPoolReuseAllowInternalDependencies`
//! off), and [`DeviceBuffer::alloc_async`] allocates from a pool of this crate's per device,
//! not from CUDA's default pool, which other libraries share and may configure otherwise.
//! Work that skips the ordering then sees whatever bytes the pool held (any bit pattern is a
//! valid [`DeviceRepr`]), never another owner's live data. A buffer allocated from a pool
//! keeps the pool alive until it is freed.

use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;

use crate::runtime as sys;

use crate::device::Device;
use crate::error::{check, Result};
use crate::memory::{Allocation, DeviceBuffer, DeviceRepr, FreeKind, KeepAlive};
use crate::release::{deferred_in_host_fn, record_drop_error};
use crate::stream::Stream;

/// How to create a [`MemoryPool`].
///
/// ```
/// let options = cuda_graph::MemoryPoolOptions { release_threshold: 256 << 20, ..Default::default() };
/// assert_eq!(options.max_size, 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryPoolOptions {
    /// Bytes of freed memory the pool may keep reserved when a stream synchronizes, instead
    /// of returning them to the system (`cudaMemPoolAttrReleaseThreshold`); `u64::MAX` keeps
    /// everything until [`MemoryPool::trim_to`].
    pub release_threshold: u64,
    /// Most bytes the pool may reserve (`cudaMemPoolProps::maxSize`); 0 is CUDA's default,
    /// limited only by the device.
    pub max_size: usize,
}

/// The pool handle and whether this crate created it (and so destroys it).
struct PoolHandle {
    raw: sys::cudaMemPool_t,
    device: i32,
    owned: bool,
}

// SAFETY: pool handles may be used from any host thread; the runtime serializes access.
unsafe impl Send for PoolHandle {}
// SAFETY: every operation through `&PoolHandle` is a thread-safe runtime call.
unsafe impl Sync for PoolHandle {}

/// `cudaMemPoolGetAttribute` and `cudaMemPoolSetAttribute`.
type AttributeCall =
    unsafe extern "C" fn(sys::cudaMemPool_t, sys::cudaMemPoolAttr, *mut c_void) -> sys::cudaError_t;

/// The reuse rules of every pool of this crate (C ints): memory is reused only once its free
/// has completed on the device (see the module docs, "Freeing").
const REUSE_RULES: [(sys::cudaMemPoolAttr, i32); 3] = [
    (sys::cudaMemPoolAttr::cudaMemPoolReuseFollowEventDependencies, 0),
    (sys::cudaMemPoolAttr::cudaMemPoolReuseAllowInternalDependencies, 0),
    (sys::cudaMemPoolAttr::cudaMemPoolReuseAllowOpportunistic, 1),
];

impl Drop for PoolHandle {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        // CUDA calls are not allowed inside a host function: destroy it elsewhere.
        if deferred_in_host_fn(|| PoolHandle { raw: self.raw, device: self.device, owned: true }) {
            self.owned = false;
            return;
        }
        // SAFETY: the pool was created by this crate and is destroyed once. Every allocation
        // from it holds this handle, so none is outstanding.
        record_drop_error(unsafe { sys::cudaMemPoolDestroy(self.raw) }, "cudaMemPoolDestroy");
    }
}

/// A stream-ordered memory pool (`cudaMemPool_t`) of one device: the device's default pool,
/// or one of its own. Cloning shares the pool; a pool this crate created is destroyed when the
/// last clone and the last buffer allocated from it are gone.
///
/// ```no_run
/// use cuda_graph::{DeviceBuffer, MemoryPool, MemoryPoolOptions, Stream};
/// let stream = Stream::new()?;
/// let pool = MemoryPool::new(MemoryPoolOptions { release_threshold: u64::MAX, ..Default::default() })?;
/// let scratch = DeviceBuffer::<f32>::alloc_from_pool_async(1 << 20, &pool, &stream)?;
/// stream.synchronize()?;
/// assert!(pool.used_bytes()? >= 4 << 20);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Clone)]
pub struct MemoryPool {
    handle: Arc<PoolHandle>,
}

impl std::fmt::Debug for MemoryPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryPool")
            .field("raw", &self.handle.raw)
            .field("device", &self.handle.device)
            .field("owned", &self.handle.owned)
            .finish()
    }
}

impl MemoryPool {
    /// The pool [`DeviceBuffer::alloc_async`] allocates from on `device`: one this crate
    /// creates per device the first time it is asked for, with CUDA's default options and the
    /// reuse rules of [`MemoryPool::new`] (see the module docs, "Freeing"). It is not CUDA's
    /// default pool (`cudaDeviceGetDefaultMemPool`): that one is shared with every other
    /// library in the process, and its reuse rules hand out memory whose earlier owner's work
    /// may still be pending. It lives until the process ends.
    ///
    /// ```no_run
    /// use cuda_graph::{Device, MemoryPool};
    /// let pool = MemoryPool::device_default(Device::get(0)?)?;
    /// println!("{} bytes reserved", pool.reserved_bytes()?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn device_default(device: Device) -> Result<MemoryPool> {
        static POOLS: std::sync::Mutex<Vec<MemoryPool>> = std::sync::Mutex::new(Vec::new());
        let mut pools = POOLS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(pool) = pools.iter().find(|pool| pool.handle.device == device.ordinal()) {
            return Ok(pool.clone());
        }
        let pool = MemoryPool::create_on(device.ordinal(), MemoryPoolOptions::default())?;
        pools.push(pool.clone());
        Ok(pool)
    }

    /// A new pool of device memory on the current device (`cudaMemPoolCreate`), with
    /// `options.release_threshold` set. Like every pool of this crate, it reuses only memory
    /// whose free has completed on the device (see the module docs, "Freeing"), so a buffer
    /// used on a stream not ordered after its allocation never overlaps an earlier owner's work.
    ///
    /// ```no_run
    /// use cuda_graph::{MemoryPool, MemoryPoolOptions};
    /// let pool = MemoryPool::new(MemoryPoolOptions { release_threshold: 64 << 20, max_size: 1 << 30 })?;
    /// assert_eq!(pool.release_threshold()?, 64 << 20);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn new(options: MemoryPoolOptions) -> Result<MemoryPool> {
        MemoryPool::create_on(Device::current()?.ordinal(), options)
    }

    fn create_on(device: i32, options: MemoryPoolOptions) -> Result<MemoryPool> {
        // SAFETY: cudaMemPoolProps is a plain C struct for which all zeroes is valid: null
        // pointer, zero sizes and flags, and the reserved bytes must be zero.
        let mut props: sys::cudaMemPoolProps = unsafe { std::mem::zeroed() };
        props.allocType = sys::cudaMemAllocationType::cudaMemAllocationTypePinned;
        props.handleTypes = sys::cudaMemAllocationHandleType::cudaMemHandleTypeNone;
        props.location =
            sys::cudaMemLocation { type_: sys::cudaMemLocationType::cudaMemLocationTypeDevice, id: device };
        props.maxSize = options.max_size;
        let mut raw = ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer and `props` a valid, initialized struct.
        check(unsafe { sys::cudaMemPoolCreate(&mut raw, &props) }, "cudaMemPoolCreate")?;
        let pool = MemoryPool { handle: Arc::new(PoolHandle { raw, device, owned: true }) };
        pool.set_release_threshold(options.release_threshold)?;
        pool.reuse_only_completed_frees()?;
        Ok(pool)
    }

    /// Turns off the reuse of memory whose free is still pending behind other work (see the
    /// module docs, "Freeing").
    fn reuse_only_completed_frees(&self) -> Result<()> {
        for (attribute, value) in REUSE_RULES {
            // SAFETY: the reuse rules are C ints.
            unsafe { self.attribute(attribute, Some(value)) }?;
        }
        Ok(())
    }

    /// Whether the pool reuses only memory whose free has completed on the device (true for
    /// every pool of this crate).
    ///
    /// ```no_run
    /// let pool = cuda_graph::MemoryPool::device_default(cuda_graph::Device::get(0)?)?;
    /// assert!(pool.reuses_only_completed_frees()?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn reuses_only_completed_frees(&self) -> Result<bool> {
        let mut all_set = true;
        for (attribute, value) in REUSE_RULES {
            // SAFETY: the reuse rules are C ints.
            all_set &= unsafe { self.attribute::<i32>(attribute, None) }? == value;
        }
        Ok(all_set)
    }

    /// Sets how many bytes of freed memory the pool keeps reserved across stream
    /// synchronizations (`cudaMemPoolAttrReleaseThreshold`).
    ///
    /// ```no_run
    /// let pool = cuda_graph::MemoryPool::device_default(cuda_graph::Device::get(0)?)?;
    /// pool.set_release_threshold(u64::MAX)?; // keep everything: no re-reservation cost
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn set_release_threshold(&self, bytes: u64) -> Result<()> {
        // SAFETY: the release threshold is a cuuint64_t.
        unsafe { self.attribute(sys::cudaMemPoolAttr::cudaMemPoolAttrReleaseThreshold, Some(bytes)) }?;
        Ok(())
    }

    /// The release threshold (`cudaMemPoolAttrReleaseThreshold`).
    ///
    /// ```no_run
    /// let pool = cuda_graph::MemoryPool::device_default(cuda_graph::Device::get(0)?)?;
    /// println!("keeps up to {} bytes", pool.release_threshold()?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn release_threshold(&self) -> Result<u64> {
        self.attribute_u64(sys::cudaMemPoolAttr::cudaMemPoolAttrReleaseThreshold)
    }

    /// Bytes of the pool currently allocated to buffers (`cudaMemPoolAttrUsedMemCurrent`).
    ///
    /// ```no_run
    /// let pool = cuda_graph::MemoryPool::device_default(cuda_graph::Device::get(0)?)?;
    /// assert!(pool.used_bytes()? <= pool.reserved_bytes()?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn used_bytes(&self) -> Result<u64> {
        self.attribute_u64(sys::cudaMemPoolAttr::cudaMemPoolAttrUsedMemCurrent)
    }

    /// Bytes of device memory the pool currently reserves, used or not
    /// (`cudaMemPoolAttrReservedMemCurrent`).
    ///
    /// ```no_run
    /// let pool = cuda_graph::MemoryPool::device_default(cuda_graph::Device::get(0)?)?;
    /// println!("{} bytes reserved", pool.reserved_bytes()?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn reserved_bytes(&self) -> Result<u64> {
        self.attribute_u64(sys::cudaMemPoolAttr::cudaMemPoolAttrReservedMemCurrent)
    }

    /// Returns unused reserved memory to the system until at most `min_bytes_to_keep` remain
    /// reserved (`cudaMemPoolTrimTo`); memory in use is never released.
    ///
    /// ```no_run
    /// let pool = cuda_graph::MemoryPool::device_default(cuda_graph::Device::get(0)?)?;
    /// pool.trim_to(0)?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn trim_to(&self, min_bytes_to_keep: usize) -> Result<()> {
        // SAFETY: the pool is alive.
        check(unsafe { sys::cudaMemPoolTrimTo(self.handle.raw, min_bytes_to_keep) }, "cudaMemPoolTrimTo")
    }

    /// Lets kernels and copies on `device` read and write this pool's memory
    /// (`cudaMemPoolSetAccess`, read-write). Peer access
    /// ([`Device::enable_peer_access`]) does not reach pool memory: launches on another device
    /// than the pool's refuse its buffers (naming both devices) until this is called. Refused
    /// by CUDA where the devices have no peer path.
    ///
    /// ```no_run
    /// use cuda_graph::{Device, MemoryPool};
    /// let pool = MemoryPool::device_default(Device::get(1)?)?;
    /// pool.enable_access_from(Device::get(0)?)?;
    /// assert!(pool.is_accessible_from(Device::get(0)?)?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn enable_access_from(&self, device: Device) -> Result<()> {
        if device.ordinal() == self.handle.device {
            return Ok(());
        }
        let desc = sys::cudaMemAccessDesc {
            location: device_location(device),
            flags: sys::cudaMemAccessFlags::cudaMemAccessFlagsProtReadWrite,
        };
        // SAFETY: the pool is alive; `desc` is one valid, initialized access descriptor.
        check(unsafe { sys::cudaMemPoolSetAccess(self.handle.raw, &desc, 1) }, "cudaMemPoolSetAccess")
    }

    /// Whether kernels and copies on `device` may read and write this pool's memory (its own
    /// device always may).
    ///
    /// ```no_run
    /// let pool = cuda_graph::MemoryPool::device_default(cuda_graph::Device::get(0)?)?;
    /// assert!(pool.is_accessible_from(cuda_graph::Device::get(0)?)?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn is_accessible_from(&self, device: Device) -> Result<bool> {
        pool_accessible_from(self.handle.raw, device)
    }

    /// The device whose memory the pool holds.
    ///
    /// ```no_run
    /// use cuda_graph::{Device, MemoryPool};
    /// assert_eq!(MemoryPool::device_default(Device::get(1)?)?.device(), Device::get(1)?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn device(&self) -> Device {
        Device::from_ordinal(self.handle.device)
    }

    /// The device ordinal whose memory the pool holds.
    ///
    /// ```no_run
    /// let pool = cuda_graph::MemoryPool::device_default(cuda_graph::Device::get(0)?)?;
    /// assert_eq!(pool.device_ordinal(), 0);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn device_ordinal(&self) -> i32 {
        self.handle.device
    }

    /// The raw handle, for calls this crate does not wrap. The pool still owns it.
    ///
    /// ```no_run
    /// let pool = cuda_graph::MemoryPool::device_default(cuda_graph::Device::get(0)?)?;
    /// assert!(!pool.as_raw().is_null());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn as_raw(&self) -> sys::cudaMemPool_t {
        self.handle.raw
    }

    /// Reads `attribute` of a `cuuint64_t` value: the release threshold, used or reserved memory.
    fn attribute_u64(&self, attribute: sys::cudaMemPoolAttr) -> Result<u64> {
        // SAFETY: every caller passes one of those attributes, whose C type (cuuint64_t) is u64.
        unsafe { self.attribute(attribute, None) }
    }

    /// Reads `attribute` (`cudaMemPoolGetAttribute`), or with `set` writes it
    /// (`cudaMemPoolSetAttribute`) and returns the value written.
    ///
    /// # Safety
    /// `V` is the attribute's C type: `int` (`i32`) for the reuse rules, `cuuint64_t` (`u64`)
    /// for the release threshold and the memory counters.
    unsafe fn attribute<V: Copy + Default>(
        &self, attribute: sys::cudaMemPoolAttr, set: Option<V>,
    ) -> Result<V> {
        let (call, name): (AttributeCall, _) = match set {
            Some(_) => (sys::cudaMemPoolSetAttribute, "cudaMemPoolSetAttribute"),
            None => (sys::cudaMemPoolGetAttribute, "cudaMemPoolGetAttribute"),
        };
        let mut value = set.unwrap_or_default();
        // SAFETY: the pool is alive (`self` holds it); CUDA reads or writes one value of the
        // attribute's C type, which the caller promises `V` is, through the pointer to `value`.
        check(unsafe { call(self.handle.raw, attribute, ptr::from_mut(&mut value).cast::<c_void>()) }, name)?;
        Ok(value)
    }
}

fn device_location(device: Device) -> sys::cudaMemLocation {
    sys::cudaMemLocation { type_: sys::cudaMemLocationType::cudaMemLocationTypeDevice, id: device.ordinal() }
}

/// Whether `device` may read and write the memory of `pool`, a live pool (`cudaMemPoolGetAccess`).
pub(crate) fn pool_accessible_from(pool: sys::cudaMemPool_t, device: Device) -> Result<bool> {
    let mut flags = sys::cudaMemAccessFlags::cudaMemAccessFlagsProtNone;
    let mut location = device_location(device);
    check(
        // SAFETY: the caller's pool is alive; `flags` and `location` are valid, initialized locals.
        unsafe { sys::cudaMemPoolGetAccess(&mut flags, pool, &mut location) },
        "cudaMemPoolGetAccess",
    )?;
    Ok(flags == sys::cudaMemAccessFlags::cudaMemAccessFlagsProtReadWrite)
}

/// The device of `stream` and whether it is a blocking stream (ordered with the legacy one).
fn stream_device_and_blocking(stream: &Stream) -> Result<(i32, bool)> {
    let (mut device, mut flags) = (0, 0u32);
    // SAFETY: the stream is alive; `device` is a valid, writable int.
    check(unsafe { sys::cudaStreamGetDevice(stream.as_raw(), &mut device) }, "cudaStreamGetDevice")?;
    // SAFETY: the stream is alive; `flags` is a valid, writable unsigned int.
    check(unsafe { sys::cudaStreamGetFlags(stream.as_raw(), &mut flags) }, "cudaStreamGetFlags")?;
    Ok((device, flags & sys::cudaStreamNonBlocking == 0))
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// `len` uninitialized elements from the default pool of `stream`'s device, allocated in
    /// `stream`'s order (`cudaMallocAsync`): the memory may be used by work queued on
    /// `stream` from now on (on other streams once ordered after this point).
    ///
    /// The contents are whatever the pool held (any bit pattern is a valid `T`). The free is
    /// stream-ordered too; see the module docs ("Freeing") for how it stays ordered after the
    /// work on `stream` although the stream may be gone by then. Refused while `stream` is
    /// being captured (use a graph memory-allocation node).
    ///
    /// ```no_run
    /// use cuda_graph::{DeviceBuffer, Stream};
    /// let stream = Stream::new()?;
    /// let mut scratch = DeviceBuffer::<u32>::alloc_async(1024, &stream)?;
    /// scratch.memset_async(0, &stream)?;
    /// stream.synchronize()?;
    /// assert_eq!(scratch.to_vec()?, vec![0; 1024]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn alloc_async(len: usize, stream: &Stream) -> Result<DeviceBuffer<T>> {
        Self::stream_ordered(len, None, stream, "DeviceBuffer::alloc_async")
    }

    /// Like [`alloc_async`](Self::alloc_async), from `pool` (`cudaMallocFromPoolAsync`). The
    /// buffer keeps the pool alive until its memory is back in it.
    ///
    /// ```no_run
    /// use cuda_graph::{DeviceBuffer, MemoryPool, MemoryPoolOptions, Stream};
    /// let stream = Stream::new()?;
    /// let pool = MemoryPool::new(MemoryPoolOptions::default())?;
    /// let scratch = DeviceBuffer::<u8>::alloc_from_pool_async(4096, &pool, &stream)?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn alloc_from_pool_async(len: usize, pool: &MemoryPool, stream: &Stream) -> Result<DeviceBuffer<T>> {
        Self::stream_ordered(len, Some(pool), stream, "DeviceBuffer::alloc_from_pool_async")
    }

    fn stream_ordered(
        len: usize, pool: Option<&MemoryPool>, stream: &Stream, call: &'static str,
    ) -> Result<DeviceBuffer<T>> {
        let bytes = crate::memory::bytes_for::<T>(len, call)?;
        let free = |device, blocking_stream, raw_pool| FreeKind::StreamOrdered {
            device,
            blocking_stream,
            // The crate's default pools live as long as the process; others are kept here.
            pool: raw_pool,
            _pool: pool.map(|pool| pool.handle.clone() as KeepAlive),
        };
        if bytes == 0 {
            let free = free(stream.device().ordinal(), true, ptr::null_mut());
            return Ok(DeviceBuffer::from_allocation(
                Allocation::from_stream_ordered(ptr::null_mut(), 0, free),
                len,
            ));
        }
        let _gate = crate::capture_gate::refuse_during_capture(stream, call)?;
        let (device, blocking_stream) = stream_device_and_blocking(stream)?;
        let own_pool;
        let pool = match pool {
            Some(pool) if pool.handle.device != device => {
                return Err(crate::CudaError::refused(
                    call,
                    crate::Refusal::DevicesDiffer {
                        pair: crate::refusal::DevicePair::PoolAndStream,
                        first: pool.handle.device,
                        second: device,
                    },
                ))
            }
            Some(pool) => pool,
            None => {
                own_pool = MemoryPool::device_default(Device::get(device)?)?;
                &own_pool
            }
        };
        let mut raw = ptr::null_mut();
        check(
            // SAFETY: `raw` is a valid out-pointer; the pool and the stream are alive.
            unsafe { sys::cudaMallocFromPoolAsync(&mut raw, bytes, pool.handle.raw, stream.as_raw()) },
            "cudaMallocFromPoolAsync",
        )?;
        let allocation =
            Allocation::from_stream_ordered(raw, bytes, free(device, blocking_stream, pool.handle.raw));
        Ok(DeviceBuffer::from_allocation(allocation, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_can_be_shared_between_threads() {
        fn shareable<T: Send + Sync + Clone>() {}
        shareable::<MemoryPool>();
    }

    #[test]
    fn default_options_are_cuda_defaults() {
        assert_eq!(MemoryPoolOptions::default(), MemoryPoolOptions { release_threshold: 0, max_size: 0 });
    }
}
