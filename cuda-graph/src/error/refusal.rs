//! [`Refusal`]: why this crate (or a crate built on it) refused a call before CUDA saw it,
//! the reason [`CudaError::InvalidArgument`](crate::CudaError::InvalidArgument) carries, and
//! the per-area enums some of its variants hold.
//!
//! Each variant says why, with the numbers, devices and names involved as fields; its
//! `Display` is the message the refusal prints. Part of the error layer: it imports nothing
//! of the crate but [`CudaError`], which a few variants hold.

use crate::CudaError;

/// A grid, block or cluster's extent in x, y and z (what [`Dim3`](crate::kernel::Dim3) holds).
pub type Dims = (u32, u32, u32);

/// `dims` as `Dim3`'s `Debug` prints it, the form refusals have always shown.
fn dim3((x, y, z): &Dims) -> String {
    format!("Dim3 {{ x: {x}, y: {y}, z: {z} }}")
}

/// Why a call was refused before CUDA saw it: the reason
/// [`CudaError::InvalidArgument`](crate::CudaError::InvalidArgument) carries. Match on it to
/// tell refusals apart; print it (or the error) for the message.
///
/// New reasons may be added (it is `#[non_exhaustive]`): keep a `_` arm.
///
/// ```
/// use cuda_graph::{CudaError, Device, Refusal};
/// fn explain(err: &CudaError) -> &'static str {
///     match err {
///         CudaError::InvalidArgument { reason: Refusal::NoSuchDevice { .. }, .. } => "pick another device",
///         CudaError::InvalidArgument { reason: Refusal::NoPeerAccess { .. }, .. } => "enable peer access",
///         CudaError::InvalidArgument { .. } => "fix the arguments",
///         _ => "a CUDA failure",
///     }
/// }
/// let err = CudaError::InvalidArgument {
///     call: "Device::get",
///     reason: Refusal::NoSuchDevice { ordinal: 7, count: 2 },
/// };
/// assert_eq!(explain(&err), "pick another device");
/// assert_eq!(err.to_string(), "Device::get: device 7 does not exist: there are 2 devices");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    // Devices.
    /// There is no device of that ordinal.
    #[error("device {ordinal} does not exist: there are {count} devices")]
    NoSuchDevice {
        /// The ordinal asked for.
        ordinal: i32,
        /// How many devices there are.
        count: i32,
    },
    /// A device ordinal does not fit the runtime's `int`.
    #[error("device ordinal {ordinal} is out of range")]
    DeviceOrdinalOutOfRange {
        /// The ordinal given.
        ordinal: usize,
    },
    /// Two things that must be of one device are of two ([`DevicePair`] says which).
    #[error("{}", pair.describe(*first, *second))]
    DevicesDiffer {
        /// The two things.
        pair: DevicePair,
        /// The device of the first.
        first: i32,
        /// The device of the second.
        second: i32,
    },
    /// A copy between two devices was queued on a stream of a third.
    #[error(
        "the stream belongs to device {stream}, the copy goes from device {from} to device {to}: queue it \
         on a stream of one of the two"
    )]
    CopyOnThirdDevice {
        /// The stream's device.
        stream: i32,
        /// The source's device.
        from: i32,
        /// The destination's device.
        to: i32,
    },
    /// The hardware has no peer path between the two devices.
    #[error(
        "device {device} cannot access device {peer}'s memory (cudaDeviceCanAccessPeer says no: no NVLink \
         or PCIe peer path between them)"
    )]
    PeerAccessImpossible {
        /// The device that would access.
        device: i32,
        /// The device whose memory it would access.
        peer: i32,
    },
    /// Memory of one device is used by work on another, which has no peer access to it.
    #[error(
        "memory of device {owner} is used by work on device {user}, which has no peer access to it: call \
         Device::get({user}).enable_peer_access(Device::get({owner})), or move the data \
         (DeviceBuffer::copy_from_peer_async)"
    )]
    NoPeerAccess {
        /// The memory's device.
        owner: i32,
        /// The device of the work using it.
        user: i32,
    },
    /// Memory of a pool is used by work on a device the pool does not let in.
    #[error(
        "memory of device {owner} from a memory pool is used by work on device {user}, which the pool does \
         not let in (peer access does not reach pool memory): call \
         MemoryPool::enable_access_from(Device::get({user})) on its pool"
    )]
    NoPoolAccess {
        /// The pool's device.
        owner: i32,
        /// The device of the work using it.
        user: i32,
    },
    /// Peer access is recorded only for devices below `max_devices`.
    #[error("peer access is recorded for devices 0 to {}", max_devices - 1)]
    PeerDeviceUntracked {
        /// How many devices peer access is recorded for.
        max_devices: usize,
    },
    /// A device is listed twice where each may appear once.
    #[error("device {ordinal} is listed twice: one rank per device")]
    DuplicateDevice {
        /// The device listed twice.
        ordinal: i32,
    },
    /// More devices than the library's `int` count can hold.
    #[error("too many devices")]
    TooManyDevices {
        /// How many were given.
        count: usize,
    },
    /// The device lacks what the call needs.
    #[error("{0}")]
    Unsupported(Unsupported),

    // Where the call runs.
    /// A CUDA call inside a host function (CUDA forbids them there).
    #[error(
        "CUDA calls are not allowed inside a host function (a closure of Stream::launch_host_fn or a graph \
         host node): refused before CUDA saw it. Queue the work after the host function on the stream, or \
         hand it to another thread without waiting for it here"
    )]
    InHostFunction,
    /// A host function would have to wait for a pinned buffer.
    #[error("{0}")]
    WouldWaitInHostFunction(PinnedWait),
    /// A stream is captured by code outside this crate, whose graph would not keep the work's
    /// memory alive.
    #[error(
        "the stream is being captured by code outside this crate (cudarc's begin_capture, or raw calls): \
         that graph would not keep this work's memory alive. Capture through Stream::begin_capture (or \
         interop::cudarc::capture_cudarc) instead"
    )]
    CapturedElsewhere,
    /// The stream is being captured, and this work cannot be captured safely.
    #[error(
        "the stream is being captured, and this work cannot be captured safely: add it as graph nodes \
         instead"
    )]
    NotCapturable,
    /// cudarc's event tracking would invalidate a capture across its streams.
    #[error(
        "cudarc's event tracking is on and its context runs several streams: each cudarc launch would wait \
         on an event recorded outside the capture, which invalidates it. Call `unsafe {{ \
         ctx.disable_event_tracking() }}` before making the slices the captured work uses, or keep to one \
         stream"
    )]
    CudarcEventTracking,
    /// A capture failed and cudarc recorded an error during it.
    #[error("{capture}; cudarc recorded: {recorded}")]
    CudarcCaptureFailed {
        /// Why the capture failed.
        capture: Box<CudaError>,
        /// The error cudarc recorded.
        recorded: Box<CudaError>,
    },
    /// A cudarc context that is not its device's primary context.
    #[error(
        "the cudarc context is not its device's primary context: this crate (the CUDA runtime) works only \
         in primary contexts; make it with CudaContext::new"
    )]
    NotPrimaryContext,
    /// A one-shot host function was called a second time (its work was skipped).
    #[error("a one-shot host function was called again (was its stream captured into a graph?); skipped")]
    OneShotCalledAgain,
    /// A completion's host function ran before its marker event completed.
    #[error("the host function ran before its marker event completed")]
    MarkerNotComplete,
    /// No thread could be started to release what a host function dropped: it leaked.
    #[error("no thread to release what a host function dropped ({error}): leaked")]
    NoReleaseThread {
        /// The operating system's error.
        error: String,
    },

    // Conditional handles.
    /// A kernel node's arguments hold a conditional handle of a graph outside the node's.
    #[error(
        "the kernel's arguments hold a conditional handle of graph #{handle_graph}, and this node's graph \
         #{node_graph} is neither that graph nor a body inside it: a kernel may set only the conditions of \
         its own graph (cudaGraphSetConditional from another graph is undefined)"
    )]
    ForeignConditionalHandle {
        /// The graph whose handle it is.
        handle_graph: u64,
        /// The graph of the node.
        node_graph: u64,
    },
    /// A stream launch holds a conditional handle, and the stream is not capturing into its
    /// graph.
    #[error(
        "the arguments hold a conditional handle of graph #{handle_graph}, and the stream is not capturing \
         into that graph: only kernels of graph #{handle_graph} (its nodes, or work captured into it with \
         Stream::begin_capture_to_graph) may set its conditions"
    )]
    ConditionalHandleOutsideCapture {
        /// The graph whose handle it is.
        handle_graph: u64,
    },

    // Handles.
    /// A raw handle is null.
    #[error("the {what} handle is null")]
    NullHandle {
        /// What kind of handle (`event`, ...).
        what: &'static str,
    },
    /// A default-stream handle was given where a stream is to be owned.
    #[error(
        "{handle:#x} names a default stream, which cannot be owned or destroyed: borrow it with \
         Stream::borrow_raw"
    )]
    DefaultStreamNotOwnable {
        /// The handle's value.
        handle: usize,
    },
    /// A default-stream handle names the default stream of whichever context is current.
    #[error(
        "a default-stream handle (null, cudaStreamLegacy, cudaStreamPerThread) names the default stream of \
         whichever context is current: queue other libraries' work on a stream of its own"
    )]
    ContextRelativeStream,

    // Kernels, modules, symbols.
    /// A name holds a NUL byte.
    #[error("the {what} name contains a NUL byte")]
    NulInName {
        /// What was named (`kernel`, `symbol`).
        what: &'static str,
    },
    /// A driver symbol name is not one NUL-terminated string.
    #[error("the driver symbol name is not one NUL-terminated string")]
    DriverSymbolName,
    /// The name is reserved for the globals that carry kernels' C++ parameter types.
    #[error(
        "`{name}` is reserved: globals named `<kernel>{suffix}` carry the C++ parameter types that \
         Module::kernel checks, and are not handed out"
    )]
    ReservedSymbol {
        /// The name asked for.
        name: String,
        /// The reserved suffix.
        suffix: &'static str,
    },
    /// The image has no C++ parameter types for the kernel, so they cannot be checked.
    #[error(
        "the image carries no C++ parameter types for kernel `{kernel}` (build it with \
         cuda_build::ImageBuild), so they cannot be checked: use Module::kernel_unchecked_types"
    )]
    NoParameterTypes {
        /// The kernel's name.
        kernel: String,
    },
    /// A binary image (cubin, fatbin) is malformed or truncated: a size its headers give runs
    /// past its bytes.
    #[error("{problem}")]
    MalformedImage {
        /// Which format the image has by its first bytes: `cubin` or `fatbin`.
        format: &'static str,
        /// What is wrong with it (which header, section or size).
        problem: String,
    },
    /// Bytes given as an image are neither a cubin, a fatbin nor PTX text.
    #[error("the image is neither a cubin (ELF), a fatbin nor PTX text (no `.version` directive)")]
    NotAnImage,
    /// PTX text begins with a byte the driver would read as a binary image's.
    #[error(
        "PTX text must begin with a printable ASCII character or whitespace (the driver would read other \
         first bytes as a binary image's)"
    )]
    PtxFirstByte,
    /// The text given as PTX is not PTX.
    #[error("the text is not PTX")]
    NotPtx,
    /// NVRTC could not compile a program (or could not be loaded, or was given a NUL byte):
    /// the text of the `kernel::nvrtc::CompileError` it was made from. Match that error, which
    /// `nvrtc::compile` returns, to tell its cases apart.
    #[error("{message}")]
    Compile {
        /// The compile error's text (for a compilation, NVRTC's log).
        message: String,
    },
    /// A kernel reports more parameters than this crate reads.
    #[error("the kernel reports more than {max} parameters")]
    TooManyParameters {
        /// The most this crate reads.
        max: usize,
    },
    /// A `__device__` variable's declaration does not match the compiled variable.
    #[error(
        "the __device__ variable `{name}` has {bytes} bytes, not {len} elements of {element_bytes} bytes: \
         its declaration does not match the compiled variable"
    )]
    SymbolSizeMismatch {
        /// The variable's name.
        name: &'static str,
        /// Its size in the image.
        bytes: usize,
        /// The elements declared.
        len: usize,
        /// The declared element's size.
        element_bytes: usize,
    },

    // Launches.
    /// A launch with a zero grid or block dimension.
    #[error("empty launch: grid {}, block {} (every dimension must be at least 1)", dim3(grid), dim3(block))]
    EmptyLaunch {
        /// The grid.
        grid: Dims,
        /// The block.
        block: Dims,
    },
    /// A block of more threads than a block may have.
    #[error("block {} has {threads} threads; at most {max} are allowed", dim3(block))]
    BlockTooLarge {
        /// The block.
        block: Dims,
        /// Its threads.
        threads: u64,
        /// The most allowed.
        max: u64,
    },
    /// A launch attribute the launch or device does not allow.
    #[error("{0}")]
    Attribute(AttributeRefusal),

    // Sizes and memory.
    /// A count, offset or index out of bounds.
    #[error("{0}")]
    OutOfBounds(Bounds),
    /// A size computation overflows.
    #[error("{0}")]
    Overflow(Overflow),
    /// A value outside the range allowed for it (a capacity, a count, an option).
    #[error("{what} {value} is outside {min}..={max}")]
    OutOfRange {
        /// What the value is.
        what: &'static str,
        /// The value given.
        value: u64,
        /// The least allowed.
        min: u64,
        /// The greatest allowed.
        max: u64,
    },
    /// Two lengths that must agree differ.
    #[error("{0}")]
    LengthMismatch(Lengths),
    /// A list that must not be empty is.
    #[error("{0}")]
    Empty(Empty),
    /// A side of a copy has a row pitch of 0 elements.
    #[error("the {side}'s row pitch is 0 elements")]
    ZeroPitch {
        /// The side (`source`, `destination`).
        side: &'static str,
    },
    /// An allocation of no bytes.
    #[error(
        "{row_bytes} bytes by {height} rows{}: nothing to allocate",
        depth.map(|depth| format!(" by {depth} slices")).unwrap_or_default()
    )]
    EmptyAllocation {
        /// The bytes of a row.
        row_bytes: usize,
        /// The rows.
        height: usize,
        /// The slices, for a 3-D allocation.
        depth: Option<usize>,
    },
    /// CUDA returned a pitch this crate cannot use.
    #[error("CUDA returned pitch {pitch} for rows of {row_bytes} bytes")]
    UnexpectedPitch {
        /// The pitch returned.
        pitch: usize,
        /// The bytes of a row.
        row_bytes: usize,
    },
    /// An allocator returned memory not aligned for the element type.
    #[error("{allocator} returned {address:#x}, not aligned to {align} bytes")]
    MisalignedAllocation {
        /// The allocating call.
        allocator: &'static str,
        /// The address returned.
        address: usize,
        /// The alignment needed.
        align: usize,
    },
    /// A pinned buffer is borrowed by the host while work using it would be launched.
    #[error(
        "pinned buffer at {address:#x} ({bytes} bytes) is borrowed by the host; drop the slice before \
         launching"
    )]
    PinnedBorrowed {
        /// The buffer's address.
        address: usize,
        /// Its size in bytes.
        bytes: usize,
    },
    /// A setting of device-side launches of 0 pending launches.
    #[error("a pending launch count of 0 would make every device-side kernel launch fail")]
    ZeroPendingLaunches,
    /// An environment variable's value does not parse.
    #[error("{name}={value:?} is not {expected}")]
    BadEnvironmentVariable {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What it should be.
        expected: &'static str,
    },
    /// The ranks of a communicator clique issue different collectives (or went out of step
    /// before): the clique refuses the launch.
    #[error(
        "{why}{}",
        queued.map(|(queued, total)| format!(
            "; {queued} of this group's {total} collectives reached NCCL (those every rank agreed on)"
        )).unwrap_or_default()
    )]
    RanksOutOfStep {
        /// Which ranks differ and how (the collectives each issued).
        why: String,
        /// For a launch refused part-way: how many of the group's collectives reached the
        /// library, and how many the group holds.
        queued: Option<(usize, usize)>,
    },

    /// TEMPORARY, to be removed: a refusal whose reason is not typed yet, only its message.
    /// Made only by the refusals inside `graph/` that are still to be converted; match on the
    /// other variants, never on this one's text.
    #[error("{problem}")]
    UntypedLegacy {
        /// The message.
        problem: String,
    },
}

/// The two things of different devices in [`Refusal::DevicesDiffer`] (first, second).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DevicePair {
    /// A buffer lent to cudarc and the cudarc stream.
    BufferAndCudarcStream,
    /// A stream and the cudarc context.
    StreamAndCudarcContext,
    /// A device-launch exec handle or table passed as an argument, and the kernel.
    ArgumentAndKernel,
    /// An event and the stream it is recorded on.
    EventAndStream,
    /// The start and end events of a timing.
    StartAndEndEvent,
    /// A memory pool and the stream allocating from it.
    PoolAndStream,
    /// Two graphs of a device-launch table.
    TableGraphs,
    /// A communicator's rank and something a collective uses (`what`: the send buffer, ...).
    CommunicatorAnd {
        /// What belongs to the other device.
        what: &'static str,
    },
}

impl DevicePair {
    fn describe(self, first: i32, second: i32) -> String {
        match self {
            DevicePair::BufferAndCudarcStream => {
                format!("the buffer lives on device {first}, the cudarc stream belongs to device {second}")
            }
            DevicePair::StreamAndCudarcContext => {
                format!("the stream belongs to device {first}, the cudarc context to device {second}")
            }
            DevicePair::ArgumentAndKernel => format!(
                "an argument belongs to device {first} (a device-launch exec handle or table), and the \
                 kernel runs on device {second}: only kernels of its own device may receive it"
            ),
            DevicePair::EventAndStream => format!(
                "the event belongs to device {first} and the stream to device {second}: record it on a \
                 stream of its own device (another device's stream may wait for it)"
            ),
            DevicePair::StartAndEndEvent => {
                format!("the start event belongs to device {first} and the end event to device {second}")
            }
            DevicePair::PoolAndStream => format!(
                "the pool holds memory of device {first} and the stream belongs to device {second}: \
                 allocate from a pool of the stream's device"
            ),
            DevicePair::TableGraphs => format!(
                "the graphs belong to devices {first} and {second}: a table holds graphs of one device, \
                 whose kernels launch them"
            ),
            DevicePair::CommunicatorAnd { what } => {
                format!(
                    "the communicator's rank runs on device {first} and {what} belongs to device {second}"
                )
            }
        }
    }
}

/// What the device lacks ([`Refusal::Unsupported`]).
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
}

/// What a host function would wait for ([`Refusal::WouldWaitInHostFunction`]).
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

/// A launch attribute refused ([`Refusal::Attribute`]).
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

/// A count, offset or index out of bounds ([`Refusal::OutOfBounds`]).
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

/// A size computation that overflows ([`Refusal::Overflow`]).
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

/// Two lengths that must agree ([`Refusal::LengthMismatch`]).
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

/// A list that must not be empty ([`Refusal::Empty`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum Empty {
    /// No devices were given.
    #[error("no devices given")]
    Devices,
    /// A table of no graphs.
    #[error("a table needs at least one graph")]
    TableGraphs,
}

impl From<Unsupported> for Refusal {
    fn from(reason: Unsupported) -> Refusal {
        Refusal::Unsupported(reason)
    }
}

impl From<AttributeRefusal> for Refusal {
    fn from(reason: AttributeRefusal) -> Refusal {
        Refusal::Attribute(reason)
    }
}

impl From<Bounds> for Refusal {
    fn from(reason: Bounds) -> Refusal {
        Refusal::OutOfBounds(reason)
    }
}

impl From<Overflow> for Refusal {
    fn from(reason: Overflow) -> Refusal {
        Refusal::Overflow(reason)
    }
}

impl From<Lengths> for Refusal {
    fn from(reason: Lengths) -> Refusal {
        Refusal::LengthMismatch(reason)
    }
}

impl From<Empty> for Refusal {
    fn from(reason: Empty) -> Refusal {
        Refusal::Empty(reason)
    }
}

impl From<PinnedWait> for Refusal {
    fn from(reason: PinnedWait) -> Refusal {
        Refusal::WouldWaitInHostFunction(reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each reason's text: the message its call site printed before refusals were typed.
    #[test]
    fn each_reason_prints_the_message_of_its_refusal() {
        let cases: Vec<(Refusal, &str)> = vec![
            (Refusal::NoSuchDevice { ordinal: 4, count: 2 }, "device 4 does not exist: there are 2 devices"),
            (
                Refusal::DeviceOrdinalOutOfRange { ordinal: 1 << 40 },
                "device ordinal 1099511627776 is out of range",
            ),
            (
                Refusal::DevicesDiffer { pair: DevicePair::BufferAndCudarcStream, first: 0, second: 1 },
                "the buffer lives on device 0, the cudarc stream belongs to device 1",
            ),
            (
                Refusal::DevicesDiffer { pair: DevicePair::EventAndStream, first: 1, second: 0 },
                "the event belongs to device 1 and the stream to device 0: record it on a stream of its own \
                 device (another device's stream may wait for it)",
            ),
            (
                Refusal::DevicesDiffer { pair: DevicePair::TableGraphs, first: 0, second: 1 },
                "the graphs belong to devices 0 and 1: a table holds graphs of one device, whose kernels \
                 launch them",
            ),
            (
                Refusal::DevicesDiffer {
                    pair: DevicePair::CommunicatorAnd { what: "the send buffer" },
                    first: 0,
                    second: 1,
                },
                "the communicator's rank runs on device 0 and the send buffer belongs to device 1",
            ),
            (
                Refusal::CopyOnThirdDevice { stream: 2, from: 0, to: 1 },
                "the stream belongs to device 2, the copy goes from device 0 to device 1: queue it on a \
                 stream of one of the two",
            ),
            (
                Refusal::NoPeerAccess { owner: 1, user: 0 },
                "memory of device 1 is used by work on device 0, which has no peer access to it: call \
                 Device::get(0).enable_peer_access(Device::get(1)), or move the data \
                 (DeviceBuffer::copy_from_peer_async)",
            ),
            (Refusal::PeerDeviceUntracked { max_devices: 64 }, "peer access is recorded for devices 0 to 63"),
            (Refusal::DuplicateDevice { ordinal: 0 }, "device 0 is listed twice: one rank per device"),
            (Refusal::TooManyDevices { count: 1 << 40 }, "too many devices"),
            (
                Unsupported::MapHostMemory { device: 3 }.into(),
                "device 3 cannot map host memory (cudaDevAttrCanMapHostMemory is 0)",
            ),
            (
                Unsupported::ProgrammaticLaunch { sm: "sm_80".into() }.into(),
                "programmatic dependent launch needs sm_90 or later; this device is sm_80 (use plain \
                 launches and edges on it)",
            ),
            (
                PinnedWait::DeviceCopy.into(),
                "a device copy may still use this pinned buffer, and a host function cannot wait for it",
            ),
            (
                Refusal::CudarcCaptureFailed {
                    capture: Box::new(CudaError::refused("end", Refusal::NotCapturable)),
                    recorded: Box::new(CudaError::refused("check_err", Refusal::NotPtx)),
                },
                "end: the stream is being captured, and this work cannot be captured safely: add it as \
                 graph nodes instead; cudarc recorded: check_err: the text is not PTX",
            ),
            (
                Refusal::NoReleaseThread { error: "out of threads".into() },
                "no thread to release what a host function dropped (out of threads): leaked",
            ),
            (
                Refusal::ConditionalHandleOutsideCapture { handle_graph: 7 },
                "the arguments hold a conditional handle of graph #7, and the stream is not capturing into \
                 that graph: only kernels of graph #7 (its nodes, or work captured into it with \
                 Stream::begin_capture_to_graph) may set its conditions",
            ),
            (Refusal::NullHandle { what: "event" }, "the event handle is null"),
            (
                Refusal::InHostFunction,
                "CUDA calls are not allowed inside a host function (a closure of Stream::launch_host_fn or \
                 a graph host node): refused before CUDA saw it. Queue the work after the host function on \
                 the stream, or hand it to another thread without waiting for it here",
            ),
            (
                Refusal::CudarcEventTracking,
                "cudarc's event tracking is on and its context runs several streams: each cudarc launch \
                 would wait on an event recorded outside the capture, which invalidates it. Call `unsafe { \
                 ctx.disable_event_tracking() }` before making the slices the captured work uses, or keep \
                 to one stream",
            ),
            (
                Refusal::PtxFirstByte,
                "PTX text must begin with a printable ASCII character or whitespace (the driver would read \
                 other first bytes as a binary image's)",
            ),
            (
                Refusal::ForeignConditionalHandle { handle_graph: 3, node_graph: 4 },
                "the kernel's arguments hold a conditional handle of graph #3, and this node's graph #4 is \
                 neither that graph nor a body inside it: a kernel may set only the conditions of its own \
                 graph (cudaGraphSetConditional from another graph is undefined)",
            ),
            (
                Refusal::DefaultStreamNotOwnable { handle: 2 },
                "0x2 names a default stream, which cannot be owned or destroyed: borrow it with \
                 Stream::borrow_raw",
            ),
            (Refusal::NulInName { what: "kernel" }, "the kernel name contains a NUL byte"),
            (
                Refusal::ReservedSymbol { name: "k__sig".into(), suffix: "__sig" },
                "`k__sig` is reserved: globals named `<kernel>__sig` carry the C++ parameter types that \
                 Module::kernel checks, and are not handed out",
            ),
            (
                Refusal::MalformedImage { format: "cubin", problem: "the cubin is cut".into() },
                "the cubin is cut",
            ),
            (Refusal::TooManyParameters { max: 32768 }, "the kernel reports more than 32768 parameters"),
            (
                Refusal::SymbolSizeMismatch { name: "table", bytes: 64, len: 15, element_bytes: 4 },
                "the __device__ variable `table` has 64 bytes, not 15 elements of 4 bytes: its declaration \
                 does not match the compiled variable",
            ),
            (
                Refusal::EmptyLaunch { grid: (0, 1, 1), block: (32, 1, 1) },
                "empty launch: grid Dim3 { x: 0, y: 1, z: 1 }, block Dim3 { x: 32, y: 1, z: 1 } (every \
                 dimension must be at least 1)",
            ),
            (
                Refusal::BlockTooLarge { block: (64, 32, 1), threads: 2048, max: 1024 },
                "block Dim3 { x: 64, y: 32, z: 1 } has 2048 threads; at most 1024 are allowed",
            ),
            (
                AttributeRefusal::DoesNotDivideGrid { what: "cluster", part: (3, 1, 1), grid: (8, 1, 1) }
                    .into(),
                "cluster Dim3 { x: 3, y: 1, z: 1 } does not divide the grid Dim3 { x: 8, y: 1, z: 1 }",
            ),
            (
                AttributeRefusal::SyncDomainOutOfRange { default: 0, remote: 1, count: 1 }.into(),
                "memory synchronization domain map MemSyncDomainMap { default: 0, remote: 1 }: this device \
                 has 1 domain(s), ids 0..1",
            ),
            (
                AttributeRefusal::TimedEvent { event: "programmatic" }.into(),
                "the programmatic event records timing: create it with `timing: false`",
            ),
            (
                AttributeRefusal::CarveoutOver100 { percent: 101 }.into(),
                "shared memory carveout 101% is more than 100%",
            ),
            (
                Bounds::Slice { count: 5, done: "skipped", len: 4 }.into(),
                "5 elements skipped of a slice of 4",
            ),
            (Bounds::Offset { offset: 9, left: 8 }.into(), "offset 9 is past the 8 elements left"),
            (
                Bounds::QueueFull { more: 2, count: 3, capacity: 4 }.into(),
                "2 items do not fit: the queue holds 3 of 4",
            ),
            (Bounds::NotARank { root: 2, size: 2 }.into(), "root 2 is not a rank: the clique has 2"),
            (
                Overflow::Elements { len: usize::MAX, element_bytes: 8 }.into(),
                "18446744073709551615 elements of 8 bytes overflow usize",
            ),
            (Overflow::Row { width: 7 }.into(), "row overflow"),
            (
                Refusal::OutOfRange { what: "capacity", value: 0, min: 1, max: 9 },
                "capacity 0 is outside 1..=9",
            ),
            (Lengths::BufferAndHost { buffer: 8, host: 9 }.into(), "buffer has 8 elements, host slice has 9"),
            (Lengths::TargetAndSource { target: 8, from: 9 }.into(), "target has 8 elements, source has 9"),
            (
                Lengths::CollectiveBuffer { which: "receive", have: 16, want: 32 }.into(),
                "the receive buffer has 16 elements; this collective needs 32",
            ),
            (Empty::Devices.into(), "no devices given"),
            (Empty::TableGraphs.into(), "a table needs at least one graph"),
            (Refusal::ZeroPitch { side: "source" }, "the source's row pitch is 0 elements"),
            (
                Refusal::EmptyAllocation { row_bytes: 0, height: 4, depth: None },
                "0 bytes by 4 rows: nothing to allocate",
            ),
            (
                Refusal::EmptyAllocation { row_bytes: 8, height: 4, depth: Some(0) },
                "8 bytes by 4 rows by 0 slices: nothing to allocate",
            ),
            (
                Refusal::UnexpectedPitch { pitch: 4, row_bytes: 8 },
                "CUDA returned pitch 4 for rows of 8 bytes",
            ),
            (
                Refusal::MisalignedAllocation { allocator: "cudaMallocHost", address: 0x1001, align: 8 },
                "cudaMallocHost returned 0x1001, not aligned to 8 bytes",
            ),
            (
                Refusal::PinnedBorrowed { address: 0x1000, bytes: 8 },
                "pinned buffer at 0x1000 (8 bytes) is borrowed by the host; drop the slice before launching",
            ),
            (
                Refusal::ZeroPendingLaunches,
                "a pending launch count of 0 would make every device-side kernel launch fail",
            ),
            (
                Refusal::BadEnvironmentVariable {
                    name: "TIMEOUT",
                    value: "soon".into(),
                    expected: "a number of seconds (e.g. 60, 2.5, inf)",
                },
                "TIMEOUT=\"soon\" is not a number of seconds (e.g. 60, 2.5, inf)",
            ),
            (
                Refusal::RanksOutOfStep { why: "ranks 0 and 1 differ".into(), queued: Some((0, 1)) },
                "ranks 0 and 1 differ; 0 of this group's 1 collectives reached NCCL (those every rank \
                 agreed on)",
            ),
            (
                Refusal::RanksOutOfStep { why: "ranks 0 and 1 differ".into(), queued: None },
                "ranks 0 and 1 differ",
            ),
        ];
        for (reason, text) in cases {
            assert_eq!(reason.to_string(), text, "{reason:?}");
        }
    }

    #[test]
    fn a_refusal_prints_its_call_then_its_reason() {
        let err =
            CudaError::refused("DeviceBuffer::copy_from_host", Lengths::BufferAndHost { buffer: 8, host: 9 });
        assert_eq!(err.to_string(), "DeviceBuffer::copy_from_host: buffer has 8 elements, host slice has 9");
        assert!(matches!(
            err.refusal(),
            Some(Refusal::LengthMismatch(Lengths::BufferAndHost { buffer: 8, .. }))
        ));
    }
}
