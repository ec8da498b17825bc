//! Each reason's text, compared with the message its call site printed before refusals were
//! typed.

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
        (Refusal::MalformedImage { format: "cubin", problem: "the cubin is cut".into() }, "the cubin is cut"),
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
            AttributeRefusal::DoesNotDivideGrid { what: "cluster", part: (3, 1, 1), grid: (8, 1, 1) }.into(),
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
        (Bounds::Slice { count: 5, done: "skipped", len: 4 }.into(), "5 elements skipped of a slice of 4"),
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
        (Refusal::OutOfRange { what: "capacity", value: 0, min: 1, max: 9 }, "capacity 0 is outside 1..=9"),
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
        (Refusal::UnexpectedPitch { pitch: 4, row_bytes: 8 }, "CUDA returned pitch 4 for rows of 8 bytes"),
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
    assert!(matches!(err.refusal(), Some(Refusal::LengthMismatch(Lengths::BufferAndHost { buffer: 8, .. }))));
}
