//! The operations' names, as the rows, the CSV, the goals file and the charts spell them. The
//! measuring crate names its rows with these, so a report reads what a run wrote.

/// (a) Empty-kernel stream launch.
pub const STREAM_LAUNCH: &str = "stream launch, empty kernel";
/// (a) The same with programmatic stream serialization.
pub const STREAM_LAUNCH_PROGRAMMATIC: &str = "stream launch, empty kernel, programmatic";
/// (b) Graph replay of a kernel chain.
pub const GRAPH_REPLAY: &str = "graph replay, kernel chain";
/// (h) Empty kernels, plain edges.
pub const EMPTY_PLAIN: &str = "graph replay, empty chain, plain edges";
/// (h) Empty kernels (PDL versions), programmatic edges.
pub const EMPTY_PROGRAMMATIC: &str = "graph replay, empty chain, programmatic edges";
/// (h) `*counter += 1` kernels, plain edges.
pub const RMW_PLAIN: &str = "graph replay, read-modify-write chain, plain edges";
/// (h) `*counter += 1` kernels (PDL versions), programmatic edges.
pub const RMW_PROGRAMMATIC: &str = "graph replay, read-modify-write chain, programmatic edges";
/// (c) Instantiate.
pub const INSTANTIATE: &str = "graph instantiate";
/// (c) The same instantiate, the twin's nodes added with `cudaGraphAddNode`.
pub const INSTANTIATE_ADD_NODE: &str = "graph instantiate (twin nodes via cudaGraphAddNode)";
/// (c) The same instantiate, the Rust side calling `cudaGraphInstantiateWithParams` (the crate's
/// call) directly.
pub const INSTANTIATE_RAW: &str = "graph instantiate (Rust side: raw cudaGraphInstantiateWithParams)";
/// (c) The same instantiate, the Rust side calling `cudaGraphInstantiate` (the twin's call)
/// directly.
pub const INSTANTIATE_RAW_PLAIN: &str = "graph instantiate (Rust side: raw cudaGraphInstantiate)";
/// (c) Whole-graph update.
pub const UPDATE: &str = "graph exec update";
/// (c) The same update, the twin's nodes added with `cudaGraphAddNode`.
pub const UPDATE_ADD_NODE: &str = "graph exec update (twin nodes via cudaGraphAddNode)";
/// (c) The same update, the Rust side calling `cudaGraphExecUpdate` directly.
pub const UPDATE_RAW: &str = "graph exec update (Rust side: raw cudaGraphExecUpdate)";
/// (d) The loop driven by the host, the flag copied back.
pub const LOOP_HOST_SYNC: &str = "loop, host sync per step";
/// (d) The loop driven by the host, the flag read in place from mapped memory.
pub const LOOP_HOST_SYNC_MAPPED: &str = "loop, host sync per step, mapped flag";
/// (d) The loop in one graph launch: a WHILE node.
pub const LOOP_WHILE_NODE: &str = "loop, WHILE node";
/// (g) The loop as a kernel that relaunches its own graph.
pub const LOOP_SELF_RELAUNCH: &str = "loop, device self-relaunch";
/// (e) Child launch from the device.
pub const CDP_FROM_DEVICE: &str = "child launch from the device (CDP)";
/// (e) Child launch from the host.
pub const CDP_FROM_HOST: &str = "child launch from the host";
/// (f) Host launch + sync.
pub const HOST_SYNC: &str = "graph launch, host + sync";
/// (f) Device fire-and-forget.
pub const DEVICE_FIRE_AND_FORGET: &str = "graph launch, device fire-and-forget";
/// (f) Device tail launch.
pub const DEVICE_TAIL: &str = "graph launch, device tail";

/// Every operation the bench measures, in the order measured.
pub const ALL: [&str; 23] = [
    STREAM_LAUNCH,
    STREAM_LAUNCH_PROGRAMMATIC,
    GRAPH_REPLAY,
    EMPTY_PLAIN,
    EMPTY_PROGRAMMATIC,
    RMW_PLAIN,
    RMW_PROGRAMMATIC,
    INSTANTIATE,
    INSTANTIATE_ADD_NODE,
    INSTANTIATE_RAW,
    INSTANTIATE_RAW_PLAIN,
    UPDATE,
    UPDATE_ADD_NODE,
    UPDATE_RAW,
    LOOP_HOST_SYNC,
    LOOP_HOST_SYNC_MAPPED,
    LOOP_WHILE_NODE,
    CDP_FROM_DEVICE,
    CDP_FROM_HOST,
    HOST_SYNC,
    DEVICE_FIRE_AND_FORGET,
    DEVICE_TAIL,
    LOOP_SELF_RELAUNCH,
];
