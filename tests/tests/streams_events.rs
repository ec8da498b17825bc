//! `streams_events` on a real GPU: every output of the overlap, priority and work-stealing
//! experiments equals the CPU reference, and the report carries every figure. Speed is not
//! asserted here.

use streams_events::{run, Options};

#[test]
fn quick_run_passes_and_reports_every_figure() {
    gpu_test_support::require_gpu!();
    let tests::Run { options, report, json, figure } = tests::quick_run::<streams_events::Program>();
    tests::assert_positive_figures(
        &report,
        &[
            "serialized_ms",
            "overlapped_ms",
            "overlap",
            "overlap_bound",
            "h2d_ms",
            "kernel_ms",
            "d2h_ms",
            "h2d_gbps",
            "d2h_gbps",
            "urgent_idle_us",
            "urgent_same_priority_us",
            "urgent_high_priority_us",
            "priority_gain",
            "flood_kernel_ms",
            "static_split_ms",
            "dynamic_dispatch_ms",
            "stealing_over_static",
            "static_imbalance",
        ],
    );
    for streams in options.stream_counts() {
        assert!(figure(&format!("overlap_{streams}_streams")) > 0.0);
    }
    assert!(figure("rounds") >= 1.0);
    tests::assert_checks_held(
        &report,
        &[
            "overlap outputs match CPU reference",
            "priority outputs match CPU reference",
            "work-stealing outputs match CPU reference",
            "stream priorities as requested",
            "every chunk dispatched to a stream",
        ],
    );
    let stealing = json["data"]["stealing"].as_array().expect("data.stealing");
    for policy in stealing {
        let per_stream = policy["chunks_per_stream"].as_array().expect("chunks_per_stream");
        let total: u64 = per_stream.iter().map(|n| n.as_u64().unwrap()).sum();
        assert_eq!(total, u64::from(options.steal_chunks), "{policy}");
    }
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    tests::assert_refused(run(&Options { depth: 0, ..Options::quick() }), "depth", "depth");
}
