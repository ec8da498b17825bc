// No `Default` builds a state, a handle or an argument without an instantiated, uploaded exec.
use device_launch::{DeviceExec, DeviceExecArg, DeviceExecHandle, DeviceExecTable, NotUploaded, Uploaded};

fn main() {
    let _uploaded = DeviceExec::<Uploaded>::default();
    let _not_uploaded: DeviceExec<NotUploaded> = Default::default();
    let _handle = DeviceExecHandle::default();
    let _arg = DeviceExecArg::default();
    let _table = DeviceExecTable::default();
}
