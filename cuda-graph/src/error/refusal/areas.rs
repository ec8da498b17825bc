//! The per-area reasons some [`Refusal`](super::Refusal) variants hold: what a device lacks, what a host
//! function would wait for, launch attributes, bounds, overflows, lengths, empty lists.

use super::{dim3, Dims};

/// What the device lacks ([`Refusal::Unsupported`](super::Refusal::Unsupported)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unsupported {
    /// The device cannot map host memory.
    #[error("device {device} cannot map host memory (cudaDevAttrCanMapHostMemory is 0)")]
    MapHostMemory {
        /// The device.
        device: i32,
    },
    /// Cluster dimensions need sm_90 or later.
    #[error("cluster dimensions need a device with cluster launch (sm_90 or later); this one is {sm}")]
    ClusterLaunch {
        /// The device's architecture, e.g. `sm_80`.
        sm: String,
    },
    /// Programmatic dependent launch needs sm_90 or later.
    #[error(
        "programmatic dependent launch needs sm_90 or later; this device is {sm} (use plain launches and \
         edges on it)"
    )]
    ProgrammaticLaunch {
        /// The device's architecture, e.g. `sm_80`.
        sm: String,
    },
    /// The device cannot launch cooperative grids.
    #[error("this device cannot launch cooperative grids (cudaDevAttrCooperativeLaunch is 0)")]
    CooperativeLaunch,
    /// A batch memory operation on pool (stream-ordered) memory.
    #[error(
        "batch memory operations cannot target pool (stream-ordered) memory: CUDA 13.0 refuses to launch \
         such a node (cudaErrorInvalidValue); use memory of cudaMalloc (DeviceBuffer::zeroed)"
    )]
    MemOpOnPoolMemory,
}

/// What a host function would wait for ([`Refusal::WouldWaitInHostFunction`](super::Refusal::WouldWaitInHostFunction)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum PinnedWait {
    /// Another thread launching or waiting on the pinned buffer.
    #[error("another thread is launching or waiting on this pinned buffer, and a host function cannot wait")]
    AnotherThread,
    /// A device copy that may still use the pinned buffer.
    #[error("a device copy may still use this pinned buffer, and a host function cannot wait for it")]
    DeviceCopy,
}

/// A launch attribute refused ([`Refusal::Attribute`](super::Refusal::Attribute)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AttributeRefusal {
    /// A cluster with a zero dimension.
    #[error("{what} {}: every dimension must be at least 1", dim3(part))]
    ZeroDimension {
        /// `cluster` or `preferred cluster`.
        what: &'static str,
        /// Its dimensions.
        part: Dims,
    },
    /// A cluster that does not divide the grid.
    #[error("{what} {} does not divide the grid {}", dim3(part), dim3(grid))]
    DoesNotDivideGrid {
        /// `cluster` or `preferred cluster`.
        what: &'static str,
        /// Its dimensions.
        part: Dims,
        /// The grid.
        grid: Dims,
    },
    /// A preferred cluster without cluster dimensions.
    #[error("a preferred cluster needs cluster dimensions too (`cluster`)")]
    PreferredWithoutCluster,
    /// A preferred cluster that is not a multiple of the cluster.
    #[error(
        "the preferred cluster {} must be a multiple of the cluster {} in x and y and equal to it in z",
        dim3(preferred),
        dim3(cluster)
    )]
    PreferredNotMultiple {
        /// The preferred cluster.
        preferred: Dims,
        /// The cluster.
        cluster: Dims,
    },
    /// A priority outside the device's range.
    #[error("priority {priority} is outside this device's range {greatest} (highest) ..= {least} (lowest)")]
    PriorityOutOfRange {
        /// The priority asked for.
        priority: i32,
        /// The highest priority (the least number).
        greatest: i32,
        /// The lowest priority (the greatest number).
        least: i32,
    },
    /// A memory synchronization domain the device does not have.
    #[error(
        "memory synchronization domain map MemSyncDomainMap {{ default: {default}, remote: {remote} }}: \
         this device has {count} domain(s), ids 0..{count}"
    )]
    SyncDomainOutOfRange {
        /// The domain id the map gives the default domain.
        default: u8,
        /// The domain id the map gives the remote domain.
        remote: u8,
        /// The domains the device has.
        count: i32,
    },
    /// A cooperative grid larger than the blocks that can be resident at once.
    #[error(
        "a cooperative grid of {blocks} blocks cannot be resident at once: this kernel fits {resident} \
         blocks of {} threads on this device",
        dim3(block)
    )]
    CooperativeGridTooLarge {
        /// The grid's blocks.
        blocks: u64,
        /// The blocks that fit at once.
        resident: u64,
        /// The block.
        block: Dims,
    },
    /// An event that records timing where an untimed one is needed.
    #[error("the {event} event records timing: create it with `timing: false`")]
    TimedEvent {
        /// Which event (`programmatic`, `launch completion`).
        event: &'static str,
    },
    /// A shared memory carveout over 100%.
    #[error("shared memory carveout {percent}% is more than 100%")]
    CarveoutOver100 {
        /// The percentage asked for.
        percent: u8,
    },
}

/// A count, offset or index out of bounds ([`Refusal::OutOfBounds`](super::Refusal::OutOfBounds)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Bounds {
    /// `count` units from `offset` past the end of a buffer of `len`.
    #[error("{count} {unit} from offset {offset} do not fit in a buffer of {len} {unit}")]
    Range {
        /// The units asked for.
        count: usize,
        /// Where they start.
        offset: usize,
        /// The buffer's length.
        len: usize,
        /// `elements` or `bytes`.
        unit: &'static str,
    },
    /// More elements taken (`done`: asked, skipped) from a slice than it has.
    #[error("{count} elements {done} of a slice of {len}")]
    Slice {
        /// The elements taken.
        count: usize,
        /// How they were taken.
        done: &'static str,
        /// The slice's length.
        len: usize,
    },
    /// A pointer offset past the elements left.
    #[error("offset {offset} is past the {left} elements left")]
    Offset {
        /// The offset.
        offset: usize,
        /// The elements from the pointer to the end.
        left: usize,
    },
    /// Elements past the end of a `__device__` variable.
    #[error("{count} elements at offset {offset} do not fit the symbol `{name}` of {len}")]
    Symbol {
        /// The elements.
        count: usize,
        /// Where they start.
        offset: usize,
        /// The variable.
        name: &'static str,
        /// Its elements.
        len: usize,
    },
    /// A box (or, with one flat slice, a rectangle) of a copy outside its side's volume.
    #[error("{}", geometry.describe(side))]
    CopyBox {
        /// The side (`source`, `destination`).
        side: &'static str,
        /// Where the box lies and the volume it does not fit (boxed: the error stays small).
        geometry: Box<CopyBox>,
    },
    /// Slices of a copy taller than its side's rows per slice.
    #[error("slices of {height} rows do not fit the {side}'s {slice_rows} rows per slice")]
    SliceRows {
        /// The side.
        side: &'static str,
        /// The copy's rows.
        height: usize,
        /// The side's rows per slice.
        slice_rows: usize,
    },
    /// Rows of a copy wider than its side's pitch.
    #[error("rows of {width} elements do not fit the {side}'s pitch of {pitch} elements")]
    RowWidth {
        /// The side.
        side: &'static str,
        /// The copy's width.
        width: usize,
        /// The side's pitch.
        pitch: usize,
    },
    /// More items than a queue has room for.
    #[error("{more} items do not fit: the queue holds {count} of {capacity}")]
    QueueFull {
        /// The items added.
        more: usize,
        /// The items it holds.
        count: u32,
        /// Its capacity.
        capacity: u32,
    },
    /// More elements than a side of a copy or fill holds.
    #[error("{count} elements do not fit: the {side} has {len}")]
    Elements {
        /// The elements asked for.
        count: usize,
        /// The side (`source`, `destination`).
        side: &'static str,
        /// The side's elements.
        len: usize,
    },
    /// A rank that the clique does not have.
    #[error("root {root} is not a rank: the clique has {size}")]
    NotARank {
        /// The rank named.
        root: usize,
        /// The clique's ranks.
        size: usize,
    },
}

/// Where a refused box of a copy lies, and the volume of the side it does not fit
/// ([`Bounds::CopyBox`]); all in elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CopyBox {
    /// The box's origin (column, row, slice).
    pub origin: (usize, usize, usize),
    /// The box (width, height, depth).
    pub extent: (usize, usize, usize),
    /// The side's volume (width, rows, depth).
    pub volume: (usize, usize, usize),
    /// Whether it reads as a 2-D copy (a flat side, one slice at 0): then the refusal names a
    /// rectangle.
    pub flat: bool,
}

impl CopyBox {
    fn describe(&self, side: &str) -> String {
        let CopyBox { origin: (x, y, z), extent: (width, height, depth), volume: (w, rows, d), flat } = *self;
        if flat {
            format!(
                "a {width}x{height} rectangle at ({x}, {y}) does not fit the {side} of {w}x{rows} elements"
            )
        } else {
            format!(
                "a {width}x{height}x{depth} box at ({x}, {y}, {z}) does not fit the {side} of \
                 {w}x{rows}x{d} elements"
            )
        }
    }
}

/// A size computation that overflows ([`Refusal::Overflow`](super::Refusal::Overflow)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Overflow {
    /// The bytes of `len` elements.
    #[error("{len} elements of {element_bytes} bytes overflow usize")]
    Elements {
        /// The elements.
        len: usize,
        /// An element's size.
        element_bytes: usize,
    },
    /// The bytes of a side's pitch.
    #[error("the {side}'s pitch of {pitch} elements overflows")]
    Pitch {
        /// The side.
        side: &'static str,
        /// The pitch.
        pitch: usize,
    },
    /// A side's slices.
    #[error("the {side}'s slices of {slice_rows} rows overflow")]
    Slices {
        /// The side.
        side: &'static str,
        /// The rows per slice.
        slice_rows: usize,
    },
    /// The bytes of a copy's row.
    #[error("row overflow")]
    Row {
        /// The row's elements.
        width: usize,
    },
}

/// Two lengths that must agree ([`Refusal::LengthMismatch`](super::Refusal::LengthMismatch)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Lengths {
    /// A device buffer and a host slice.
    #[error("buffer has {buffer} elements, host slice has {host}")]
    BufferAndHost {
        /// The buffer's elements.
        buffer: usize,
        /// The host slice's elements.
        host: usize,
    },
    /// A copy's target and source.
    #[error("target has {target} elements, source has {from}")]
    TargetAndSource {
        /// The target's elements.
        target: usize,
        /// The source's elements.
        from: usize,
    },
    /// A collective's buffer and the elements the collective needs there.
    #[error("the {which} buffer has {have} elements; this collective needs {want}")]
    CollectiveBuffer {
        /// Which buffer (`send`, `receive`).
        which: &'static str,
        /// Its elements.
        have: usize,
        /// The elements needed.
        want: usize,
    },
}

/// A list that must not be empty ([`Refusal::Empty`](super::Refusal::Empty)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum Empty {
    /// No devices were given.
    #[error("no devices given")]
    Devices,
    /// A table of no graphs.
    #[error("a table needs at least one graph")]
    TableGraphs,
    /// A copy or fill of 0 elements.
    #[error("0 elements: CUDA refuses empty copies and fills")]
    Elements,
    /// A 2-D or 3-D copy of an empty extent.
    #[error("an empty extent: CUDA refuses empty copies")]
    Extent,
    /// A batch of no memory operations.
    #[error("no operations: CUDA refuses an empty batch")]
    MemOps,
    /// A memory operation on a pointer to no element.
    #[error("the pointer holds no element to write or wait on")]
    MemOpPointer,
}
