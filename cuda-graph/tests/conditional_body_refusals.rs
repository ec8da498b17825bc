//! What CUDA 13.0 refuses inside a conditional node's body, named in the error: an event wait
//! node (what NCCL records into a captured collective unless NCCL_GRAPH_MIXING_SUPPORT=0).

use std::sync::Arc;

use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::refusal::{ExecRefusal, InstantiateFailure};
use cuda_graph::{Event, Refusal};

#[test]
fn an_event_wait_node_in_a_while_body_is_refused_naming_the_body_and_the_node() {
    gpu_test_support::require_gpu!();
    let graph = Graph::new().unwrap();
    let handle = graph.conditional_handle(Some(0)).unwrap();
    let (_node, body) = graph.add_while(&handle, &[]).unwrap();
    let ready = Arc::new(Event::new().unwrap());
    body.add_event_wait(&ready, &[]).unwrap();
    let err = graph.instantiate::<HostLaunch>(Default::default()).unwrap_err();
    match err.refusal() {
        Some(Refusal::Exec(ExecRefusal::Instantiate { reason, node_named, node_kind, .. })) => {
            // Not `NotForDeviceLaunch`: a host-launch instantiation.
            assert_eq!(*reason, InstantiateFailure::NotInBody, "{err}");
            assert!(*node_named, "{err}");
            assert_eq!(node_kind.as_deref(), Some("event wait"), "{err}");
        }
        _ => panic!("expected an instantiation refused by CUDA, got {err:?}"),
    }
    assert!(err.to_string().contains("(at a event wait node)"), "the message names the node: {err}");
    // The same node in the root graph is fine.
    let root = Graph::new().unwrap();
    root.add_event_wait(&ready, &[]).unwrap();
    root.instantiate::<HostLaunch>(Default::default()).unwrap();
}
