// The states, handles and arguments cannot be built field by field (which would make an
// uploaded exec, a handle or an argument without `instantiate_for_device` and `upload`).
#![allow(unreachable_code, unused_variables)]
use std::marker::PhantomData;
use device_launch::{DeviceExec, DeviceExecArg, DeviceExecHandle, Uploaded};

fn main() {
    let _uploaded = DeviceExec::<Uploaded> { owner: todo!(), state: PhantomData };
    let _handle = DeviceExecHandle { owner: todo!() };
    let _arg = DeviceExecArg { owner: todo!() };
}
