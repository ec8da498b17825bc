//! [`Refusal`]: why this crate (or a crate built on it) refused a call before CUDA saw it,
//! the reason [`CudaError::InvalidArgument`](crate::CudaError::InvalidArgument) carries, and
//! the per-area enums some of its variants hold.
//!
//! Each variant says why, with the numbers, devices and names involved as fields; its
//! `Display` is the message the refusal prints. Part of the error layer: it imports nothing
//! of the crate but [`CudaError`], which a few variants hold.

use crate::CudaError;

mod areas;
mod graph;
#[cfg(test)]
mod tests;

pub use areas::{AttributeRefusal, Bounds, CopyBox, Empty, Lengths, Overflow, PinnedWait, Unsupported};
pub use graph::{ConditionalRefusal, EditRefusal, ExecRefusal, InstantiateFailure, NodeRefusal, Unremovable};

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
    /// An address not aligned as the operation needs.
    #[error("the address {address:#x} is not aligned to {align} bytes, as CUDA's memory operations need")]
    UnalignedAddress {
        /// The address.
        address: u64,
        /// The alignment needed, in bytes.
        align: u64,
    },

    // Graphs.
    /// A node handle the call cannot use (of another graph, removed, of another kind).
    #[error("{0}")]
    Node(NodeRefusal),
    /// A change to a graph that is refused.
    #[error("{0}")]
    Edit(EditRefusal),
    /// A rule of conditional nodes or their handles broken.
    #[error("{0}")]
    Conditional(ConditionalRefusal),
    /// What an exec's instantiation, launch, update or adoption needs and lacks.
    #[error("{0}")]
    Exec(ExecRefusal),
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
    /// A graph's nodes and something added to it or used with it (`what`: the event, ...).
    GraphAnd {
        /// What belongs to the other device.
        what: &'static str,
    },
    /// An exec and an argument of a node setter.
    ExecAndArgument,
    /// An exec and the stream it is launched on.
    ExecAndStream,
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
            DevicePair::GraphAnd { what } => {
                format!("the graph's nodes run on device {first} and {what} belongs to device {second}")
            }
            DevicePair::ExecAndArgument => {
                format!("the exec is of device {first}, the argument of device {second}")
            }
            DevicePair::ExecAndStream => format!(
                "the exec runs on device {first} and the stream belongs to device {second}: launch it on a \
                 stream of its own device (Stream::new_on)"
            ),
            DevicePair::CommunicatorAnd { what } => {
                format!(
                    "the communicator's rank runs on device {first} and {what} belongs to device {second}"
                )
            }
        }
    }
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

impl From<NodeRefusal> for Refusal {
    fn from(reason: NodeRefusal) -> Refusal {
        Refusal::Node(reason)
    }
}

impl From<EditRefusal> for Refusal {
    fn from(reason: EditRefusal) -> Refusal {
        Refusal::Edit(reason)
    }
}

impl From<Unremovable> for Refusal {
    fn from(reason: Unremovable) -> Refusal {
        Refusal::Edit(EditRefusal::NotRemovable(reason))
    }
}

impl From<ConditionalRefusal> for Refusal {
    fn from(reason: ConditionalRefusal) -> Refusal {
        Refusal::Conditional(reason)
    }
}

impl From<ExecRefusal> for Refusal {
    fn from(reason: ExecRefusal) -> Refusal {
        Refusal::Exec(reason)
    }
}
