//! Launch attributes on a real GPU: clusters take effect on stream launches and
//! kernel nodes (the kernel reports its cluster size), cooperative grids meet at a grid-wide
//! barrier, node
//! attributes read back through CUDA, events recorded by launches complete, and what the
//! device cannot do is refused before CUDA is called.

mod graph_support;

use std::sync::Arc;

use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::kernel::{
    Dim3, KernelAttributes, LaunchAttributes, LaunchConfig, MemSyncDomain, MemSyncDomainMap,
    ProgrammaticEvent,
};
use cuda_graph::refusal::{AttributeRefusal, Unsupported};
use cuda_graph::{sys, CudaError, Device, DeviceBuffer, Event, EventOptions, Refusal, Stream};
use gpu_test_support::require_gpu;
use graph_support::{one, run, sm90_or_skip, stream};
use test_kernels::{cluster_blocks, grid_sync_sum, increment_counter, pdl_append};

fn cluster(x: u32) -> KernelAttributes {
    KernelAttributes { cluster: Some(Dim3::from(x)), ..Default::default() }
}

/// One attribute of a kernel node, read back through the raw API (the safe API sets them).
fn node_attribute(
    node: &dyn cuda_graph::graph::AsNode, id: sys::cudaLaunchAttributeID,
) -> sys::cudaLaunchAttributeValue {
    let mut value = sys::cudaLaunchAttributeValue { pad: [0; 64] };
    // SAFETY: the node is a live kernel node of a graph the caller holds; `value` is writable.
    let status = unsafe { sys::cudaGraphKernelNodeGetAttribute(node.as_node().as_raw(), id, &mut value) };
    assert_eq!(status, sys::cudaError::cudaSuccess, "cudaGraphKernelNodeGetAttribute");
    value
}

#[test]
fn clusters_group_blocks_on_stream_launches_and_kernel_nodes() {
    require_gpu!();
    run(|| {
        if !sm90_or_skip("clusters")? {
            return Ok(());
        }
        let stream = stream()?;
        let out = DeviceBuffer::<u32>::zeroed(8)?;
        let config = LaunchConfig::new(8, 32);
        let attributes = LaunchAttributes { kernel: cluster(2), ..Default::default() };
        cluster_blocks().launch_with(&stream, config, &attributes, (out.slice(),))?;
        stream.synchronize()?;
        assert_eq!(out.to_vec()?, [2; 8]);
        cluster_blocks().launch(&stream, config, (out.slice(),))?;
        stream.synchronize()?;
        assert_eq!(out.to_vec()?, [1; 8], "without the attribute, no clusters");

        let graph = Graph::new()?;
        let node = graph.add_kernel_with(cluster_blocks(), config, (out.slice(),), &cluster(4), &[])?;
        // SAFETY: the cluster attribute's value is the `clusterDim` member.
        let dims = unsafe {
            node_attribute(&node, sys::cudaLaunchAttributeID::cudaLaunchAttributeClusterDimension).clusterDim
        };
        assert_eq!((dims.x, dims.y, dims.z), (4, 1, 1));
        graph.instantiate::<HostLaunch>(Default::default())?.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(out.to_vec()?, [4; 8]);
        Ok(())
    });
}

#[test]
fn cooperative_grids_meet_at_a_grid_wide_barrier() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let out = DeviceBuffer::<u32>::zeroed(5)?;
        let cooperative = KernelAttributes { cooperative: true, ..Default::default() };
        let config = LaunchConfig::new(4, 64);
        let attributes = LaunchAttributes { kernel: cooperative.clone(), ..Default::default() };
        grid_sync_sum().launch_with(&stream, config, &attributes, (out.slice(),))?;
        stream.synchronize()?;
        assert_eq!(out.to_vec()?, [1, 2, 3, 4, 10]);

        let again = DeviceBuffer::<u32>::zeroed(5)?;
        let graph = Graph::new()?;
        let node = graph.add_kernel_with(grid_sync_sum(), config, (again.slice(),), &cooperative, &[])?;
        // SAFETY: the cooperative attribute's value is the `cooperative` member.
        let set = unsafe {
            node_attribute(&node, sys::cudaLaunchAttributeID::cudaLaunchAttributeCooperative).cooperative
        };
        assert_eq!(set, 1);
        graph.instantiate::<HostLaunch>(Default::default())?.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(again.to_vec()?, [1, 2, 3, 4, 10]);
        Ok(())
    });
}

#[test]
fn priority_and_memory_sync_domains_are_set_on_kernel_nodes() {
    require_gpu!();
    run(|| {
        let (_least, greatest) = Stream::priority_range()?;
        let domains = Device::current()?.attribute_raw(sys::cudaDeviceAttr::cudaDevAttrMemSyncDomainCount)?;
        let log = DeviceBuffer::<u32>::zeroed(4)?;
        let attributes = KernelAttributes {
            priority: Some(greatest),
            mem_sync_domain: Some(MemSyncDomain::Remote),
            mem_sync_domain_map: (domains >= 2).then_some(MemSyncDomainMap { default: 0, remote: 1 }),
            ..Default::default()
        };
        let graph = Graph::new()?;
        let node = graph.add_kernel_with(pdl_append(), one(), (log.slice(), 7), &attributes, &[])?;
        use sys::cudaLaunchAttributeID as Id;
        // SAFETY: the priority attribute's value is the `priority` member.
        let priority = unsafe { node_attribute(&node, Id::cudaLaunchAttributePriority).priority };
        assert_eq!(priority, greatest);
        // SAFETY: the memory sync domain attribute's value is the `memSyncDomain` member.
        let domain = unsafe { node_attribute(&node, Id::cudaLaunchAttributeMemSyncDomain).memSyncDomain };
        assert_eq!(domain, sys::cudaLaunchMemSyncDomain::cudaLaunchMemSyncDomainRemote);
        let stream = stream()?;
        graph.instantiate::<HostLaunch>(Default::default())?.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(log.to_vec()?, [1, 7, 0, 0]);
        Ok(())
    });
}

#[test]
fn events_recorded_by_launch_attributes_complete() {
    require_gpu!();
    run(|| {
        if !sm90_or_skip("programmatic events")? {
            return Ok(());
        }
        let stream = stream()?;
        let counters = DeviceBuffer::<u32>::zeroed(1)?;
        let untimed =
            || Event::with_options(EventOptions { timing: false, ..Default::default() }).map(Arc::new);
        let (programmatic, started) = (untimed()?, untimed()?);
        let attributes = LaunchAttributes {
            programmatic_event: Some(ProgrammaticEvent {
                event: programmatic.clone(),
                trigger_at_block_start: false,
            }),
            launch_completion_event: Some(started.clone()),
            ..Default::default()
        };
        increment_counter().launch_with(&stream, one(), &attributes, (counters.ptr(), 0))?;
        // Another stream waits for the programmatic event, then counts too.
        let other = graph_support::stream()?;
        other.wait_event(&programmatic)?;
        increment_counter().launch(&other, one(), (counters.ptr(), 0))?;
        other.synchronize()?;
        stream.synchronize()?;
        assert!(programmatic.is_complete()? && started.is_complete()?);
        assert_eq!(counters.to_vec()?, [2], "both kernels ran");
        Ok(())
    });
}

#[test]
fn what_the_device_cannot_do_is_refused_before_cuda() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let out = DeviceBuffer::<u32>::zeroed(8)?;
        let launch = |attributes: LaunchAttributes, config: LaunchConfig| {
            cluster_blocks().launch_with(&stream, config, &attributes, (out.slice(),)).unwrap_err()
        };
        let reason = |err: &CudaError| err.refusal().cloned();
        let err =
            launch(LaunchAttributes { kernel: cluster(3), ..Default::default() }, LaunchConfig::new(8, 32));
        if Device::current()?.properties()?.major >= 9 {
            let three = (3, 1, 1);
            assert!(
                matches!(
                    reason(&err),
                    Some(Refusal::Attribute(AttributeRefusal::DoesNotDivideGrid { what: "cluster", part, .. }))
                        if part == three
                ),
                "{err}"
            );
            assert!(
                err.to_string().contains("cluster Dim3 { x: 3, y: 1, z: 1 } does not divide the grid"),
                "{err}"
            );
        } else {
            assert!(
                matches!(reason(&err), Some(Refusal::Unsupported(Unsupported::ClusterLaunch { .. }))),
                "{err}"
            );
        }
        let huge = LaunchConfig::new(1 << 20, 1024);
        let cooperative = KernelAttributes { cooperative: true, ..Default::default() };
        let err = launch(LaunchAttributes { kernel: cooperative.clone(), ..Default::default() }, huge);
        let too_large = |reason: Option<Refusal>| {
            matches!(reason, Some(Refusal::Attribute(AttributeRefusal::CooperativeGridTooLarge { .. })))
        };
        assert!(too_large(reason(&err)), "{err}");
        let (least, _) = Stream::priority_range()?;
        let low = KernelAttributes { priority: Some(least + 1), ..Default::default() };
        let err = launch(LaunchAttributes { kernel: low, ..Default::default() }, LaunchConfig::new(1, 1));
        assert!(
            matches!(reason(&err), Some(Refusal::Attribute(AttributeRefusal::PriorityOutOfRange { .. }))),
            "{err}"
        );
        let timed = Arc::new(Event::new()?);
        let err = launch(
            LaunchAttributes { launch_completion_event: Some(timed), ..Default::default() },
            LaunchConfig::new(1, 1),
        );
        assert!(
            matches!(
                reason(&err),
                Some(Refusal::Attribute(AttributeRefusal::TimedEvent { event: "launch completion" }))
            ),
            "{err}"
        );
        // The same checks guard kernel nodes, and a refused node is not added.
        let graph = Graph::new()?;
        let err =
            graph.add_kernel_with(cluster_blocks(), huge, (out.slice(),), &cooperative, &[]).unwrap_err();
        assert!(too_large(reason(&err)), "{err}");
        assert_eq!(graph.node_count()?, 0);
        stream.synchronize()?;
        assert_eq!(out.to_vec()?, [0; 8], "no refused launch ran");
        Ok(())
    });
}
