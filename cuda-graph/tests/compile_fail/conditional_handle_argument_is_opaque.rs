// The kernel-argument form of a conditional handle is opaque: it is not a `u64` that safe
// code could pass to another graph's kernel or a stream launch.
use cuda_graph::graph::Graph;
use cuda_graph::KernelParam;

fn main() -> cuda_graph::Result<()> {
    let graph = Graph::new()?;
    let handle = graph.conditional_handle(Some(1))?;
    let raw: u64 = KernelParam::raw(&handle);
    println!("{raw}");
    Ok(())
}
