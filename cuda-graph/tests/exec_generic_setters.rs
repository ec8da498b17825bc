//! The generic per-node exec setters (`cudaGraphExecNodeSetParams`): event record, host and
//! child graph nodes change what later launches do, the replaced resources stay alive for the
//! launches queued before, and foreign nodes or children are refused by name.

mod graph_support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::refusal::{ExecRefusal, NodeRefusal};
use cuda_graph::{CudaError, DeviceBuffer, Event, Refusal};
use gpu_test_support::require_gpu;
use graph_support::{run, stream};

#[test]
fn an_event_record_node_records_the_event_set_on_the_exec() {
    require_gpu!();
    run(|| {
        let start = Arc::new(Event::new()?);
        let (first_end, second_end) = (Arc::new(Event::new()?), Arc::new(Event::new()?));
        let graph = Graph::new()?;
        let begin = graph.add_event_record(&start, &[])?;
        let end = graph.add_event_record(&first_end, &[&begin])?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        exec.set_event_record(&end, &second_end)?;
        let stream = stream()?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert!(Event::elapsed_ms(&start, &second_end)? >= 0.0);
        // The graph's own event was never recorded: CUDA has no time for it.
        assert!(Event::elapsed_ms(&start, &first_end).is_err(), "the replaced event was recorded");
        Ok(())
    });
}

#[test]
fn a_host_node_calls_the_function_set_on_the_exec_and_the_old_one_no_more() {
    require_gpu!();
    run(|| {
        let (old_runs, new_runs) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        let graph = Graph::new()?;
        let counter = old_runs.clone();
        let host = graph.add_host(
            move || {
                counter.fetch_add(1, Ordering::SeqCst);
            },
            &[],
        )?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let stream = stream()?;
        exec.launch(&stream)?;
        let counter = new_runs.clone();
        exec.set_host(&host, move || {
            counter.fetch_add(10, Ordering::SeqCst);
        })?;
        exec.launch(&stream)?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!((old_runs.load(Ordering::SeqCst), new_runs.load(Ordering::SeqCst)), (1, 20));
        drop(exec);
        assert_eq!(Arc::strong_count(&new_runs), 1, "the exec's drop releases the closure");
        Ok(())
    });
}

fn fill_child(data: &DeviceBuffer<u32>, value: u32, fills: usize) -> Result<Graph, CudaError> {
    let child = Graph::new()?;
    let mut last = None;
    for _ in 0..fills {
        let deps: Vec<&dyn cuda_graph::graph::AsNode> = last.iter().map(|n| n as _).collect();
        last = Some(child.add_memset(&data.ptr(), value, data.len(), &deps)?);
    }
    Ok(child)
}

#[test]
fn a_child_graph_node_runs_with_the_new_childs_parameters() {
    require_gpu!();
    run(|| {
        let data = DeviceBuffer::<u32>::zeroed(300)?;
        let graph = Graph::new()?;
        let node = graph.add_child_graph(&fill_child(&data, 1, 1)?, &[])?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let mut other = DeviceBuffer::<u32>::zeroed(300)?;
        exec.set_child_graph(&node, &fill_child(&other, 9, 1)?)?;
        let stream = stream()?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(data.to_vec()?, vec![0; 300], "the old child's target was written");
        assert_eq!(other.to_vec()?, vec![9; 300]);

        // Another shape: CUDA refuses, the exec still runs the last child set.
        assert!(exec.set_child_graph(&node, &fill_child(&other, 5, 2)?).is_err());
        let own = exec.set_child_graph(&node, &graph).unwrap_err();
        assert!(
            matches!(
                own,
                CudaError::InvalidArgument {
                    call: "GraphExec::set_child_graph",
                    reason: Refusal::Exec(ExecRefusal::ChildOfOwnFamily)
                }
            ),
            "{own}"
        );
        other.copy_from_host(&[0; 300])?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(other.to_vec()?, vec![9; 300]);
        Ok(())
    });
}

#[test]
fn setters_refuse_nodes_of_another_graph() {
    require_gpu!();
    run(|| {
        let event = Arc::new(Event::new()?);
        let graph = Graph::new()?;
        graph.add_event_wait(&event, &[])?;
        let other = Graph::new()?;
        let foreign = other.add_event_wait(&event, &[])?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let err = exec.set_event_wait(&foreign, &event).unwrap_err();
        assert!(
            matches!(
                err,
                CudaError::InvalidArgument {
                    call: "GraphExec::set_event_wait",
                    reason: Refusal::Node(NodeRefusal::NotOfExecGraph { .. })
                }
            ),
            "{err}"
        );
        Ok(())
    });
}
