//! `graph_memory` on a real GPU: the preallocated, graph-memory-node and pool variants all
//! produce the CPU reference, graph memory does not grow with replays, and the report carries
//! every figure. Speed is not asserted here.

use graph_memory::{run, Options};

#[test]
fn quick_run_passes_and_reports_every_figure() {
    gpu_test_support::require_gpu!();
    let tests::Run { options, report, figure, .. } = tests::quick_run::<graph_memory::Program>();
    tests::assert_positive_figures(
        &report,
        &["static_graph_ms", "mem_nodes_graph_ms", "stream_pool_ms", "mem_nodes_over_static_time"],
    );
    let scratch_bytes = f64::from(options.size) * 4.0 * f64::from(options.stages - 1);
    assert_eq!(figure("static_scratch_mib"), scratch_bytes / f64::from(1u32 << 20));
    assert!(figure("graph_peak_mib") > 0.0);
    assert_eq!(figure("graph_used_after_1_mib"), figure("graph_used_after_n_mib"));
    assert_eq!(figure("graph_reserved_after_1_mib"), figure("graph_reserved_after_n_mib"));
    for name in ["graph_reserved_high_mib", "graph_reserved_after_trim_mib", "pool_reserved_after_n_mib"] {
        assert!(figure(name) >= 0.0, "{name}");
    }
    assert_eq!(figure("pool_used_after_n_mib"), 0.0);
    let addresses = figure("distinct_scratch_addresses");
    assert!((1.0..=f64::from(options.stages - 1)).contains(&addresses), "{addresses}");
    assert_eq!(figure("replays"), options.passes() as f64);
    tests::assert_checks_held(
        &report,
        &[
            "all variants match CPU reference",
            "graph memory flat across replays",
            "graph allocations were made",
            "pool memory all returned after every pass",
        ],
    );
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    tests::assert_refused(run(&Options { stages: 1, ..Options::quick() }), "stages", "stages");
}
