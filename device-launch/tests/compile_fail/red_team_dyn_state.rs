// No state can be erased into a trait object: `dyn Launchable` (which would implement
// `Launchable` by itself) is not a type, as the sealing trait carries a constant.
use device_launch::{DeviceExec, Launchable};

fn handle_of(exec: &DeviceExec<dyn Launchable>) {
    let _ = exec.handle();
}

fn main() {
    let _ = handle_of;
}
