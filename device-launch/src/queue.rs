//! An atomic work queue: items pushed from the host, claimed on the device one per thread,
//! 32 per warp or one per thread of a block with a single atomic, and counted when done.
//!
//! Device side (`device_launch.cuh`): `dl_queue_pop`, `dl_queue_pop_warp`,
//! `dl_queue_pop_block` and `dl_queue_done` on a `DlQueue*`, which is [`WorkQueue::arg`].

use std::sync::Arc;

use cuda_graph::refusal::Bounds;
use cuda_graph::{CudaError, DeviceBuffer, KeepAlive, KernelParam, Refusal};

use crate::error::Result;

shared_struct! {
    /// The queue's header, shared with `DlQueue` in `device_launch.cuh` (24 bytes).
    ///
    /// ```
    /// // The header's DlQueue and this struct must agree byte for byte.
    /// assert_eq!(size_of::<device_launch::RawQueue>() % 4, 0);
    /// ```
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct RawQueue as "DlQueue" {
        /// Device address of the item array (`uint32_t*`).
        pub items: u64,
        /// Room in the item array.
        pub capacity: u32,
        /// Items pushed so far (the tail).
        pub count: u32,
        /// Next item to claim; runs past `count` by at most one claim per consumer.
        pub head: u32,
        /// Items consumers reported done (`dl_queue_done`).
        pub processed: u32,
    }
}

/// A queue of `u32` work items in device memory.
///
/// Push items from the host before launching the consumers (or between their launches; the
/// device sees `count` as fixed while a consumer runs), hand [`arg`](WorkQueue::arg) to
/// kernels as `DlQueue*`, synchronize, then read [`processed`](WorkQueue::processed).
///
/// # Host writes and running consumers
/// [`push_all`](WorkQueue::push_all), [`reset`](WorkQueue::reset) and the reads
/// ([`processed`](WorkQueue::processed), [`claimed`](WorkQueue::claimed),
/// [`read`](WorkQueue::read)) are synchronous `cudaMemcpy` calls on the legacy default
/// stream. They come after the work queued earlier on blocking streams
/// ([`Stream::new`](cuda_graph::Stream::new)) and have landed when they return, so consumers
/// launched afterwards on any stream see them. They are **not** ordered with consumers
/// already queued or running on **non-blocking** streams: synchronize those (or wait for an
/// event recorded after them) first, or a running consumer may see the new items or count
/// part way, and a read may see counters mid-update.
///
/// Such a race gives wrong counts or items, not undefined behaviour on the host: the host
/// only reads into its own values (any bit pattern is a valid [`RawQueue`]) and the device
/// memory is never borrowed by Rust. On the device, the host only ever writes the same
/// `items` pointer and `capacity`, and a `count` no greater than the capacity; consumers
/// read `count` once and index only below it.
///
/// ```no_run
/// use cuda_graph::{kernel::LaunchConfig, DeviceBuffer, Stream};
/// use device_launch::WorkQueue;
/// let mut queue = WorkQueue::with_capacity(10_000)?;
/// queue.push_all(&(0..10_000).collect::<Vec<u32>>())?;
/// let hits = DeviceBuffer::<u32>::zeroed(10_000)?;
/// let stream = Stream::new()?;
/// // dl_queue_consume(queue, hits, mode): mode 1 claims 32 items per warp at a time.
/// device_launch_kernels::dl_queue_consume().launch(&stream, LaunchConfig::new(8, 128), (queue.arg(), hits.ptr(), 1))?;
/// stream.synchronize()?;
/// assert_eq!(queue.processed()?, 10_000);
/// # Ok::<(), device_launch::Error>(())
/// ```
#[derive(Debug)]
pub struct WorkQueue {
    header: DeviceBuffer<RawQueue>,
    items: DeviceBuffer<u32>,
    /// The host's copy of `count` (only the host pushes).
    count: u32,
}

impl WorkQueue {
    /// An empty queue with room for `capacity` items (at least 1, at most `u32::MAX - 2^16`,
    /// so that claims past the end cannot wrap the head).
    ///
    /// ```no_run
    /// let queue = device_launch::WorkQueue::with_capacity(1024)?;
    /// assert_eq!(queue.capacity(), 1024);
    /// # Ok::<(), device_launch::Error>(())
    /// ```
    pub fn with_capacity(capacity: u32) -> Result<WorkQueue> {
        check_capacity(capacity)?;
        let items = DeviceBuffer::<u32>::zeroed(capacity as usize)?;
        let raw = RawQueue { items: items.as_raw() as u64, capacity, ..RawQueue::default() };
        let header = DeviceBuffer::from_slice(&[raw])?;
        Ok(WorkQueue { header, items, count: 0 })
    }

    /// The kernel argument for a `DlQueue*` parameter: it keeps the queue's memory (header
    /// and items) alive as long as the launch or graph node that holds it.
    ///
    /// ```no_run
    /// # let queue = device_launch::WorkQueue::with_capacity(8)?;
    /// let arg: device_launch::WorkQueueArg = queue.arg();
    /// # Ok::<(), device_launch::Error>(())
    /// ```
    pub fn arg(&self) -> WorkQueueArg {
        WorkQueueArg {
            addr: self.header.as_raw() as u64,
            owners: Arc::new([self.header.keep_alive(), self.items.keep_alive()]),
        }
    }

    /// Room for items.
    pub fn capacity(&self) -> u32 {
        self.items.len() as u32
    }

    /// Items pushed since creation or the last [`reset`](WorkQueue::reset).
    pub fn len(&self) -> u32 {
        self.count
    }

    /// True when nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Appends `items` (synchronous copies: the items, then the new count). Consumers
    /// queued afterwards see them; consumers still running on non-blocking streams may or
    /// may not (see "Host writes and running consumers" on [`WorkQueue`]).
    ///
    /// ```no_run
    /// let mut queue = device_launch::WorkQueue::with_capacity(4)?;
    /// queue.push_all(&[7, 8])?;
    /// queue.push_all(&[9])?;
    /// assert_eq!(queue.len(), 3);
    /// assert!(queue.push_all(&[1, 2]).is_err()); // past the capacity
    /// # Ok::<(), device_launch::Error>(())
    /// ```
    pub fn push_all(&mut self, items: &[u32]) -> Result<()> {
        let new_count = checked_push(self.count, items.len(), self.capacity())?;
        if items.is_empty() {
            return Ok(());
        }
        self.items.copy_from_host_at(self.count as usize, items)?;
        self.write_field(std::mem::offset_of!(RawQueue, count), new_count)?;
        self.count = new_count;
        Ok(())
    }

    /// Empties the queue: count, head and processed back to 0 (a synchronous copy of the
    /// header). Synchronize consumers on non-blocking streams first: one still running would
    /// keep claiming from the new counters (see "Host writes and running consumers" on
    /// [`WorkQueue`]).
    ///
    /// ```no_run
    /// let mut queue = device_launch::WorkQueue::with_capacity(4)?;
    /// queue.push_all(&[1])?;
    /// queue.reset()?;
    /// assert!(queue.is_empty());
    /// # Ok::<(), device_launch::Error>(())
    /// ```
    pub fn reset(&mut self) -> Result<()> {
        let raw =
            RawQueue { items: self.items.as_raw() as u64, capacity: self.capacity(), ..RawQueue::default() };
        self.header.copy_from_host(&[raw])?;
        self.count = 0;
        Ok(())
    }

    /// The header as the device last wrote it (a synchronous copy: synchronize the
    /// consumers' stream first).
    pub fn read(&self) -> Result<RawQueue> {
        Ok(self.header.to_vec()?[0])
    }

    /// Items the consumers reported done (`dl_queue_done`).
    ///
    /// ```no_run
    /// # let queue = device_launch::WorkQueue::with_capacity(4)?;
    /// assert_eq!(queue.processed()?, 0);
    /// # Ok::<(), device_launch::Error>(())
    /// ```
    pub fn processed(&self) -> Result<u32> {
        Ok(self.read()?.processed)
    }

    /// Items claimed by consumers so far (the head, capped at the count).
    pub fn claimed(&self) -> Result<u32> {
        let raw = self.read()?;
        Ok(raw.head.min(raw.count))
    }

    /// Writes the u32 field at byte `offset` of the header, leaving the fields the device
    /// writes as they are.
    fn write_field(&mut self, offset: usize, value: u32) -> Result<()> {
        Ok(self.header.copy_bytes_from_host_at(offset, &value.to_ne_bytes())?)
    }
}

/// A [`WorkQueue`] as a kernel argument (`DlQueue*`); declare the parameter as
/// `WorkQueueArg` in `cuda_graph::kernels!`.
///
/// ```no_run
/// use cuda_graph::DevicePtr;
/// use device_launch::WorkQueueArg;
/// cuda_graph::kernels! {
///     unsafe fn dl_queue_consume(queue: WorkQueueArg, hits: DevicePtr<u32>, mode: u32);
/// }
/// ```
#[derive(Clone)]
pub struct WorkQueueArg {
    addr: u64,
    owners: Arc<[KeepAlive; 2]>,
}

impl std::fmt::Debug for WorkQueueArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WorkQueueArg({:#x})", self.addr)
    }
}

// SAFETY: the kernel parameter is `DlQueue*`, a 64-bit device address passed as `u64`; it
// points at a `RawQueue` whose memory (and the items it points to) `owners` keeps alive, and
// `keep_alive` hands out both allocations' own records (`DeviceBuffer::keep_alive`).
unsafe impl KernelParam for WorkQueueArg {
    type Raw = u64;
    fn raw(&self) -> u64 {
        self.addr
    }
    fn cpp_type() -> String {
        "*mut DlQueue".to_string()
    }
    fn keep_alive(&self, owners: &mut Vec<KeepAlive>) {
        // Each allocation's own record, not a wrapper: device checks and frees see them.
        owners.extend(self.owners.iter().cloned());
    }
}

/// The most items a queue may hold: consumers may push the head up to 65536 past the count
/// (one claim of at most 1024 threads per block, or 32 per warp), which must not wrap.
pub const MAX_CAPACITY: u32 = u32::MAX - (1 << 16);

fn check_capacity(capacity: u32) -> Result<()> {
    if capacity == 0 || capacity > MAX_CAPACITY {
        return Err(CudaError::InvalidArgument {
            call: "WorkQueue::with_capacity",
            reason: Refusal::OutOfRange {
                what: "capacity",
                value: capacity.into(),
                min: 1,
                max: MAX_CAPACITY.into(),
            },
        }
        .into());
    }
    Ok(())
}

/// The count after pushing `more` items onto `count`, if they fit in `capacity`.
fn checked_push(count: u32, more: usize, capacity: u32) -> Result<u32> {
    let room = (capacity - count) as usize;
    if more > room {
        return Err(CudaError::InvalidArgument {
            call: "WorkQueue::push_all",
            reason: Bounds::QueueFull { more, count, capacity }.into(),
        }
        .into());
    }
    Ok(count + more as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushes_past_the_capacity_are_refused() {
        assert_eq!(checked_push(0, 4, 4).unwrap(), 4);
        assert_eq!(checked_push(3, 0, 4).unwrap(), 3);
        let err = checked_push(3, 2, 4).unwrap_err();
        let full = Refusal::OutOfBounds(Bounds::QueueFull { more: 2, count: 3, capacity: 4 });
        assert!(matches!(&err, crate::Error::Cuda(err) if err.refusal() == Some(&full)), "{err}");
        let capacity =
            |value| Refusal::OutOfRange { what: "capacity", value, min: 1, max: MAX_CAPACITY.into() };
        let err = check_capacity(0).unwrap_err();
        assert!(matches!(&err, crate::Error::Cuda(err) if err.refusal() == Some(&capacity(0))), "{err}");
        // The text users read.
        assert!(err.to_string().ends_with(&format!("capacity 0 is outside 1..={MAX_CAPACITY}")), "{err}");
        assert!(check_capacity(u32::MAX).is_err());
        assert!(check_capacity(1).is_ok() && check_capacity(MAX_CAPACITY).is_ok());
    }

    #[test]
    fn the_queue_layout_matches_the_header() {
        assert_eq!(size_of::<RawQueue>(), 24);
        assert_eq!(std::mem::offset_of!(RawQueue, count), 12);
        let fields = crate::header::members("struct DlQueue {");
        assert_eq!(
            fields,
            ["uint32_t* items", "uint32_t capacity", "uint32_t count", "uint32_t head", "uint32_t processed"]
        );
    }
}
