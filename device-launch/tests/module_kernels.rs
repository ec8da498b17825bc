//! Kernels loaded at run time from a module image (`cuda_graph::kernel::Module`)
//! inside graphs that kernels launch from the device: validated, uploaded and launched as
//! graphs of linked kernels are.

mod support;

use cuda_graph::graph::Graph;
use cuda_graph::kernel::{Kernel, LaunchConfig, Module};
use cuda_graph::{DeviceBuffer, DevicePtr};
use device_launch::{instantiate_for_device, ErrorSlot, Launcher};
use device_launch_kernels::dl_fire_and_forget_all;
use gpu_test_support::require_gpu;
use support::{one, run, stream, table};

#[test]
fn device_launched_graphs_run_module_kernels() {
    require_gpu!();
    run(|| {
        const N: u32 = 8;
        const LEN: u32 = 64;
        let stream = stream()?;
        // SAFETY: the fatbin cuda_build::ImageBuild wrote in module-images' build.rs, unchanged.
        let module = unsafe { Module::from_image(module_images::PLAIN_FATBIN) }?;
        // SAFETY: mod_add writes data[i] only for i < n; each graph passes n = LEN inside
        // its own LEN-element part of `data`.
        let add: Kernel<(DevicePtr<u32>, u32, u32)> = unsafe { module.kernel("mod_add") }?;
        let data = DeviceBuffer::<u32>::zeroed((N * LEN) as usize)?;
        let execs = (0..N)
            .map(|graph_index| {
                let graph = Graph::new()?;
                let part = data.ptr().offset((graph_index * LEN) as usize)?;
                graph.add_kernel(
                    &add,
                    LaunchConfig::for_elements(LEN, 64),
                    (part, LEN, graph_index + 1),
                    &[],
                )?;
                instantiate_for_device(&graph)?.upload(&stream)
            })
            .collect::<Result<Vec<_>, _>>()?;
        drop((add, module)); // the execs keep the module loaded
        let table = table(&execs)?;
        let (slot, accepted) = (ErrorSlot::new()?, DeviceBuffer::<u32>::zeroed(1)?);
        let launcher =
            Launcher::new(dl_fire_and_forget_all(), one(), (table.arg(), N, accepted.ptr(), slot.ptr()))?;
        launcher.run(&stream, &slot)?;
        launcher.run(&stream, &slot)?;
        assert_eq!(accepted.to_vec()?, [N]);
        let expected: Vec<u32> = (0..N * LEN).map(|i| 2 * (i / LEN + 1)).collect();
        assert_eq!(data.to_vec()?, expected);
        Ok(())
    });
}
