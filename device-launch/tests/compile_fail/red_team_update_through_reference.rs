// An uploaded exec is updated or edited only by value: not through `&mut` (which would leave
// the caller's value in place after it went back to not uploaded), nor through `&`.
use cuda_graph::graph::Graph;
use device_launch::{DeviceExec, Uploaded};

fn update_in_place(exec: &mut DeviceExec<Uploaded>, graph: &Graph) {
    let _ = exec.update(graph);
}

fn edit_shared(exec: &DeviceExec<Uploaded>) {
    let _ = exec.edit();
}

fn main() {
    let _ = (update_in_place, edit_shared);
}
