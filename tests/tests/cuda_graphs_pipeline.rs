//! `cuda_graphs_pipeline` on a real GPU: the three ways give the same values, equal to the CPU
//! reference (verify is on), and the report carries the chapter's figures. Speed is not
//! asserted.

use cuda_graphs_pipeline::{run, Options};

#[test]
fn quick_run_passes_and_reports_every_figure() {
    gpu_test_support::require_gpu!();
    let tests::Run { options, report, json, figure } = tests::quick_run::<cuda_graphs_pipeline::Program>();
    assert!(options.verify);
    tests::assert_positive_figures(
        &report,
        &[
            "stream_ms_per_iter",
            "stream_prealloc_ms_per_iter",
            "graph_ms_per_iter",
            "graph_over_stream",
            "graph_over_stream_prealloc",
            "prealloc_over_stream",
            "checksum",
        ],
    );
    assert_eq!(figure("iters"), f64::from(options.iters));
    // The headline leads with the like-for-like ratio (both ways over preallocated buffers).
    assert_eq!(
        figure("graph_over_stream_prealloc"),
        figure("stream_prealloc_ms_per_iter") / figure("graph_ms_per_iter")
    );
    let headline = cuda_graphs_pipeline::headline(&report);
    assert!(
        headline.starts_with(&format!(
            "graph {:.2}x over stream, both preallocated",
            figure("graph_over_stream_prealloc")
        )),
        "{headline}"
    );
    let checks = json["checks"].as_array().expect("checks");
    for name in
        ["identical results across ways (implied by the CPU check)", "verify: matches the CPU reference"]
    {
        assert!(checks.iter().any(|c| c["name"] == name && c["held"] == true), "{name}: {checks:?}");
    }
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    tests::assert_refused(
        run(&Options { iters: 150, ..Options::quick() }),
        "iters",
        "multiple of capture_iters",
    );
}

#[test]
fn the_chapter_listings_workload_compares_its_two_programs_only() {
    gpu_test_support::require_gpu!();
    let tests::Run { options, report, json, figure } =
        tests::book_quick_run::<cuda_graphs_pipeline::Program>();
    assert!(!options.per_stage_alloc && options.verify);
    let ratio = figure("graph_over_stream_prealloc");
    assert!(ratio.is_finite() && ratio > 0.0, "graph_over_stream_prealloc = {ratio}");
    assert_eq!(report.figure_value("stream_ms_per_iter"), None, "the per-stage allocating way did not run");
    assert!(!cuda_graphs_pipeline::headline(&report).contains("per-stage alloc"));
    let checks = &json["checks"];
    assert!(checks
        .as_array()
        .expect("checks")
        .iter()
        .any(|c| c["name"] == "verify: matches the CPU reference"));
}
