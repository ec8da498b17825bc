//! SOUNDNESS.md, "Things of other code", item 5: every way of adding or setting a kernel node keeps
//! a run-time module's library loaded with the graph and its execs. `add_kernel_with` (attributes,
//! programmatic edges) did not: a module kernel added with it, kernel and module dropped, gave a
//! node naming a function of an unloaded library (CUDA answered `cudaErrorInvalidValue` at
//! instantiation; with the library's memory reused it need not).

mod graph_support;

use cuda_graph::graph::{Dependency, Graph, HostLaunch};
use cuda_graph::kernel::{Kernel, KernelAttributes, LaunchConfig, Module};
use cuda_graph::{take_unreported_errors, DeviceBuffer, DevicePtr};
use gpu_test_support::require_gpu;
use graph_support::{run, sm90_or_skip, stream};
use module_images::PLAIN_PTX;

const N: u32 = 1000;

fn add_kernel() -> cuda_graph::Result<Kernel<(DevicePtr<u32>, u32, u32)>> {
    let module = Module::from_ptx(PLAIN_PTX)?;
    // SAFETY: mod_add writes data[i] only for i < n; the tests pass n = data.len().
    unsafe { module.kernel("mod_add") }
    // `module` is dropped here: only the kernel (and what it is given to) keeps the library.
}

#[test]
fn kernel_nodes_keep_their_module_loaded_however_they_are_added() {
    require_gpu!();
    run(|| {
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let graph = Graph::new()?;
        let config = LaunchConfig::for_elements(N, 128);
        let plain = {
            let add = add_kernel()?;
            graph.add_kernel(&add, config, (data.ptr(), N, 1), &[])?
        };
        {
            let add = add_kernel()?;
            graph.add_kernel_with(
                &add,
                config,
                (data.ptr(), N, 10),
                &KernelAttributes::default(),
                &[Dependency::full(&plain)],
            )?;
        }
        // Both kernels and both modules are gone: the graph alone keeps the libraries.
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        drop(graph);
        let stream = stream()?;
        exec.launch(&stream)?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(data.to_vec()?, vec![22; N as usize]);
        drop(exec);
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}

#[test]
fn a_module_kernel_behind_a_programmatic_edge_with_attributes_keeps_its_module_loaded() {
    require_gpu!();
    run(|| {
        if !sm90_or_skip("a programmatic edge")? {
            return Ok(());
        }
        let (first, second) =
            (DeviceBuffer::<u32>::zeroed(N as usize)?, DeviceBuffer::<u32>::zeroed(N as usize)?);
        let graph = Graph::new()?;
        let config = LaunchConfig::for_elements(N, 128);
        let before = graph.add_kernel(&add_kernel()?, config, (first.ptr(), N, 1), &[])?;
        // The two kernels touch different buffers: the programmatic edge needs no wait in them.
        let attributes = KernelAttributes { priority: Some(0), ..Default::default() };
        graph.add_kernel_with(
            &add_kernel()?,
            config,
            (second.ptr(), N, 10),
            &attributes,
            &[Dependency::programmatic(&before)],
        )?;
        // Both kernels and their modules are gone before instantiation.
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        drop(graph);
        let stream = stream()?;
        for _ in 0..3 {
            exec.launch(&stream)?;
        }
        stream.synchronize()?;
        assert_eq!(first.to_vec()?, vec![3; N as usize]);
        assert_eq!(second.to_vec()?, vec![30; N as usize]);
        drop(exec);
        assert_eq!(take_unreported_errors(), []);
        Ok(())
    });
}
