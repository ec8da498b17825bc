//! CUDA devices: choosing one, reading its properties, and its limits; the thread's current
//! device (`current`) and peer access between devices (`peer`).

mod current;
mod peer;

use std::ffi::CStr;

use crate::runtime as sys;

use crate::error::{check, Result};

pub(crate) use current::{note_in_use, several_in_use};
pub(crate) use peer::check_access;

/// A CUDA device, by ordinal. The runtime's primary context on it is what every stream,
/// buffer and graph of this crate uses.
///
/// # Several devices
/// Streams, events, buffers, pools and graphs belong to the device current when they were
/// made (or the one given to their `_on` constructor: [`Stream::new_on`](crate::Stream::new_on),
/// [`DeviceBuffer::zeroed_on`](crate::DeviceBuffer::zeroed_on), …), and their operations run
/// on that device whatever the calling thread's current device is. Mixing devices is refused
/// with an error naming both: a kernel launched on a stream of one device with a buffer of
/// another (unless [`enable_peer_access`](Device::enable_peer_access) was called for the
/// pair), an exec launched on another device's stream, an event recorded on another device's
/// stream. Copies between devices are their own operations
/// ([`DeviceBuffer::copy_from_peer_async`](crate::DeviceBuffer::copy_from_peer_async), graph
/// memcpy nodes). The thread's current device is remembered by the crate (see
/// [`Device::current`]), so that a launch whose device is current already asks CUDA nothing.
///
/// ```no_run
/// use cuda_graph::Device;
/// let device = Device::get(0)?;
/// device.set_current()?;
/// let props = device.properties()?;
/// println!("{} (sm_{}{}), {} SMs", props.name, props.major, props.minor, props.multiprocessors);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Device {
    ordinal: i32,
}

/// The properties of a device that launch decisions need.
///
/// ```no_run
/// let props = cuda_graph::Device::get(0)?.properties()?;
/// let blocks_to_fill = props.multiprocessors * 4;
/// println!("{}: {blocks_to_fill} blocks fill the GPU", props.name);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceProperties {
    /// Marketing name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Compute capability, major part.
    pub major: i32,
    /// Compute capability, minor part.
    pub minor: i32,
    /// Streaming multiprocessors.
    pub multiprocessors: i32,
    /// Most threads in one block.
    pub max_threads_per_block: i32,
    /// Most blocks in each grid dimension.
    pub max_grid_size: [i32; 3],
    /// Most threads in each block dimension.
    pub max_block_dim: [i32; 3],
    /// Shared memory one block may use without opting in, in bytes.
    pub shared_memory_per_block: usize,
    /// Global memory, in bytes.
    pub total_global_memory: usize,
    /// Threads in a warp.
    pub warp_size: i32,
    /// Whether the device supports stream-ordered memory pools.
    pub memory_pools_supported: bool,
}

/// A device limit that [`Device::limit`] reads and [`Device::set_limit`] changes.
///
/// ```no_run
/// use cuda_graph::{Device, Limit};
/// let device = Device::get(0)?;
/// device.set_limit(Limit::DevRuntimePendingLaunchCount, 4096)?;
/// assert_eq!(device.limit(Limit::DevRuntimePendingLaunchCount)?, 4096);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// Stack size of each GPU thread, in bytes.
    StackSize,
    /// Size of the FIFO that device `printf` writes into, in bytes.
    PrintfFifoSize,
    /// Heap for device `malloc`, in bytes.
    MallocHeapSize,
    /// Dynamic-parallelism launches that may be pending at once (default 2048); launches past
    /// it fail on the device with `cudaErrorLaunchPendingCountExceeded`.
    DevRuntimePendingLaunchCount,
    /// Nesting depth of device-side `cudaDeviceSynchronize` (unused by CDP2).
    DevRuntimeSyncDepth,
}

impl Limit {
    fn raw(self) -> sys::cudaLimit {
        match self {
            Limit::StackSize => sys::cudaLimit::cudaLimitStackSize,
            Limit::PrintfFifoSize => sys::cudaLimit::cudaLimitPrintfFifoSize,
            Limit::MallocHeapSize => sys::cudaLimit::cudaLimitMallocHeapSize,
            Limit::DevRuntimePendingLaunchCount => sys::cudaLimit::cudaLimitDevRuntimePendingLaunchCount,
            Limit::DevRuntimeSyncDepth => sys::cudaLimit::cudaLimitDevRuntimeSyncDepth,
        }
    }
}

/// CUDA's answers that mean this machine has no device to count (not a broken one): no GPU
/// (`cudaErrorNoDevice`), no driver or one too old (`cudaErrorInsufficientDriver`).
fn none_here(err: &crate::CudaError) -> bool {
    matches!(
        err.code(),
        Some(code) if code == sys::cudaError::cudaErrorNoDevice.0 as i32
            || code == sys::cudaError::cudaErrorInsufficientDriver.0 as i32
    )
}

impl Device {
    /// How many devices the runtime sees (`cudaGetDeviceCount`): `Ok(0)` on a machine with no
    /// GPU or no driver, where CUDA answers `cudaErrorNoDevice` (100) or
    /// `cudaErrorInsufficientDriver` (35, no driver or one too old for the runtime). Every
    /// other error stays an error, among them `cudaErrorStubLibrary` (34: the driver's stub
    /// library was loaded instead of the driver, a setup to fix rather than a machine without
    /// GPUs). [`Device::get`] says why there is none:
    ///
    /// ```no_run
    /// use cuda_graph::Device;
    /// if Device::count()? == 0 {
    ///     // e.g. "cudaGetDeviceCount failed: cudaErrorInsufficientDriver (35) …"
    ///     println!("no CUDA device: {}", Device::get(0).unwrap_err());
    /// }
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn count() -> Result<i32> {
        match Device::count_or_why() {
            Err(err) if none_here(&err) => Ok(0),
            answer => answer,
        }
    }

    /// `cudaGetDeviceCount` as CUDA answers: the error itself where there is no device.
    fn count_or_why() -> Result<i32> {
        let mut count = 0;
        // SAFETY: `count` is a valid, writable i32.
        check(unsafe { sys::cudaGetDeviceCount(&mut count) }, "cudaGetDeviceCount")?;
        Ok(count)
    }

    /// The device with this ordinal, checked against [`Device::count`]. Where there is no
    /// device, the error is CUDA's answer that says why (`cudaErrorNoDevice`,
    /// `cudaErrorInsufficientDriver`: [`CudaError::is_no_device`](crate::CudaError::is_no_device)).
    pub fn get(ordinal: i32) -> Result<Device> {
        let count = Device::count_or_why()?;
        if ordinal < 0 || ordinal >= count {
            return Err(crate::CudaError::refused(
                "Device::get",
                crate::Refusal::NoSuchDevice { ordinal, count },
            ));
        }
        Ok(Device { ordinal })
    }

    /// The device current on this thread (device 0 unless changed), as CUDA says
    /// (`cudaGetDevice`). This crate remembers it per thread, so that launches on a device
    /// already current ask CUDA nothing; the memory is updated by [`Device::set_current`],
    /// [`Device::with_current`] and this call. After a raw `cudaSetDevice` (or a library that
    /// leaves another device current), call this once so that the crate sees the change.
    pub fn current() -> Result<Device> {
        current::read().map(|ordinal| Device { ordinal })
    }

    /// The thread's current device as this crate remembers it, asking CUDA only when it does
    /// not know (see [`Device::current`], which always asks): for the checks a launch makes
    /// after making its stream's device current, which must not cost a CUDA call each.
    #[inline]
    pub(crate) fn current_remembered() -> Result<Device> {
        current::cached().map(|ordinal| Device { ordinal })
    }

    /// The ordinal.
    pub fn ordinal(self) -> i32 {
        self.ordinal
    }

    /// Whether this device is the thread's current one, as the crate remembers it (no CUDA
    /// call once known; see [`Device::current`]).
    #[inline]
    pub(crate) fn is_current(self) -> bool {
        current::cached().is_ok_and(|ordinal| ordinal == self.ordinal)
    }

    /// The device of an ordinal CUDA reported (not checked against [`Device::count`]).
    pub(crate) fn from_ordinal(ordinal: i32) -> Device {
        Device { ordinal }
    }

    /// Every device of the host, in ordinal order: none without a GPU or driver (as
    /// [`Device::count`]).
    ///
    /// ```no_run
    /// for device in cuda_graph::Device::all()? {
    ///     println!("{}: {}", device.ordinal(), device.properties()?.name);
    /// }
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn all() -> Result<Vec<Device>> {
        Ok((0..Device::count()?).map(|ordinal| Device { ordinal }).collect())
    }

    /// Makes this device current on the calling thread (`cudaSetDevice`).
    pub fn set_current(self) -> Result<()> {
        // SAFETY: plain call; the ordinal was checked by `get` (CUDA checks it again).
        let set = check(unsafe { sys::cudaSetDevice(self.ordinal) }, "cudaSetDevice");
        match set {
            Ok(()) => {
                current::remember(self.ordinal);
                sys::record_primary_after_set(self.ordinal);
            }
            Err(_) => current::forget(),
        }
        set
    }

    /// Runs `f` with this device's primary context current on the calling thread, then makes
    /// the device that was current before current again (also when `f` panics). An error
    /// making either device current is returned (the one restoring the caller's device
    /// before `f`'s own error, which is then dropped).
    ///
    /// Whether the device is current is asked of CUDA, not of the crate's memory of it: other
    /// code on this thread (cudarc, raw calls) may have made another context current since,
    /// even a context of this device that is not its primary one, and what `f` waits for or
    /// makes must be the primary context's. When the driver's current context is this
    /// device's primary context (one `cuCtxGetCurrent`), `f` runs at once; otherwise the one
    /// before is read (`cudaGetDevice`), the device made current (`cudaSetDevice`), and
    /// afterwards the primary context of the device before is current.
    ///
    /// ```no_run
    /// use cuda_graph::Device;
    /// let device = Device::get(0)?;
    /// device.with_current(|| device.synchronize())?; // waits for device 0, then restores
    /// assert_eq!(Device::current()?, Device::get(0)?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    #[inline]
    pub fn with_current<R, E: From<crate::CudaError>>(
        self, f: impl FnOnce() -> Result<R, E>,
    ) -> Result<R, E> {
        if sys::primary_is_current(self.ordinal) {
            // The driver says this device's primary context is current: what `cudaGetDevice`
            // and `cudaSetDevice` would find and leave (see `runtime::primary`).
            current::remember(self.ordinal);
            return f();
        }
        let before = Device { ordinal: current::read()? };
        self.set_current()?;
        if before == self {
            return f();
        }
        let restore = RestoreOnUnwind(before);
        let result = f();
        std::mem::forget(restore);
        before.set_current()?;
        result
    }

    /// Waits for all work on the device (`cudaDeviceSynchronize`, with this device current
    /// for the call; the thread's current device is restored).
    pub fn synchronize(self) -> Result<()> {
        self.with_current(|| {
            // SAFETY: plain call.
            check(unsafe { sys::cudaDeviceSynchronize() }, "cudaDeviceSynchronize")
        })
    }

    /// Reads the device's properties (`cudaGetDeviceProperties`).
    pub fn properties(self) -> Result<DeviceProperties> {
        let mut raw = sys::cudaDeviceProp::default();
        // SAFETY: `raw` is a writable cudaDeviceProp; the ordinal is checked by CUDA.
        check(unsafe { sys::cudaGetDeviceProperties(&mut raw, self.ordinal) }, "cudaGetDeviceProperties")?;
        // SAFETY: the runtime NUL-terminates `name` within its 256 bytes.
        let name = unsafe { CStr::from_ptr(raw.name.as_ptr()) }.to_string_lossy().into_owned();
        let pools = self.attribute_raw(sys::cudaDeviceAttr::cudaDevAttrMemoryPoolsSupported)?;
        Ok(DeviceProperties {
            name,
            major: raw.major,
            minor: raw.minor,
            multiprocessors: raw.multiProcessorCount,
            max_threads_per_block: raw.maxThreadsPerBlock,
            max_grid_size: raw.maxGridSize,
            max_block_dim: raw.maxThreadsDim,
            shared_memory_per_block: raw.sharedMemPerBlock,
            total_global_memory: raw.totalGlobalMem,
            warp_size: raw.warpSize,
            memory_pools_supported: pools != 0,
        })
    }

    /// One device attribute by its raw CUDA name (`cudaDeviceGetAttribute`): the escape hatch
    /// for attributes [`DeviceProperties`] does not carry.
    ///
    /// ```no_run
    /// use cuda_graph::{sys, Device};
    /// let warp = Device::get(0)?.attribute_raw(sys::cudaDeviceAttr::cudaDevAttrWarpSize)?;
    /// assert_eq!(warp, 32);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn attribute_raw(self, attribute: sys::cudaDeviceAttr) -> Result<i32> {
        let mut value = 0;
        check(
            // SAFETY: `value` is a valid, writable i32; CUDA checks attribute and ordinal.
            unsafe { sys::cudaDeviceGetAttribute(&mut value, attribute, self.ordinal) },
            "cudaDeviceGetAttribute",
        )?;
        Ok(value)
    }

    /// Whether this device's primary context, the one the runtime and this crate use, is
    /// active: work of this process runs on the device only then. Asks the driver
    /// (`cuDeviceGet`, `cuDevicePrimaryCtxGetState`), which makes no context, so unlike
    /// [`set_current`](Self::set_current) this leaves an unused device untouched.
    ///
    /// ```no_run
    /// use cuda_graph::{Device, Stream};
    /// let device = Device::get(0)?;
    /// device.set_current()?;
    /// let _stream = Stream::new()?; // the runtime's context exists from the first call on
    /// assert!(device.has_active_context()?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn has_active_context(self) -> Result<bool> {
        use crate::driver::function;
        const GET: &str = "cudaGetDriverEntryPointByVersion(cuDeviceGet)";
        const STATE: &str = "cudaGetDriverEntryPointByVersion(cuDevicePrimaryCtxGetState)";
        // SAFETY: PFN_cuDeviceGet transcribes cuDeviceGet's C signature at 2.0.
        let get: sys::PFN_cuDeviceGet =
            unsafe { function(sys::CU_DEVICE_GET, sys::CU_DEVICE_GET_VERSION, GET) }?;
        // SAFETY: PFN_cuDevicePrimaryCtxGetState transcribes cuDevicePrimaryCtxGetState's C
        // signature at 7.0.
        let state: sys::PFN_cuDevicePrimaryCtxGetState = unsafe {
            function(
                sys::CU_DEVICE_PRIMARY_CTX_GET_STATE,
                sys::CU_DEVICE_PRIMARY_CTX_GET_STATE_VERSION,
                STATE,
            )
        }?;
        let mut handle: sys::CUdevice = 0;
        // SAFETY: `handle` is a valid, writable CUdevice; the driver checks the ordinal (the
        // runtime's ordinals are the driver's: both count the devices visible to the process).
        crate::driver::check_driver(unsafe { get(&mut handle, self.ordinal) }, "cuDeviceGet")?;
        let (mut flags, mut active) = (0, 0);
        crate::driver::check_driver(
            // SAFETY: `handle` came from cuDeviceGet; both out-pointers are valid and writable.
            unsafe { state(handle, &mut flags, &mut active) },
            "cuDevicePrimaryCtxGetState",
        )?;
        Ok(active != 0)
    }

    /// Reads a limit of this device (current for the call; the thread's device is restored).
    pub fn limit(self, limit: Limit) -> Result<usize> {
        self.with_current(|| {
            let mut value = 0usize;
            // SAFETY: `value` is a valid, writable size_t.
            check(unsafe { sys::cudaDeviceGetLimit(&mut value, limit.raw()) }, "cudaDeviceGetLimit")?;
            Ok(value)
        })
    }

    /// Changes a limit of this device (current for the call; the thread's device is restored).
    pub fn set_limit(self, limit: Limit, value: usize) -> Result<()> {
        self.with_current(|| {
            // SAFETY: plain call; CUDA validates the value.
            check(unsafe { sys::cudaDeviceSetLimit(limit.raw(), value) }, "cudaDeviceSetLimit")
        })
    }
}

/// A device made current for a scope, like [`Device::with_current`] where a closure does not
/// fit: the device current before is made current again on drop (an error doing so is
/// recorded for [`take_unreported_errors`](crate::take_unreported_errors)).
pub(crate) struct CurrentFor(Option<Device>);

impl CurrentFor {
    /// Makes `device` current until the guard drops (nothing to do when the crate remembers
    /// it current already: for launches on a stream, whose handle names its context, so a
    /// stale memory can only make CUDA refuse the launch).
    pub(crate) fn new(device: Device) -> Result<CurrentFor> {
        let before = Device { ordinal: current::cached()? };
        if before == device {
            return Ok(CurrentFor(None));
        }
        device.set_current()?;
        Ok(CurrentFor(Some(before)))
    }

    /// Makes `device`'s primary context current until the guard drops, asking CUDA what was
    /// current before and setting it whatever the crate remembers: for work whose meaning
    /// depends on the current context (a default-stream handle).
    pub(crate) fn always(device: Device) -> Result<CurrentFor> {
        let before = Device { ordinal: current::read()? };
        device.set_current()?;
        Ok(CurrentFor((before != device).then_some(before)))
    }
}

impl Drop for CurrentFor {
    fn drop(&mut self) {
        if let Some(before) = self.0 {
            if let Err(crate::CudaError::Api { code, .. }) = before.set_current() {
                crate::release::record_drop_error(sys::cudaError(code as u32), "cudaSetDevice");
            }
        }
    }
}

/// The devices whose primary context is active ([`Device::has_active_context`]): those any
/// work of this process (through the runtime) may still be running on.
pub(crate) fn devices_with_context() -> Result<Vec<Device>> {
    let mut active = Vec::new();
    for ordinal in 0..Device::count()? {
        let device = Device { ordinal };
        if device.has_active_context()? {
            active.push(device);
        }
    }
    Ok(active)
}

/// Makes the device it holds current again when dropped: only while unwinding out of
/// [`Device::with_current`], which has nowhere to return an error to (it is ignored).
struct RestoreOnUnwind(Device);

impl Drop for RestoreOnUnwind {
    fn drop(&mut self) {
        let _ = self.0.set_current();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CudaError;

    #[test]
    fn no_gpu_and_no_driver_count_as_none_other_errors_do_not() {
        let none = [sys::cudaError::cudaErrorNoDevice, sys::cudaError::cudaErrorInsufficientDriver];
        for status in none {
            assert!(none_here(&CudaError::from_code(status.0 as i32, "cudaGetDeviceCount")), "{status:?}");
        }
        for status in [
            sys::cudaError::cudaErrorStubLibrary,
            sys::cudaError::cudaErrorUnknown,
            sys::cudaError::cudaErrorInitializationError,
        ] {
            assert!(!none_here(&CudaError::from_code(status.0 as i32, "cudaGetDeviceCount")), "{status:?}");
        }
        assert!(!none_here(&CudaError::refused(
            "Device::get",
            crate::Refusal::NoSuchDevice { ordinal: 1, count: 1 }
        )));
    }
}
