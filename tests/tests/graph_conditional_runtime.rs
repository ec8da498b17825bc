//! `graph_conditional_runtime` on a real GPU: host branching and the IF/ELSE node take the CPU
//! model's branch at every iteration and end with its data. Speed is not asserted.

use graph_conditional_runtime::{run, Options};

#[test]
fn quick_run_passes_and_reports_every_figure() {
    gpu_test_support::require_gpu!();
    let tests::Run { options, report, figure, .. } = tests::quick_run::<graph_conditional_runtime::Program>();
    tests::assert_positive_figures(
        &report,
        &["host_branch_ms_per_iter", "conditional_ms_per_iter", "conditional_over_host"],
    );
    let heavy_share = figure("heavy_share");
    assert!(heavy_share > 0.0 && heavy_share < 1.0, "both branches must be taken: {heavy_share}");
    assert_eq!(figure("iters"), f64::from(options.iters));
    tests::assert_checks_held(
        &report,
        &["host branching equals the CPU model", "conditional node equals the CPU model"],
    );
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    tests::assert_refused(
        run(&Options { threads_per_block: 100, ..Options::quick() }),
        "threads_per_block",
        "multiple of 32",
    );
}

#[test]
fn the_chapter_listings_workload_passes_with_its_32_round_branch() {
    gpu_test_support::require_gpu!();
    let tests::Run { options, figure, .. } = tests::book_quick_run::<graph_conditional_runtime::Program>();
    assert_eq!((options.rounds, options.threads_per_block), (32, 256));
    assert_eq!(figure("iters"), f64::from(options.iters));
    let ratio = figure("conditional_over_host");
    assert!(ratio.is_finite() && ratio > 0.0, "conditional_over_host = {ratio}");
}
