//! `graph_bandwidth` on a real GPU: copies and memsets leave the right bytes at every size,
//! both as graph nodes and on the stream, and the report carries GB/s by size. Speed is not
//! asserted here.

use graph_bandwidth::{run, Options};

#[test]
fn quick_run_passes_and_reports_every_size() {
    gpu_test_support::require_gpu!();
    let tests::Run { options, report, json, .. } = tests::quick_run::<graph_bandwidth::Program>();
    tests::assert_positive_figures(
        &report,
        &[
            "largest_copy_stream_gbps",
            "largest_copy_graph_gbps",
            "largest_memset_stream_gbps",
            "largest_memset_graph_gbps",
            "smallest_copy_stream_us_per_op",
            "smallest_copy_graph_us_per_op",
            "smallest_copy_graph_speedup",
        ],
    );
    let sizes = json["data"]["sizes"].as_array().expect("data.sizes");
    assert_eq!(sizes.len(), options.sizes.len());
    for (row, &bytes) in sizes.iter().zip(&options.sizes) {
        assert_eq!(row["bytes"].as_u64(), Some(bytes));
        for key in ["copy_stream_gbps", "copy_graph_gbps", "memset_stream_gbps", "memset_graph_gbps"] {
            let gbps = row[key].as_f64().unwrap_or(f64::NAN);
            assert!(gbps.is_finite() && gbps > 0.0, "{bytes} B {key} = {gbps}");
        }
    }
    tests::assert_checks_held(
        &report,
        &[
            "copies match the source",
            "memsets wrote the value",
            "every group ran exactly once",
            "graphs hold the chain of memcpy or memset nodes and the counter",
        ],
    );
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    tests::assert_refused(run(&Options { sizes: vec![6], ..Options::quick() }), "sizes", "multiples of 4");
}
