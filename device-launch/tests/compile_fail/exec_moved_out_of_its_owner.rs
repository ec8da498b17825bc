// A not-uploaded exec cannot be moved out of its owner: `mem::replace` on the inner
// `GraphExec` would leave kernels the handle of an exec parked for reuse or destroyed.
// There is no `exec_mut` (nor any `&mut GraphExec`): per-node setters are forwarded instead.
use cuda_graph::graph::{DeviceLaunch, Graph};

fn main() -> Result<(), device_launch::Error> {
    let graph = Graph::new()?;
    let mut exec = device_launch::instantiate_for_device(&graph)?;
    let other = graph.instantiate::<DeviceLaunch>(Default::default())?;
    let old = std::mem::replace(exec.exec_mut(), other);
    drop(old);
    Ok(())
}
