//! `cuda_graphs` on a real GPU: stream launches and graph replay give the CPU reference's
//! output, the per-node and whole-graph updates take effect, and the report carries the
//! chapter's figures. Speed is not asserted here.

use cuda_graphs::{run, Arithmetic, Options, MAP_TOLERANCE_ULPS, SHORT_RUNS_CHECK};

/// The checks every run makes, whatever the arithmetic.
const CHECKS: [&str; 5] = [
    "stream matches CPU reference",
    "graph replay matches CPU reference",
    "node-by-node graph equals the captured one",
    "replay after set_kernel_params",
    "replay after whole-graph update",
];

#[test]
fn quick_run_passes_and_reports_every_figure() {
    gpu_test_support::require_gpu!();
    let tests::Run { options, report, json, figure } = tests::quick_run::<cuda_graphs::Program>();
    tests::assert_positive_figures(
        &report,
        &[
            "stream_us_per_iter",
            "graph_us_per_iter",
            "speedup",
            "stream_us_per_kernel",
            "graph_us_per_kernel",
            "capture_us",
            "instantiate_us",
            "set_kernel_params_us",
            "exec_update_us",
        ],
    );
    assert_eq!(figure("kernels"), f64::from(options.kernels));
    tests::assert_checks_held(&report, &CHECKS);
    assert_eq!(json["data"]["arithmetic"], "port");
    assert_eq!(
        report.figure_value("max_ulps_from_cpu"),
        None,
        "the port's integers are compared bit for bit"
    );
    // Checksums equal between stream and graph: implied by the two reference checks, so data now.
    let checksum = &json["data"]["checksum"];
    assert!(checksum["stream"].is_u64(), "{checksum}");
    assert_eq!(checksum["stream"], checksum["graph"], "{checksum}");
    assert_eq!(checksum["stream"], checksum["cpu"], "{checksum}");
    let checks = json["checks"].as_array().expect("checks");
    assert!(
        !checks.iter().any(|c| c["name"] == "checksum equal between stream and graph"),
        "an implied check is not reported as a check of its own: {checks:?}"
    );
    let runs = json["data"]["runs_us_per_iter"]["graph"].as_array().expect("per-run times");
    assert_eq!(runs.len(), options.runs);
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    tests::assert_refused(run(&Options { kernels: 1, ..Options::quick() }), "kernels", "kernels must be");
}

#[test]
fn the_chapter_listings_workload_passes_with_its_three_kernels() {
    gpu_test_support::require_gpu!();
    let tests::Run { options, report, json, figure } = tests::book_quick_run::<cuda_graphs::Program>();
    assert_eq!(figure("kernels"), 3.0, "the listing's kernel_a, kernel_b, kernel_c");
    assert_eq!(figure("elements"), f64::from(options.elements));
    let speedup = figure("speedup");
    assert!(speedup.is_finite() && speedup > 0.0, "speedup = {speedup}");
    // The listing's float kernels ran, within the tolerance, passes counted by the short runs.
    assert_eq!(options.arithmetic, Arithmetic::Listing);
    assert_eq!(json["data"]["arithmetic"], "listing");
    tests::assert_checks_held(&report, &CHECKS);
    tests::assert_checks_held(&report, &[SHORT_RUNS_CHECK]);
    assert!(figure("max_ulps_from_cpu") <= f64::from(MAP_TOLERANCE_ULPS));
    // The listing's own timing (each way's first run, stream first) is reported beside it.
    tests::assert_positive_figures(&report, &["first_run_stream_us_per_iter", "first_run_graph_us_per_iter"]);
    assert_eq!(
        figure("first_run_speedup"),
        figure("first_run_stream_us_per_iter") / figure("first_run_graph_us_per_iter")
    );
    let notes: Vec<&str> =
        json["notes"].as_array().expect("notes").iter().filter_map(|n| n.as_str()).collect();
    assert!(notes.iter().any(|n| n.starts_with("arithmetic: the listing's float kernels")), "{notes:?}");
    let differs =
        notes.iter().find(|n| n.starts_with("as the listing: ")).unwrap_or_else(|| panic!("{notes:?}"));
    assert!(differs.contains("16384 elements (the listing: 1 Mi)"), "{differs}");
}

#[test]
fn the_listings_arithmetic_runs_on_the_default_chain_too() {
    gpu_test_support::require_gpu!();
    let report = tests::passed(run(&Options { arithmetic: Arithmetic::Listing, ..Options::quick() }));
    tests::assert_checks_held(&report, &CHECKS);
    tests::assert_checks_held(&report, &[SHORT_RUNS_CHECK]);
    assert!(tests::figure(&report, "max_ulps_from_cpu") <= f64::from(MAP_TOLERANCE_ULPS));
}
