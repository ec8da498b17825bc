//! Each reason's text, compared with the message its call site printed before refusals were
//! typed.

use super::*;

/// Each reason's text: the message its call site printed before refusals were typed.
#[test]
fn each_reason_prints_the_message_of_its_refusal() {
    let cases: Vec<(Refusal, &str)> = vec![
        (
            Refusal::Unsupported(Unsupported::MemOpOnPoolMemory),
            "batch memory operations cannot target pool (stream-ordered) memory: CUDA 13.0 refuses to launch \
             such a node (cudaErrorInvalidValue); use memory of cudaMalloc (DeviceBuffer::zeroed)",
        ),
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

/// The texts of the graph refusals: each the message its call site printed before they were
/// typed (the device pairs, empty lists and bounds of graph/ included).
#[test]
fn each_graph_reason_prints_the_message_of_its_refusal() {
    let cases: Vec<(Refusal, &str)> = vec![
        (
            Refusal::DevicesDiffer { pair: DevicePair::GraphAnd { what: "the event" }, first: 0, second: 1 },
            "the graph's nodes run on device 0 and the event belongs to device 1",
        ),
        (
            Refusal::DevicesDiffer { pair: DevicePair::ExecAndArgument, first: 1, second: 0 },
            "the exec is of device 1, the argument of device 0",
        ),
        (
            Refusal::DevicesDiffer { pair: DevicePair::ExecAndStream, first: 1, second: 0 },
            "the exec runs on device 1 and the stream belongs to device 0: launch it on a stream of its own \
             device (Stream::new_on)",
        ),
        (Empty::Elements.into(), "0 elements: CUDA refuses empty copies and fills"),
        (Empty::Extent.into(), "an empty extent: CUDA refuses empty copies"),
        (Empty::MemOps.into(), "no operations: CUDA refuses an empty batch"),
        (Empty::MemOpPointer.into(), "the pointer holds no element to write or wait on"),
        (
            Bounds::Elements { count: 11, side: "source", len: 10 }.into(),
            "11 elements do not fit: the source has 10",
        ),
        (
            Refusal::UnalignedAddress { address: 0x1002, align: 4 },
            "the address 0x1002 is not aligned to 4 bytes, as CUDA's memory operations need",
        ),
        (
            NodeRefusal::Removed.into(),
            "the node was removed from its graph; a handle of a removed node names nothing",
        ),
        (
            NodeRefusal::DependencyOfAnotherGraph { index: 0, node_graph: 3, graph: 4 }.into(),
            "dependency 0 is a node of another graph (#3, not #4); a node can depend only on nodes of the \
             graph or body it is added to",
        ),
        (
            NodeRefusal::OfAnotherGraph { node_graph: 3, graph: 4 }.into(),
            "the node belongs to another graph (#3, not #4)",
        ),
        (
            NodeRefusal::WrongKind { found: "memset".into(), wanted: "memcpy".into() }.into(),
            "the node is a memset node, not a memcpy node",
        ),
        (
            NodeRefusal::StaleView.into(),
            "a node was removed from the graph since this child-graph view was made: read it again",
        ),
        (
            NodeRefusal::NotOfExecGraph { node_graph: 5, exec_graph: 2 }.into(),
            "the node belongs to graph #5, not to graph #2 this exec was instantiated from",
        ),
        (
            NodeRefusal::AddedAfterInstantiation.into(),
            "the node was added to its graph after this exec was instantiated",
        ),
        (NodeRefusal::NotOfOriginal.into(), "the node is not a node of the original graph given"),
        (NodeRefusal::AddedAfterClone.into(), "the node was added to the original after it was cloned"),
        (NodeRefusal::CopyRemovedFromClone.into(), "the node's copy was removed from the clone"),
        (NodeRefusal::AllocationOfAnotherGraph.into(), "the allocation was made by a node of another graph"),
        (
            NodeRefusal::UnknownConditional.into(),
            "the conditional node was not added by this crate, so its parameters are unknown",
        ),
        (
            EditRefusal::Instantiated.into(),
            "an exec was instantiated from this graph and CUDA names its nodes by the graph's: remove nodes \
             from a clone (Graph::clone_graph) instead",
        ),
        (
            Unremovable::Conditional.into(),
            "a conditional node cannot be removed: its bodies would be destroyed under their builders",
        ),
        (
            Unremovable::MemoryNode.into(),
            "a memory alloc or free node cannot be removed: nodes may use the memory it orders",
        ),
        (
            EditRefusal::BesideMemoryNodes { what: "an edge" }.into(),
            "the graph holds memory alloc or free nodes, whose ordering edges may not be removed (nor an \
             edge with its edges): edit a graph without them",
        ),
        (EditRefusal::ProgrammaticEdgeTarget.into(), "programmatic edges lead only into kernel nodes"),
        (EditRefusal::BatchMemOpEdges.into(), "batch memory operation nodes take plain dependencies only"),
        (EditRefusal::ChildIsItself.into(), "a graph cannot contain itself (or its own family) as a child"),
        (
            EditRefusal::CaptureInProgress.into(),
            "a stream capture into this graph is still in progress on this thread; end it first",
        ),
        (EditRefusal::NotClonedFrom.into(), "this graph was not cloned from the original given"),
        (EditRefusal::CloneOfItself.into(), "a graph is not a clone of itself"),
        (
            EditRefusal::DotPathNul { path: "/tmp/a\0b".into() }.into(),
            "temporary path /tmp/a\0b contains a NUL byte",
        ),
        (
            EditRefusal::DotReadBack {
                path: "/tmp/g.dot".into(),
                kind: std::io::ErrorKind::NotFound,
                error: "gone".into(),
            }
            .into(),
            "reading back /tmp/g.dot: gone",
        ),
        (
            ConditionalRefusal::HandleOfAnotherGraph { handle_graph: 3, graph: 4 }.into(),
            "the conditional handle belongs to graph #3, which is neither this graph (#4) nor one enclosing \
             it; create the handle with `conditional_handle` on this graph or its parent",
        ),
        (
            ConditionalRefusal::UntestedHandle { handle: 3 }.into(),
            "conditional handle 3 of the graph's family (in the order made) is tested by no conditional \
             node: a kernel setting it would set a condition the exec does not have (CUDA refuses to \
             instantiate such a graph, and does not check an update)",
        ),
        (
            ConditionalRefusal::ChildWithHandles { handles: 2 }.into(),
            "the child graph made 2 conditional handle(s): a graph with conditional handles or nodes \
             cannot be a child graph (CUDA does not support it); add its nodes to a conditional body instead",
        ),
        (ConditionalRefusal::SwitchWithoutBodies.into(), "a SWITCH needs at least 1 body, got 0"),
        (
            ConditionalRefusal::TooManyBodies { bodies: 1 << 33 }.into(),
            "8589934592 bodies is more than a SWITCH can have",
        ),
        (ConditionalRefusal::BodyCount { returned: 1, expected: 2 }.into(), "CUDA returned 1 bodies, not 2"),
        (ConditionalRefusal::NoBodies.into(), "CUDA created the node but returned no body graphs"),
        (
            ExecRefusal::PinnedForDeviceLaunch.into(),
            "the graph copies to or from a PinnedBuffer, which launches from the device could race host \
             slices of: instantiate it for HostLaunch",
        ),
        (
            ExecRefusal::LaunchIntoCapture.into(),
            "the stream is being captured: add the graph as a child graph node \
             (GraphBuilder::add_child_graph) instead of launching an exec into the capture",
        ),
        (
            ExecRefusal::LastLaunchUnwaited.into(),
            "the exec's last launch, which may still launch it again from the device, could not be \
             waited for (an earlier CUDA error, see take_unreported_errors or the stream's status); \
             the exec was not changed",
        ),
        (
            ExecRefusal::DeviceLaunchNotAdoptable.into(),
            "the exec was instantiated for device launch: only host-launch execs can be adopted",
        ),
        (
            ExecRefusal::DeviceLaunchValidated.into(),
            "a device-launch exec's nodes were validated at instantiation; instantiate anew",
        ),
        (ExecRefusal::ChildOfOwnFamily.into(), "the child is of this exec's own graph family"),
        (Refusal::NullHandle { what: "exec" }, "the exec handle is null"),
    ];
    for (reason, text) in cases {
        assert_eq!(reason.to_string(), text, "{reason:?}");
    }
}

/// An instantiation CUDA refused prints CUDA's status, the reason its result names, and the
/// kind of the node CUDA named, as before it was typed.
#[test]
fn an_instantiation_refusal_prints_the_status_the_reason_and_the_node() {
    let status = || Box::new(CudaError::Api { code: 1, name: "E", message: "m", call: "c" });
    let failures = [
        (InstantiateFailure::InvalidStructure, "the graph's structure is invalid (a cycle, say)"),
        (
            InstantiateFailure::NotForDeviceLaunch,
            "a node's operation is not supported for device launch (host, empty, event, child graph, memory \
             and conditional nodes are not)",
        ),
        (
            InstantiateFailure::NotInBody,
            "a conditional node's body (or a child graph) holds a node CUDA does not allow there: bodies \
             take kernel, memcpy, memset, empty, child graph and conditional nodes, not event record or \
             wait, host or memory nodes (a collective captured into a body brings NCCL's event wait node \
             unless NCCL_GRAPH_MIXING_SUPPORT=0)",
        ),
        (InstantiateFailure::NotSupported, "a node's operation is not supported here"),
        (
            InstantiateFailure::MultipleDevices,
            "device launch does not support graphs whose nodes span several devices or contexts",
        ),
        (InstantiateFailure::HandleUnused, "a conditional handle is not used by any conditional node"),
    ];
    for (reason, text) in failures {
        let refusal: Refusal =
            ExecRefusal::Instantiate { status: status(), reason, node_named: false, node_kind: None }.into();
        assert_eq!(refusal.to_string(), format!("c failed: E (1): m; {text}"));
    }
    let at = |node_named, node_kind: Option<&str>| {
        let node_kind = node_kind.map(str::to_owned);
        let reason = InstantiateFailure::NotSupported;
        Refusal::from(ExecRefusal::Instantiate { status: status(), reason, node_named, node_kind })
            .to_string()
    };
    let text = "c failed: E (1): m; a node's operation is not supported here";
    assert_eq!(at(true, Some("event wait")), format!("{text} (at a event wait node)"));
    assert_eq!(at(true, None), format!("{text} (at a node CUDA named)"));
    assert_eq!(at(false, None), text);
}

#[test]
fn a_refusal_prints_its_call_then_its_reason() {
    let err =
        CudaError::refused("DeviceBuffer::copy_from_host", Lengths::BufferAndHost { buffer: 8, host: 9 });
    assert_eq!(err.to_string(), "DeviceBuffer::copy_from_host: buffer has 8 elements, host slice has 9");
    assert!(matches!(err.refusal(), Some(Refusal::LengthMismatch(Lengths::BufferAndHost { buffer: 8, .. }))));
}
