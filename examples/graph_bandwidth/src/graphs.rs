//! The kernels, and the two graphs of one size: a chain of memcpy or memset nodes, each group
//! ending with the counting kernel node, and the check of what a graph holds.

use cuda_graph::graph::{AsNode, Graph, NodeKind};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DeviceBuffer, DevicePtr};

// SAFETY: gb_fill writes `out` only below the word count it is given, and gb_count only
// `counter[0]`; the declarations are private to this crate, whose launches pass counts no
// larger than the buffers they point into and a counter of at least one element.
cuda_graph::kernels! {
    /// Writes word i of `out` (as 32-bit words) as `pattern(i, seed)`, for `i < words`.
    pub(crate) unsafe fn gb_fill(out: DevicePtr<u8>, words: u32, seed: u32);
    /// Adds 1 to `counter[0]` (one thread): counts the groups that ran.
    pub(crate) unsafe fn gb_count(counter: DevicePtr<u32>);
}

/// The launch shape of `gb_count`: one warp, of which one thread counts.
pub(crate) fn count_config() -> LaunchConfig {
    LaunchConfig::new(1, 32)
}

/// A graph of `chain` memcpy nodes `dst <- src`, each after the one before, then the counting
/// kernel node.
pub(crate) fn copy_graph(
    dst: &DeviceBuffer<u8>, src: &DeviceBuffer<u8>, counter: &DeviceBuffer<u32>, chain: u32,
) -> cuda_graph::Result<Graph> {
    counted_chain(counter, chain, |graph, after| graph.add_memcpy(&dst.ptr(), &src.ptr(), dst.len(), after))
}

/// A graph of `chain` memset nodes writing `byte` over all of `dst`, each after the one before,
/// then the counting kernel node.
pub(crate) fn memset_graph(
    dst: &DeviceBuffer<u8>, byte: u8, counter: &DeviceBuffer<u32>, chain: u32,
) -> cuda_graph::Result<Graph> {
    counted_chain(counter, chain, |graph, after| graph.add_memset(&dst.ptr(), byte, dst.len(), after))
}

/// A graph of `chain` nodes that `add` makes (given the node before, none for the first), then
/// the kernel node that counts the group on `counter`.
fn counted_chain<N: AsNode>(
    counter: &DeviceBuffer<u32>, chain: u32, add: impl Fn(&Graph, &[&dyn AsNode]) -> cuda_graph::Result<N>,
) -> cuda_graph::Result<Graph> {
    let graph = Graph::new()?;
    let mut prev: Option<N> = None;
    for _ in 0..chain {
        let after: Vec<&dyn AsNode> = prev.iter().map(|p| p as &dyn AsNode).collect();
        let node = add(&graph, &after)?;
        prev = Some(node);
    }
    let last = prev.expect("chain is at least 1 (validated)");
    graph.add_kernel(gb_count(), count_config(), (counter.ptr(),), &[&last])?;
    Ok(graph)
}

/// Whether `kinds` (a graph's node kinds) are `chain` nodes of `kind` and one kernel node (the
/// counter), and a description of what it holds.
pub(crate) fn nodes_are(kinds: &[NodeKind], kind: NodeKind, chain: u32) -> (bool, String) {
    let of_kind = kinds.iter().filter(|&&k| k == kind).count();
    let kernels = kinds.iter().filter(|&&k| k == NodeKind::Kernel).count();
    let odd =
        kinds.iter().find(|&&k| k != kind && k != NodeKind::Kernel).map(|k| format!(", but a {k} node"));
    let ok = of_kind == chain as usize && kernels == 1 && odd.is_none();
    (ok, format!("{of_kind} {kind} nodes and {kernels} counting kernel node{}", odd.unwrap_or_default()))
}

/// [`nodes_are`] for the nodes of `graph`.
pub(crate) fn graph_nodes_are(
    graph: &Graph, kind: NodeKind, chain: u32,
) -> cuda_graph::Result<(bool, String)> {
    let kinds: Vec<NodeKind> = graph.nodes()?.iter().map(|n| n.kind()).collect();
    Ok(nodes_are(&kinds, kind, chain))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graphs_must_hold_the_chain_and_one_counter() {
        use NodeKind::{Kernel, Memcpy, Memset};
        assert!(nodes_are(&[Memcpy, Memcpy, Kernel], Memcpy, 2).0);
        assert!(nodes_are(&[Memset, Kernel], Memset, 1).0);
        assert!(!nodes_are(&[Memcpy, Memcpy], Memcpy, 2).0, "no counter");
        assert!(!nodes_are(&[Memcpy, Kernel], Memcpy, 2).0, "a copy missing");
        assert!(!nodes_are(&[Memcpy, Memset, Kernel], Memcpy, 1).0, "a node of another kind");
        assert!(!nodes_are(&[Memcpy, Kernel, Kernel], Memcpy, 1).0, "two counters");
        assert_eq!(nodes_are(&[Memcpy, Kernel], Memcpy, 1).1, "1 memcpy nodes and 1 counting kernel node");
    }
}
