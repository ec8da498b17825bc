//! Conditional nodes on a real GPU: for many condition values, how often each body ran
//! (counted on the device) equals what a CPU model of IF, IF/ELSE, WHILE, SWITCH and a nested
//! IF inside a WHILE says; handles are refused outside their graph.

mod graph_support;

use cuda_graph::graph::{CaptureMode, ConditionalHandle, ConditionalKind, Graph, HostLaunch};
use cuda_graph::refusal::ConditionalRefusal;
use cuda_graph::{CudaError, DeviceBuffer, DevicePtr, Refusal};
use gpu_test_support::require_gpu;
use graph_support::{one, run, stream};
use test_kernels::{increment_counter, set_condition_from, while_step};

/// `set_condition_from` declared with the handle's own type instead of `u64`.
mod typed {
    use cuda_graph::graph::ConditionalHandle;
    use cuda_graph::DevicePtr;
    cuda_graph::kernels! {
        // SAFETY: set_condition_from reads value[0] only; the tests pass one-element or
        // larger buffers.
        pub unsafe fn set_condition_from(handle: ConditionalHandle, value: DevicePtr<u32>);
    }
}

/// Runs `exec` once per value (written to `value` first) and checks `counters` against
/// `model(value, &mut expected)` after every launch.
fn check_against_model(
    graph: &Graph, value: &mut DeviceBuffer<u32>, counters: &DeviceBuffer<u32>, values: &[u32],
    model: impl Fn(u32, &mut [u32]),
) -> Result<(), CudaError> {
    let exec = graph.instantiate::<HostLaunch>(Default::default())?;
    let stream = stream()?;
    let mut expected = vec![0u32; counters.len()];
    for &v in values {
        value.copy_from_host(&[v])?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        model(v, &mut expected);
        assert_eq!(counters.to_vec()?, expected, "after condition value {v}");
    }
    Ok(())
}

#[test]
fn if_runs_its_body_exactly_when_the_value_from_device_memory_is_nonzero() {
    require_gpu!();
    run(|| {
        let (mut value, counters) = (DeviceBuffer::<u32>::zeroed(1)?, DeviceBuffer::<u32>::zeroed(1)?);
        let graph = Graph::new()?;
        let handle = graph.conditional_handle(None)?;
        let set = graph.add_kernel(typed::set_condition_from(), one(), (handle, value.ptr()), &[])?;
        let (node, body) = graph.add_if(&handle, &[&set])?;
        assert_eq!((node.kind(), node.body_count()), (ConditionalKind::If, 1));
        body.add_kernel(increment_counter(), one(), (counters.ptr(), 0), &[])?;
        let values = [0, 1, 0, 0, 7, 1, u32::MAX, 0, 2];
        check_against_model(&graph, &mut value, &counters, &values, |v, c| c[0] += (v != 0) as u32)
    });
}

#[test]
fn if_else_runs_exactly_one_of_its_bodies() {
    require_gpu!();
    run(|| {
        let (mut value, counters) = (DeviceBuffer::<u32>::zeroed(1)?, DeviceBuffer::<u32>::zeroed(2)?);
        let graph = Graph::new()?;
        let handle = graph.conditional_handle(None)?;
        let set = graph.add_kernel(set_condition_from(), one(), (handle, value.ptr()), &[])?;
        let (node, [then, otherwise]) = graph.add_if_else(&handle, &[&set])?;
        assert_eq!(node.kind(), ConditionalKind::IfElse);
        then.add_kernel(increment_counter(), one(), (counters.ptr(), 0), &[])?;
        otherwise.add_kernel(increment_counter(), one(), (counters.ptr(), 1), &[])?;
        let values = [0, 1, 2, 0, 0, 3, 1, 0];
        check_against_model(&graph, &mut value, &counters, &values, |v, c| c[if v != 0 { 0 } else { 1 }] += 1)
    });
}

#[test]
fn a_four_way_switch_runs_the_body_of_the_value_and_none_past_the_last() {
    require_gpu!();
    run(|| {
        let (mut value, counters) = (DeviceBuffer::<u32>::zeroed(1)?, DeviceBuffer::<u32>::zeroed(4)?);
        let graph = Graph::new()?;
        let handle = graph.conditional_handle(None)?;
        let set = graph.add_kernel(set_condition_from(), one(), (handle, value.ptr()), &[])?;
        let (node, bodies) = graph.add_switch(&handle, 4, &[&set])?;
        assert_eq!((node.kind(), bodies.len()), (ConditionalKind::Switch, 4));
        for (case, body) in bodies.iter().enumerate() {
            body.add_kernel(increment_counter(), one(), (counters.ptr(), case as u32), &[])?;
        }
        let values: Vec<u32> = (0..=6).chain([3, 3, 0, 5, 2, 1]).collect();
        check_against_model(&graph, &mut value, &counters, &values, |v, c| {
            if let Some(count) = c.get_mut(v as usize) {
                *count += 1;
            }
        })
    });
}

/// A WHILE that runs `limit` times: the handle starts at `limit > 0` and `while_step` (last
/// node of the body) continues while its counter is below `limit`. Body node: counter 0.
fn build_while(
    limit: u32, counters: &DeviceBuffer<u32>, steps: &DeviceBuffer<u32>,
) -> Result<Graph, CudaError> {
    let graph = Graph::new()?;
    let handle = graph.conditional_handle(Some((limit > 0) as u32))?;
    let reset = graph.add_memset(&steps.ptr(), 0u32, 1, &[])?;
    let (_, body) = graph.add_while(&handle, &[&reset])?;
    let count = body.add_kernel(increment_counter(), one(), (counters.ptr(), 0), &[])?;
    body.add_kernel(while_step(), one(), (handle, steps.ptr(), limit), &[&count])?;
    Ok(graph)
}

#[test]
fn while_loops_exactly_n_times_for_n_from_0_to_20() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        for limit in 0..=20u32 {
            let (counters, steps) = (DeviceBuffer::<u32>::zeroed(1)?, DeviceBuffer::<u32>::zeroed(1)?);
            let graph = build_while(limit, &counters, &steps)?;
            let exec = graph.instantiate::<HostLaunch>(Default::default())?;
            exec.launch(&stream)?;
            exec.launch(&stream)?; // the default value and the reset restart the loop
            stream.synchronize()?;
            assert_eq!(counters.to_vec()?, [2 * limit], "body runs for limit {limit}");
            assert_eq!(steps.to_vec()?, [limit], "steps for limit {limit}");
        }
        Ok(())
    });
}

#[test]
fn an_if_nested_in_a_while_body_runs_on_every_iteration_it_is_true() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        for (limit, flag) in [(0u32, 1u32), (1, 1), (5, 0), (5, 1), (9, 3)] {
            let counters = DeviceBuffer::<u32>::zeroed(2)?;
            let steps = DeviceBuffer::<u32>::zeroed(1)?;
            let flag_buffer = DeviceBuffer::from_slice(&[flag])?;
            let graph = Graph::new()?;
            let outer = graph.conditional_handle(Some((limit > 0) as u32))?;
            let reset = graph.add_memset(&steps.ptr(), 0u32, 1, &[])?;
            let (_, body) = graph.add_while(&outer, &[&reset])?;
            let inner = body.conditional_handle(None)?;
            let count = body.add_kernel(increment_counter(), one(), (counters.ptr(), 0), &[])?;
            let set = body.add_kernel(set_condition_from(), one(), (inner, flag_buffer.ptr()), &[&count])?;
            let (nested_if, inner_body) = body.add_if(&inner, &[&set])?;
            assert!(inner_body.is_body());
            inner_body.add_kernel(increment_counter(), one(), (counters.ptr(), 1), &[])?;
            body.add_kernel(while_step(), one(), (outer, steps.ptr(), limit), &[&nested_if])?;
            let exec = graph.instantiate::<HostLaunch>(Default::default())?;
            exec.launch(&stream)?;
            stream.synchronize()?;
            let inner_runs = if flag != 0 { limit } else { 0 };
            assert_eq!(counters.to_vec()?, [limit, inner_runs], "limit {limit}, flag {flag}");
        }
        Ok(())
    });
}

#[test]
fn a_handle_of_another_graph_is_refused() {
    require_gpu!();
    run(|| {
        let (first, second) = (Graph::new()?, Graph::new()?);
        let foreign: ConditionalHandle = first.conditional_handle(Some(1))?;
        let err = second.add_if(&foreign, &[]).unwrap_err();
        assert!(
            matches!(
                err.refusal(),
                Some(Refusal::Conditional(ConditionalRefusal::HandleOfAnotherGraph { handle_graph, graph }))
                    if handle_graph != graph
            ),
            "{err}"
        );
        assert!(second.add_while(&foreign, &[]).is_err());
        assert!(second.add_switch(&foreign, 2, &[]).is_err());
        // A handle made for a body serves that body, not the graph around it.
        let (_, body) = first.add_if(&foreign, &[])?;
        let for_body = body.conditional_handle(Some(0))?;
        assert!(first.add_if(&for_body, &[]).is_err());
        body.add_if(&for_body, &[])?;
        assert_eq!(second.node_count()?, 0);
        Ok(())
    });
}

#[test]
fn a_switch_without_bodies_is_refused() {
    require_gpu!();
    run(|| {
        let graph = Graph::new()?;
        let handle = graph.conditional_handle(Some(0))?;
        let err = graph.add_switch(&handle, 0, &[]).unwrap_err();
        assert!(
            matches!(err.refusal(), Some(Refusal::Conditional(ConditionalRefusal::SwitchWithoutBodies))),
            "{err}"
        );
        Ok(())
    });
}

#[test]
fn work_captured_into_a_conditional_body_runs_when_the_condition_holds() {
    require_gpu!();
    run(|| {
        let counters = DeviceBuffer::<u32>::zeroed(2)?;
        increment_counter().function()?; // the parameter check happens before capturing
        let capturing = stream()?;
        let mut graphs = Vec::new();
        for (slot, default) in [(0u32, 1u32), (1, 0)] {
            let graph = Graph::new()?;
            let handle = graph.conditional_handle(Some(default))?;
            let (_, body) = graph.add_if(&handle, &[])?;
            let capture = capturing.begin_capture_to_graph(&body, CaptureMode::ThreadLocal, &[])?;
            increment_counter().launch(&capturing, one(), (counters.ptr(), slot))?;
            increment_counter().launch(&capturing, one(), (counters.ptr(), slot))?;
            capture.end()?;
            assert_eq!(body.node_count()?, 2);
            graphs.push(graph);
        }
        let stream = stream()?;
        for graph in &graphs {
            graph.instantiate::<HostLaunch>(Default::default())?.launch(&stream)?;
        }
        stream.synchronize()?;
        assert_eq!(
            counters.to_vec()?,
            [2, 0],
            "the IF with default 1 ran both captured kernels; default 0, none"
        );
        Ok(())
    });
}

#[test]
fn a_conditional_handle_is_a_64_bit_kernel_argument() {
    require_gpu!();
    run(|| {
        // Both declarations pass the parameter check against the compiled kernel.
        typed::set_condition_from().function()?;
        set_condition_from().function()?;
        let _: fn() -> &'static cuda_graph::Kernel<(ConditionalHandle, DevicePtr<u32>)> =
            typed::set_condition_from;
        Ok(())
    });
}

/// SOUNDNESS.md, "The holes a review found", finding 6: a handle given to a kernel node of another
/// graph (or of a body that is not inside the handle's graph) is refused with both graphs named;
/// nothing is added.
#[test]
fn a_kernel_node_outside_the_handles_graph_refuses_it() {
    require_gpu!();
    run(|| {
        let value = DeviceBuffer::from_slice(&[1u32])?;
        let (first, second) = (Graph::new()?, Graph::new()?);
        let foreign = first.conditional_handle(Some(1))?;
        let err = second.add_kernel(set_condition_from(), one(), (foreign, value.ptr()), &[]).unwrap_err();
        assert!(matches!(err.refusal(), Some(Refusal::ForeignConditionalHandle { .. })), "{err}");
        assert_eq!(second.node_count()?, 0, "nothing was added");
        // A handle made in one body serves neither the graph around it nor a sibling body.
        let (_, [then, otherwise]) = first.add_if_else(&foreign, &[])?;
        let for_then = then.conditional_handle(Some(0))?;
        then.add_if(&for_then, &[])?;
        assert!(first.add_kernel(set_condition_from(), one(), (for_then, value.ptr()), &[]).is_err());
        assert!(otherwise.add_kernel(set_condition_from(), one(), (for_then, value.ptr()), &[]).is_err());
        then.add_kernel(set_condition_from(), one(), (for_then, value.ptr()), &[])?;
        first.add_kernel(set_condition_from(), one(), (foreign, value.ptr()), &[])?;
        // An exec's per-node update is held to the node's graph the same way.
        let third = Graph::new()?;
        let own = third.conditional_handle(Some(0))?;
        let set = third.add_kernel(set_condition_from(), one(), (own, value.ptr()), &[])?;
        let (_, body) = third.add_if(&own, &[&set])?;
        body.add_empty(&[])?;
        let mut exec = third.instantiate::<HostLaunch>(Default::default())?;
        let err =
            exec.set_kernel_params(&set, set_condition_from(), one(), (foreign, value.ptr())).unwrap_err();
        assert!(matches!(err.refusal(), Some(Refusal::ForeignConditionalHandle { .. })), "{err}");
        exec.set_kernel_params(&set, set_condition_from(), one(), (own, value.ptr()))?;
        Ok(())
    });
}

/// SOUNDNESS.md, "The holes a review found", finding 6: a stream launch with a conditional handle
/// is refused, also under a capture into a new graph; captured into the handle's own graph
/// (`begin_capture_to_graph`) it is allowed, and sets that graph's condition.
#[test]
fn a_stream_launch_takes_a_handle_only_when_captured_into_its_graph() {
    require_gpu!();
    run(|| {
        set_condition_from().function()?;
        increment_counter().function()?;
        let (zero, counters) = (DeviceBuffer::from_slice(&[0u32])?, DeviceBuffer::<u32>::zeroed(1)?);
        let stream = stream()?;
        let graph = Graph::new()?;
        let handle = graph.conditional_handle(Some(1))?;
        let err = set_condition_from().launch(&stream, one(), (handle, zero.ptr())).unwrap_err();
        assert!(matches!(err.refusal(), Some(Refusal::ConditionalHandleOutsideCapture { .. })), "{err}");

        let capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
        assert!(set_condition_from().launch(&stream, one(), (handle, zero.ptr())).is_err());
        assert_eq!(capture.end()?.node_count()?, 0, "the refused launch was not captured");

        // Captured into the handle's graph: the kernel sets the IF's condition to 0 first.
        let capture = stream.begin_capture_to_graph(&graph, CaptureMode::ThreadLocal, &[])?;
        set_condition_from().launch(&stream, one(), (handle, zero.ptr()))?;
        capture.end()?;
        let nodes = graph.nodes()?;
        assert_eq!(nodes.len(), 1);
        let (_, body) = graph.add_if(&handle, &[&nodes[0]])?;
        body.add_kernel(increment_counter(), one(), (counters.ptr(), 0), &[])?;
        graph.instantiate::<HostLaunch>(Default::default())?.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(counters.to_vec()?, [0], "the captured kernel set the condition (default 1) to 0");
        Ok(())
    });
}

/// SOUNDNESS.md, "The holes a review found", finding 6, what stays allowed: a handle of the root
/// graph used by a kernel two bodies deep (a WHILE's body, then an IF's body inside it) ends the
/// loop as intended.
#[test]
fn a_handle_set_from_a_body_two_levels_down_still_drives_its_loop() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        for limit in [1u32, 4, 7] {
            let steps = DeviceBuffer::<u32>::zeroed(1)?;
            let graph = Graph::new()?;
            let outer = graph.conditional_handle(Some(1))?;
            let (_, loop_body) = graph.add_while(&outer, &[])?;
            let always = loop_body.conditional_handle(Some(1))?;
            let (_, if_body) = loop_body.add_if(&always, &[])?;
            if_body.add_kernel(while_step(), one(), (outer, steps.ptr(), limit), &[])?;
            let exec = graph.instantiate::<HostLaunch>(Default::default())?;
            exec.launch(&stream)?;
            stream.synchronize()?;
            assert_eq!(steps.to_vec()?, [limit], "the WHILE ran until the depth-2 kernel cleared it");
        }
        Ok(())
    });
}

/// Handles made in which order, and one more that no conditional node tests.
#[derive(Clone, Copy)]
enum Handles {
    WhileFirst,
    IfFirst,
    WhileFirstAndUntested,
}

/// A WHILE counting `steps` up to `limit`, then an IF whose kernel sets its condition from
/// `flag` (1) and whose body counts in `counters[0]`. With `WhileFirstAndUntested`, that kernel
/// sets a third handle instead, which no conditional node tests.
fn while_then_if(
    steps: &DeviceBuffer<u32>, flag: &DeviceBuffer<u32>, counters: &DeviceBuffer<u32>, limit: u32,
    handles: Handles,
) -> Result<Graph, CudaError> {
    let graph = Graph::new()?;
    let (for_while, for_if) = match handles {
        Handles::IfFirst => {
            let for_if = graph.conditional_handle(None)?;
            (graph.conditional_handle(Some(1))?, for_if)
        }
        _ => {
            let for_while = graph.conditional_handle(Some(1))?;
            (for_while, graph.conditional_handle(None)?)
        }
    };
    let set_by_kernel = match handles {
        Handles::WhileFirstAndUntested => graph.conditional_handle(Some(0))?,
        _ => for_if,
    };
    let reset = graph.add_memset(&steps.ptr(), 0u32, 1, &[])?;
    let (while_node, body) = graph.add_while(&for_while, &[&reset])?;
    body.add_kernel(while_step(), one(), (for_while, steps.ptr(), limit), &[])?;
    let set = graph.add_kernel(set_condition_from(), one(), (set_by_kernel, flag.ptr()), &[&while_node])?;
    let (_, if_body) = graph.add_if(&for_if, &[&set])?;
    if_body.add_kernel(increment_counter(), one(), (counters.ptr(), 0), &[])?;
    Ok(graph)
}

/// Found 2026-11-26: `cudaGraphExecUpdate` takes a graph with a handle that no conditional node
/// tests (which CUDA will not instantiate), and the updated exec's kernel then set that handle,
/// one the exec does not have. `update` refuses such a graph before CUDA is called. A graph
/// rebuilt the same way updates the exec; CUDA refuses one whose conditional nodes test other
/// handles; after either refusal the exec runs as before.
#[test]
fn whole_graph_updates_of_an_exec_with_conditional_nodes() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let (steps, counters) = (DeviceBuffer::<u32>::zeroed(1)?, DeviceBuffer::<u32>::zeroed(1)?);
        let flag = DeviceBuffer::from_slice(&[1u32])?;
        let build = |limit, handles| while_then_if(&steps, &flag, &counters, limit, handles);
        let launch = |exec: &cuda_graph::graph::GraphExec<HostLaunch>| -> Result<(u32, u32), CudaError> {
            exec.launch(&stream)?;
            stream.synchronize()?;
            Ok((steps.to_vec()?[0], counters.to_vec()?[0]))
        };
        let mut exec = build(3, Handles::WhileFirst)?.instantiate::<HostLaunch>(Default::default())?;
        assert_eq!(launch(&exec)?, (3, 1));

        exec.update(&build(5, Handles::WhileFirst)?)?;
        assert_eq!(launch(&exec)?, (5, 2), "the rebuilt graph's limit");

        let err = exec.update(&build(7, Handles::IfFirst)?).unwrap_err();
        assert!(matches!(&err, CudaError::UpdateRefused { .. }), "{err}");
        assert_eq!(launch(&exec)?, (5, 3), "as before the refused update");

        let err = exec.update(&build(7, Handles::WhileFirstAndUntested)?).unwrap_err();
        assert!(
            matches!(
                err.refusal(),
                Some(Refusal::Conditional(ConditionalRefusal::UntestedHandle { handle: 3 }))
            ),
            "{err}"
        );
        assert_eq!(launch(&exec)?, (5, 4), "as before the refused update");
        Ok(())
    });
}

/// A graph that made a conditional handle is no child graph: CUDA 13.0 refuses to add one
/// (`cudaErrorNotSupported`); the crate refuses it first, saying why, and an exec's child-graph
/// setter refuses it too (there a kernel of it could set a condition of the graph it runs in).
#[test]
fn a_graph_with_conditional_handles_is_no_child_graph() {
    require_gpu!();
    run(|| {
        let zero = DeviceBuffer::from_slice(&[0u32])?;
        let with_handle = Graph::new()?;
        let handle = with_handle.conditional_handle(Some(0))?;
        with_handle.add_kernel(set_condition_from(), one(), (handle, zero.ptr()), &[])?;
        let parent = Graph::new()?;
        let err = parent.add_child_graph(&with_handle, &[]).unwrap_err();
        assert!(
            matches!(
                err.refusal(),
                Some(Refusal::Conditional(ConditionalRefusal::ChildWithHandles { handles: 1 }))
            ),
            "{err}"
        );
        assert_eq!(parent.node_count()?, 0, "nothing was added");

        let plain = Graph::new()?;
        plain.add_kernel(increment_counter(), one(), (zero.ptr(), 0), &[])?;
        let node = parent.add_child_graph(&plain, &[])?;
        let mut exec = parent.instantiate::<HostLaunch>(Default::default())?;
        let err = exec.set_child_graph(&node, &with_handle).unwrap_err();
        assert!(
            matches!(
                err.refusal(),
                Some(Refusal::Conditional(ConditionalRefusal::ChildWithHandles { handles: 1 }))
            ),
            "{err}"
        );
        Ok(())
    });
}
