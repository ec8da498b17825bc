// A conditional handle is tied to its graph: safe code cannot take its raw value.
use cuda_graph::graph::Graph;

fn main() -> cuda_graph::Result<()> {
    let graph = Graph::new()?;
    let handle = graph.conditional_handle(Some(1))?;
    let raw: u64 = handle.as_raw();
    println!("{raw}");
    Ok(())
}
