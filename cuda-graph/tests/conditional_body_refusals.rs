//! What CUDA 13.0 refuses inside a conditional node's body, named in the error: an event wait
//! node (what NCCL records into a captured collective unless NCCL_GRAPH_MIXING_SUPPORT=0).

use std::sync::Arc;

use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::{CudaError, Event};

#[test]
fn an_event_wait_node_in_a_while_body_is_refused_naming_the_body_and_the_node() {
    gpu_test_support::require_gpu!();
    let graph = Graph::new().unwrap();
    let handle = graph.conditional_handle(Some(0)).unwrap();
    let (_node, body) = graph.add_while(&handle, &[]).unwrap();
    let ready = Arc::new(Event::new().unwrap());
    body.add_event_wait(&ready, &[]).unwrap();
    let err = graph.instantiate::<HostLaunch>(Default::default()).unwrap_err();
    assert!(matches!(err, CudaError::InvalidArgument { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("conditional node's body"), "{text}");
    assert!(text.contains("(at a event wait node)"), "{text}");
    assert!(!text.contains("device launch"), "a host-launch instantiation: {text}");
    // The same node in the root graph is fine.
    let root = Graph::new().unwrap();
    root.add_event_wait(&ready, &[]).unwrap();
    root.instantiate::<HostLaunch>(Default::default()).unwrap();
}
