//! Which device memory lives on: buffers made on a named device, the device of a buffer or
//! pointer, copies between the memory of two devices, and the check that work on one device
//! only uses memory it can reach.

use crate::runtime as sys;

use super::async_ops::{expect_same_len, retain_if_capturing};
use super::{Allocation, DeviceBuffer, DevicePtr, DeviceRepr, KeepAlive};
use crate::device::{check_access, Device};
use crate::error::{check, CudaError, Result};
use crate::stream::Stream;

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// The device whose memory holds the buffer: the one current when it was allocated (or
    /// named to [`zeroed_on`](Self::zeroed_on)), or the device of the stream or pool of a
    /// stream-ordered allocation.
    ///
    /// Kernels, memsets and graph nodes on another device refuse the buffer (naming both
    /// devices) unless that device was given peer access to this one
    /// ([`Device::enable_peer_access`]); copies between devices
    /// ([`copy_from_peer_async`](Self::copy_from_peer_async), graph memcpy nodes) need none.
    ///
    /// ```no_run
    /// use cuda_graph::{Device, DeviceBuffer};
    /// let second = Device::get(1)?;
    /// let data = DeviceBuffer::<f32>::zeroed_on(second, 1024)?;
    /// assert_eq!(data.device(), second);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn device(&self) -> Device {
        self.allocation.device()
    }

    /// `len` zeroed elements on `device` (see [`zeroed`](Self::zeroed)), whatever the
    /// thread's current device is (it stays current).
    ///
    /// ```no_run
    /// use cuda_graph::{Device, DeviceBuffer};
    /// let partial_sums = DeviceBuffer::<f64>::zeroed_on(Device::get(1)?, 256)?;
    /// assert_eq!(partial_sums.to_vec()?, vec![0.0; 256]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn zeroed_on(device: Device, len: usize) -> Result<DeviceBuffer<T>> {
        device.with_current(|| DeviceBuffer::zeroed(len))
    }

    /// A copy of `data` on `device` (see [`from_slice`](Self::from_slice)), whatever the
    /// thread's current device is (it stays current).
    ///
    /// ```no_run
    /// use cuda_graph::{Device, DeviceBuffer};
    /// let data = DeviceBuffer::from_slice_on(Device::get(1)?, &[1u32, 2, 3])?;
    /// assert_eq!(data.to_vec()?, [1, 2, 3]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn from_slice_on(device: Device, data: &[T]) -> Result<DeviceBuffer<T>> {
        device.with_current(|| DeviceBuffer::from_slice(data))
    }

    /// Queues a copy of `src`, which may live on another device, into this buffer on `stream`
    /// (`cudaMemcpyPeerAsync`) and returns at once. Lengths must match; `stream` must belong
    /// to one of the two devices (refused otherwise, naming the three). No peer access is
    /// needed (CUDA copies through the host where the devices have no peer path).
    ///
    /// Both buffers stay alive until the copy is done: each notes the use, and a buffer used
    /// by a stream of another device waits for that device before it is freed. May be
    /// captured, like [`copy_from_device_async`](Self::copy_from_device_async): the graph
    /// then holds a memcpy node between the two devices.
    ///
    /// ```no_run
    /// use cuda_graph::{Device, DeviceBuffer, Stream};
    /// let (first, second) = (Device::get(0)?, Device::get(1)?);
    /// let source = DeviceBuffer::from_slice_on(first, &[1.5f32; 64])?;
    /// let mut target = DeviceBuffer::<f32>::zeroed_on(second, 64)?;
    /// let stream = Stream::new_on(second)?;
    /// target.copy_from_peer_async(&source, &stream)?;
    /// stream.synchronize()?;
    /// assert_eq!(target.to_vec()?, vec![1.5; 64]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_from_peer_async(&mut self, src: &DeviceBuffer<T>, stream: &Stream) -> Result<()> {
        const CALL: &str = "DeviceBuffer::copy_from_peer_async";
        expect_same_len(self.len(), src.len(), CALL)?;
        let (to, from, on) = (self.device(), src.device(), stream.device());
        if on != to && on != from {
            return Err(CudaError::refused(
                CALL,
                crate::Refusal::CopyOnThirdDevice {
                    stream: on.ordinal(),
                    from: from.ordinal(),
                    to: to.ordinal(),
                },
            ));
        }
        if self.bytes() == 0 {
            return Ok(());
        }
        let _gate = retain_if_capturing(stream, CALL, || vec![self.keep_alive(), src.keep_alive()])?;
        self.note_use_on(stream);
        src.note_use_on(stream);
        // CUDA does not capture cudaMemcpyPeerAsync (seen on CUDA 13.0): captured, the copy is
        // queued as a unified-address copy, which becomes a memcpy node between the devices.
        let captured = crate::capture_gate::capture_id(stream.as_raw())?.is_some();
        let (dst, source, bytes) = (self.as_raw(), src.as_raw(), self.bytes());
        // Both calls: both allocations hold `bytes` bytes (lengths checked) on the devices
        // named, and live until the copy is done: each noted its use on `stream`, so its drop
        // waits for `stream`'s device (or, captured, the graph keeps both); `&mut self` and
        // `&src` are distinct allocations; any bit pattern is a valid T.
        if captured {
            let kind = sys::cudaMemcpyKind::cudaMemcpyDefault;
            // SAFETY: see above.
            let status = unsafe { sys::cudaMemcpyAsync(dst, source, bytes, kind, stream.as_raw()) };
            return check(status, "cudaMemcpyAsync");
        }
        // SAFETY: see above.
        let status = unsafe {
            sys::cudaMemcpyPeerAsync(dst, to.ordinal(), source, from.ordinal(), bytes, stream.as_raw())
        };
        check(status, "cudaMemcpyPeerAsync")
    }
}

impl<T> DevicePtr<T> {
    /// The device whose memory the pointer points into, when this crate owns that memory
    /// (`None` for [`DevicePtr::from_raw`], and for mapped host memory, which every device
    /// reaches).
    ///
    /// ```no_run
    /// let buffer = cuda_graph::DeviceBuffer::<u8>::zeroed(16)?;
    /// assert_eq!(buffer.ptr().device(), Some(buffer.device()));
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn device(&self) -> Option<Device> {
        self.owner.as_ref().and_then(|owner| owner.downcast_ref::<Allocation>()).map(Allocation::device)
    }
}

/// `Ok` when every device allocation among `owners` may be used by work on `device`: its own
/// memory, `cudaMalloc` memory of a device it has peer access to
/// ([`Device::enable_peer_access`]), pool memory whose pool grants it access
/// ([`MemoryPool::enable_access_from`](crate::MemoryPool::enable_access_from); peer access
/// does not reach pools). Else the error for `call`, naming both devices. Other owners
/// (pinned host memory, events, closures) are not device memory.
pub(crate) fn check_owners_on(owners: &[KeepAlive], device: Device, call: &'static str) -> Result<()> {
    owners
        .iter()
        .filter_map(|owner| owner.downcast_ref::<Allocation>())
        .try_for_each(|allocation| check_allocation_on(allocation, device, call))
}

/// [`check_owners_on`] for one allocation.
pub(super) fn check_allocation_on(allocation: &Allocation, device: Device, call: &'static str) -> Result<()> {
    if allocation.ptr().is_null() || allocation.device() == device {
        return Ok(());
    }
    match allocation.pool() {
        None => check_access(device, allocation.device(), call),
        Some(pool) if super::pool::pool_accessible_from(pool, device)? => Ok(()),
        Some(_) => Err(CudaError::refused(
            call,
            crate::Refusal::NoPoolAccess { owner: allocation.device().ordinal(), user: device.ordinal() },
        )),
    }
}

/// Whether any device allocation among `owners` lives on another device than `device`.
pub(crate) fn any_foreign(owners: &[KeepAlive], device: Device) -> bool {
    owners
        .iter()
        .filter_map(|owner| owner.downcast_ref::<Allocation>())
        .any(|allocation| !allocation.ptr().is_null() && allocation.device() != device)
}
