//! What a device-launched graph may hold, and the words for what it may not: the policy
//! ([`allowed`], [`PROGRAMMATIC_EDGES_ALLOWED`], [`CHILD_GRAPH_NODES_ALLOWED`]) and the reason
//! each refused kind is given ([`refusal`]), in one place. `validate` applies it node by node;
//! [`Error::UnsupportedNode`](crate::Error::UnsupportedNode) prints it. The measurements behind
//! each rule: ARCHITECTURE.md, "What a device-launched graph may hold", pinned by
//! `tests/validate.rs`.

use cuda_graph::graph::{DeviceLaunchRule, NodeKind};

/// Whether [`validate`](crate::validate) accepts programmatic and launch-completion edges
/// between kernel nodes: `true`, as measured on CUDA 13.0 (ARCHITECTURE.md, "What a
/// device-launched graph may hold"). When it is `false` (a driver that refuses them), the first
/// kernel node with such a dependency is [`Error::UnsupportedEdge`](crate::Error::UnsupportedEdge).
///
/// ```
/// assert!(device_launch::PROGRAMMATIC_EDGES_ALLOWED);
/// ```
pub const PROGRAMMATIC_EDGES_ALLOWED: bool = true;

/// Whether [`validate`](crate::validate) accepts child-graph nodes whose own nodes it would
/// accept (checked inside, to any depth): `true`, as measured on CUDA 13.0 (ARCHITECTURE.md,
/// "What a device-launched graph may hold"). When it is `false` (a driver that refuses them),
/// every child-graph node is refused.
///
/// ```
/// assert!(device_launch::CHILD_GRAPH_NODES_ALLOWED);
/// ```
pub const CHILD_GRAPH_NODES_ALLOWED: bool = true;

/// The node kinds a device-launch graph may contain (ARCHITECTURE.md, "What a device-launched
/// graph may hold"): each kind's own answer ([`NodeKind::device_launch`], from the kind's file
/// in `cuda-graph`), child graphs only when [`CHILD_GRAPH_NODES_ALLOWED`].
pub(crate) fn allowed(kind: NodeKind) -> bool {
    match kind {
        NodeKind::ChildGraph => CHILD_GRAPH_NODES_ALLOWED,
        other => other.device_launch() == DeviceLaunchRule::Allowed,
    }
}

/// "a host node", "an empty node", "a batch memory operation node", …
pub(crate) fn describe(kind: NodeKind) -> String {
    let name = kind.to_string();
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    format!("{article} {name} node")
}

/// Why a node kind is refused: the kind's own reason ([`NodeKind::device_launch`]), measured
/// where measured (ARCHITECTURE.md, "What a device-launched graph may hold"; pinned by
/// `tests/validate.rs`), documented otherwise; and this crate's for child graphs.
pub(crate) fn refusal(kind: NodeKind) -> &'static str {
    match (kind, kind.device_launch()) {
        (NodeKind::ChildGraph, _) => {
            "the CUDA 13.0 header allows child graphs in device-launched graphs, but this crate refuses them \
             until device-launch/repro/child_graph_device_launch.cu shows a child's kernel running from the \
             device (CHILD_GRAPH_NODES_ALLOWED): add the child's nodes to this graph instead"
        }
        (_, DeviceLaunchRule::Refused(reason)) => reason,
        _ => "a node kind this crate does not know, so it cannot vouch for it",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_kernel_memcpy_and_memset_nodes_are_allowed() {
        let allowed_kinds: Vec<u32> = (0..16).filter(|&raw| allowed(NodeKind::from_code(raw))).collect();
        // 4 is cudaGraphNodeTypeGraph (a child graph).
        let expected: &[u32] = if CHILD_GRAPH_NODES_ALLOWED { &[0, 1, 2, 4] } else { &[0, 1, 2] };
        assert_eq!(allowed_kinds, expected);
    }
}
