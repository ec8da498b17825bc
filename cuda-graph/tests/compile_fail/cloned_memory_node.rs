// CUDA clones no graph with memory alloc or free nodes (nor conditional nodes), so no such
// node has a copy in a clone: mapping one is a type error, not a runtime refusal.
use cuda_graph::graph::Graph;

fn main() -> cuda_graph::Result<()> {
    let graph = Graph::new()?;
    let alloc = graph.add_mem_alloc::<u32>(16, &[])?;
    let clone = graph.clone_graph()?;
    let _copy = clone.cloned_node(&graph, &alloc)?;
    Ok(())
}
