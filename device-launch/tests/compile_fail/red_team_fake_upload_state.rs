// `UploadState` is sealed: a state of one's own cannot be made launchable, so
// `DeviceExec<Fake>` never exists and no `handle` comes from a third state.
use device_launch::{DeviceExec, Launchable, UploadState};

enum Fake {}
impl UploadState for Fake {}
impl Launchable for Fake {}

fn handle_of(exec: &DeviceExec<Fake>) {
    let _ = exec.handle();
}

fn main() {
    let _ = handle_of;
}
