//! A downstream user's scheduler on the published crates: a graph instantiated for device
//! launch, uploaded, and fire-and-forgotten from the user's own scheduler kernel, which runs
//! inside a launcher graph; device-side failures come back through an `ErrorSlot`.

use cuda_graph::graph::Graph;
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DeviceBuffer, DevicePtr, Stream};
use device_launch::{instantiate_for_device, DeviceExecArg, ErrorSlot, Launcher, RawErrorSlot};

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu). They trust those counts: this unpublished crate serves the workspace's
// tests, which pass counts no larger than the buffers.
cuda_graph::kernels! {
    /// `data[i] += value`.
    pub unsafe fn downstream_add(data: DevicePtr<u32>, n: u32, value: u32);
    /// Fire-and-forgets `work`, counting accepted launches in `launched`.
    pub unsafe fn downstream_scheduler(work: DeviceExecArg, launched: DevicePtr<u32>, slot: DevicePtr<RawErrorSlot>);
}

/// What one run observed.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Device-side launches the scheduler made.
    pub launched: u32,
    /// Elements of the data the device-launched graph changed as expected.
    pub updated: usize,
    /// Elements in all.
    pub elements: usize,
}

/// Builds the work graph, instantiates it for device launch, uploads it, and launches it
/// `rounds` times from the scheduler kernel.
pub fn run(rounds: u32) -> Result<Outcome, device_launch::Error> {
    let n = 1u32 << 14;
    let start: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761) >> 7).collect();
    let data = DeviceBuffer::from_slice(&start)?;
    let stream = Stream::new()?;

    let work = Graph::new()?;
    work.add_kernel(downstream_add(), LaunchConfig::for_elements(n, 256), (data.ptr(), n, 3), &[])?;
    let work = instantiate_for_device(&work)?.upload(&stream)?;

    let launched = DeviceBuffer::<u32>::zeroed(1)?;
    let slot = ErrorSlot::new()?;
    let launcher = Launcher::new(
        downstream_scheduler(),
        LaunchConfig::new(1, 32),
        (work.handle().arg(), launched.ptr(), slot.ptr()),
    )?;
    for _ in 0..rounds {
        launcher.run(&stream, &slot)?;
    }
    let end = data.to_vec()?;
    let updated = start.iter().zip(&end).filter(|(s, e)| s.wrapping_add(3 * rounds) == **e).count();
    Ok(Outcome { launched: launched.to_vec()?[0], updated, elements: n as usize })
}

/// True when a CUDA device is usable; `Err` describes why not.
pub fn device_present() -> Result<(), String> {
    match cuda_graph::Device::count() {
        Ok(count) if count > 0 => Ok(()),
        // None (no GPU, no driver): `get` returns CUDA's reason.
        Ok(_) => match cuda_graph::Device::get(0) {
            Err(err) => Err(format!("no CUDA device ({err})")),
            Ok(_) => Err("no CUDA device".into()),
        },
        Err(err) if err.is_no_device() => Err(format!("no CUDA device ({err})")),
        Err(err) => panic!("the CUDA device is present but broken: {err}"),
    }
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    #[test]
    fn match_the_cpp_parameter_types() {
        for (name, outcome) in [
            ("downstream_add", super::downstream_add().check_types()),
            ("downstream_scheduler", super::downstream_scheduler().check_types()),
        ] {
            assert_eq!(outcome, Ok(()), "{name}");
        }
    }
}
