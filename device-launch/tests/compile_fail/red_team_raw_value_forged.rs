// The opaque kernel value of a `DeviceExecArg` cannot be forged from a number either.
use device_launch::RawDeviceExec;

fn main() {
    let _raw = RawDeviceExec(0x1000);
}
