// The only other way to hand kernels an exec, a `KernelParam` of one's own wrapping a
// not-uploaded exec, needs `unsafe impl` (whose promise it would break).
use cuda_graph::{KernelParam, KeepAlive};
use device_launch::{DeviceExec, NotUploaded};

struct NotUploadedArg(DeviceExec<NotUploaded>);

impl KernelParam for NotUploadedArg {
    type Raw = u64;
    fn raw(&self) -> u64 {
        0
    }
    fn cpp_type() -> String {
        "*mut CUgraphExec_st".into()
    }
    fn keep_alive(&self, _owners: &mut Vec<KeepAlive>) {}
}

fn main() {}
