//! `dynamic_parallelism` on a real GPU: the CDP2 pass and both host-driven passes (one
//! refinement launch over all cells; one launch per refined cell) give the CPU
//! model's flags, outputs and cell sums with exactly its number of children, no device-side
//! launch is refused, the book's plain-stream launcher launches nothing, and the device graph
//! launch done right changes the data. Speed is not asserted here.

use dynamic_parallelism::{run, Options};

#[test]
fn quick_run_passes_and_reports_every_figure() {
    gpu_test_support::require_gpu!();
    let tests::Run { options, report, json, figure } = tests::quick_run::<dynamic_parallelism::Program>();
    tests::assert_positive_figures(
        &report,
        &[
            "cdp_us_per_pass",
            "host_us_per_pass",
            "cdp_over_host",
            "host_per_cell_us_per_pass",
            "cdp_over_host_per_cell",
            "device_launch_us",
            "refined_cells",
        ],
    );
    // Children counted on the device equal the CPU model's refined cells, per pass.
    assert_eq!(figure("cdp_children_per_pass"), figure("refined_cells"));
    assert_eq!(figure("host_children_per_pass"), figure("refined_cells"));
    assert_eq!(figure("host_per_cell_children_per_pass"), figure("refined_cells"));
    assert_eq!(figure("device_launch_verified"), 1.0);
    assert_eq!(figure("cells"), f64::from(options.cells));
    tests::assert_checks_held(
        &report,
        &[
            "CDP pass equals the CPU model (children counted)",
            "host-driven pass equals the CPU model (children counted)",
            "host-driven per-cell pass equals the CPU model (children counted)",
            "no device-side launch refused (children and tail-launched reduction)",
            "the book's way (launcher on a plain stream) launches nothing",
            "device graph launch ran, proven by its effect on the data",
        ],
    );
    for way in ["cdp", "host", "host_per_cell"] {
        let runs = json["data"]["ms_per_run"][way]["runs"].as_array().expect("per-run times");
        assert_eq!(runs.len(), options.runs, "{way}");
    }
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    tests::assert_refused(run(&Options { cells: 5000, ..Options::quick() }), "cells", "cells must be");
}

#[test]
fn the_chapter_listings_cdp_sizes_pass_and_the_device_launch_still_runs() {
    gpu_test_support::require_gpu!();
    let tests::Run { figure, .. } = tests::book_quick_run::<dynamic_parallelism::Program>();
    assert_eq!((figure("cells"), figure("total_points")), (100.0, 10_000.0), "the listing's 10 000 values");
    assert!(figure("refined_cells") >= 1.0);
    assert_eq!(figure("cdp_children_per_pass"), figure("refined_cells"));
    assert_eq!(figure("device_launch_verified"), 1.0);
}
