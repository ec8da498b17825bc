//! The upload typestate at run time: update refuses while kernel arguments of the exec are
//! alive (and gives the exec back), goes back to not uploaded otherwise, and an edited or
//! updated exec launched from the device after re-upload uses its new parameters.

mod support;

use cuda_graph::graph::{DeviceLaunch, Graph, MemsetNode};
use cuda_graph::{CudaError, DeviceBuffer, Stream, UpdateRefusal};
use device_launch::{
    instantiate_for_device, DeviceExec, Error, ErrorSlot, ExecState, Launcher, NotUploaded, Uploaded,
};
use device_launch_kernels::dl_fire_and_forget_one;
use gpu_test_support::require_gpu;
use support::{one, run, stream};

/// A device graph that fills `data` with `value`.
fn fill(data: &DeviceBuffer<u32>, value: u32) -> Result<(Graph, MemsetNode), Error> {
    let graph = Graph::new()?;
    let node = graph.add_memset(&data.ptr(), value, data.len(), &[])?;
    Ok((graph, node))
}

/// Launches `exec` from the device (fire-and-forget from a launcher graph) and waits.
fn launch_from_device(exec: &DeviceExec<Uploaded>, stream: &Stream) -> Result<(), Error> {
    let slot = ErrorSlot::new()?;
    Launcher::new(dl_fire_and_forget_one(), one(), (exec.handle().arg(), slot.ptr()))?.run(stream, &slot)
}

#[test]
fn update_is_refused_while_a_kernel_argument_holds_the_exec_and_works_after() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let data = DeviceBuffer::<u32>::zeroed(8)?;
        let uploaded = instantiate_for_device(&fill(&data, 1)?.0)?.upload(&stream)?;
        let slot = ErrorSlot::new()?;
        let launcher = Launcher::new(dl_fire_and_forget_one(), one(), (uploaded.handle().arg(), slot.ptr()))?;
        launcher.run(&stream, &slot)?;
        assert_eq!(data.to_vec()?, [1; 8]);
        assert_eq!(uploaded.holders(), 1);

        let (changed, _) = fill(&data, 2)?;
        let refused = uploaded.update(&changed).unwrap_err();
        assert_eq!(refused.error, Error::HandlesOutstanding { holders: 1 });
        assert!(
            refused.to_string().contains("cannot update a device graph while 1 kernel argument"),
            "{refused}"
        );
        let ExecState::Uploaded(uploaded) = refused.exec else { panic!("the exec must come back unchanged") };

        drop(launcher); // the node holding the argument goes with its graph
        assert_eq!(uploaded.holders(), 0);
        let uploaded = uploaded.update(&changed)?.upload(&stream)?;
        launch_from_device(&uploaded, &stream)?;
        assert_eq!(data.to_vec()?, [2; 8]);
        Ok(())
    });
}

#[test]
fn an_update_cuda_refuses_gives_the_exec_back_not_uploaded() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let data = DeviceBuffer::<u32>::zeroed(8)?;
        let uploaded = instantiate_for_device(&fill(&data, 1)?.0)?.upload(&stream)?;
        let (bigger, first) = fill(&data, 3)?;
        bigger.add_memset(&data.ptr(), 4u32, 8, &[&first])?;
        let refused = uploaded.update(&bigger).unwrap_err();
        assert!(
            matches!(
                refused.error,
                Error::Cuda(CudaError::UpdateRefused { reason: UpdateRefusal::TopologyChanged, .. })
            ),
            "{:?}",
            refused.error
        );
        let ExecState::NotUploaded(exec) = refused.exec else { panic!("CUDA may have changed nodes") };
        let uploaded = exec.upload(&stream)?;
        launch_from_device(&uploaded, &stream)?;
        // CUDA documents no partial update for a topology change; either value is a memset
        // of the whole buffer.
        let values = data.to_vec()?;
        assert!(values == [1; 8] || values == [3; 8], "{values:?}");
        Ok(())
    });
}

#[test]
fn an_update_to_a_graph_that_fails_validation_leaves_the_exec_uploaded() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let data = DeviceBuffer::<u32>::zeroed(8)?;
        let uploaded = instantiate_for_device(&fill(&data, 1)?.0)?.upload(&stream)?;
        let graph = Graph::new()?;
        graph.add_host(|| {}, &[])?;
        let refused = uploaded.update(&graph).unwrap_err();
        assert!(matches!(refused.error, Error::UnsupportedNode { index: 0, .. }), "{refused}");
        assert!(matches!(refused.exec, ExecState::Uploaded(_)));
        Ok(())
    });
}

#[test]
fn an_edited_exec_uses_its_new_node_parameters_after_upload() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let data = DeviceBuffer::<u32>::zeroed(8)?;
        let (graph, node) = fill(&data, 1)?;
        // From a cuda-graph exec instantiated for device launch, too.
        let exec = DeviceExec::<NotUploaded>::from(graph.instantiate::<DeviceLaunch>(Default::default())?);
        let uploaded = exec.upload(&stream)?;
        launch_from_device(&uploaded, &stream)?;
        assert_eq!(data.to_vec()?, [1; 8]);
        let mut exec = uploaded.edit()?;
        exec.set_memset(&node, &data.ptr(), 9u32, 8)?;
        let uploaded = exec.upload(&stream)?;
        launch_from_device(&uploaded, &stream)?;
        assert_eq!(data.to_vec()?, [9; 8]);
        Ok(())
    });
}

#[test]
fn an_exec_dropped_inside_a_host_function_waits_for_the_device_elsewhere() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let data = DeviceBuffer::<u32>::zeroed(8)?;
        let uploaded = instantiate_for_device(&fill(&data, 3)?.0)?.upload(&stream)?;
        launch_from_device(&uploaded, &stream)?; // its handle went to a kernel
        assert_eq!(data.to_vec()?, [3; 8]);
        let parked_before = cuda_graph::graph::exec_pool_stats().parked_total;
        // The exec's last owner is dropped inside the host function, where its wait for the
        // device (cudaDeviceSynchronize) is not allowed: it must happen on another thread.
        stream.launch_host_fn(move || drop(uploaded))?;
        stream.synchronize()?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while cuda_graph::graph::exec_pool_stats().parked_total == parked_before {
            assert!(std::time::Instant::now() < deadline, "the exec was never released");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let errors: Vec<String> =
            cuda_graph::take_unreported_errors().iter().map(ToString::to_string).collect();
        assert!(
            !errors.iter().any(|e| e.contains("cudaDeviceSynchronize")),
            "the wait ran inside the host function: {errors:?}"
        );
        assert!(cuda_graph::take_unreported_errors().is_empty());
        Ok(())
    });
}

/// What the red team of the renamed typestate found (SOUNDNESS.md, "The red team of
/// device-launch's renamed typestate"): `edit` (and `update`, through it) waits for the device
/// launches kernels may still make of the exec; when that wait fails (inside a host function
/// every CUDA call is refused), the exec must come back uploaded and unchanged, not as a
/// not-uploaded exec safe code could change under a pending device launch.
#[test]
fn an_edit_whose_wait_fails_gives_the_exec_back_uploaded() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let data = DeviceBuffer::<u32>::zeroed(8)?;
        let uploaded = instantiate_for_device(&fill(&data, 4)?.0)?.upload(&stream)?;
        launch_from_device(&uploaded, &stream)?; // its handle went to a kernel
        let (send, receive) = std::sync::mpsc::channel();
        stream.launch_host_fn(move || {
            let outcome = match uploaded.edit() {
                Ok(_) => "edited inside the host function".to_string(),
                Err(err) => match err.exec {
                    ExecState::Uploaded(_) => "given back uploaded".to_string(),
                    ExecState::NotUploaded(_) => format!("given back not uploaded: {}", err.error),
                },
            };
            send.send(outcome).expect("the test waits for the outcome");
        })?;
        stream.synchronize()?;
        let outcome =
            receive.recv_timeout(std::time::Duration::from_secs(30)).expect("the host function ran");
        assert_eq!(outcome, "given back uploaded");
        Ok(())
    });
}
