//! `atomic_work_queue` on a real GPU: every variant's output equals the CPU reference and the
//! others', and the report carries the chapter's figures. Speed is not asserted here.

use atomic_work_queue::{run, Arithmetic, Options, SINCOS_CHECK};

#[test]
fn quick_run_passes_and_reports_every_figure() {
    gpu_test_support::require_gpu!();
    let tests::Run { options, report, json, figure } = tests::quick_run::<atomic_work_queue::Program>();
    tests::assert_positive_figures(&report, &["dynamic_over_static", "uniform_dynamic_over_static"]);
    tests::assert_positive_figures(
        &report,
        &[
            "static_ms",
            "static_per_item_ms",
            "static_grid_stride_ms",
            "best_static_ms",
            "dynamic_per_thread_ms",
            "dynamic_warp_ms",
            "hierarchical_ms",
            "best_batch_ms",
            "uniform_best_static_ms",
            "uniform_dynamic_warp_ms",
        ],
    );
    for batch in &options.sweep {
        assert!(figure(&format!("sweep_batch_{batch}_ms")) > 0.0);
    }
    assert!(options.sweep.contains(&(figure("best_batch") as u32)));
    // The headline's baseline is the fastest of the three static variants, and is named.
    let fastest = ["static_ms", "static_per_item_ms", "static_grid_stride_ms"]
        .map(&figure)
        .into_iter()
        .fold(f64::INFINITY, f64::min);
    assert_eq!(figure("best_static_ms"), fastest);
    assert_eq!(figure("dynamic_over_static"), fastest / figure("dynamic_warp_ms"));
    let names = ["static", "static_per_item", "static_grid_stride"];
    assert_eq!(json["data"]["best_static"], names[figure("best_static_variant") as usize]);
    assert!(names.contains(&json["data"]["uniform_best_static"].as_str().expect("uniform_best_static")));
    // The control ran the three static splits and the dynamic warp kernel.
    assert_eq!(json["data"]["uniform_variants"].as_array().map(Vec::len), Some(4));
    assert!(atomic_work_queue::headline(&report).contains("; uniform "));
    assert_eq!(json["data"]["arithmetic"], "port");
    assert_eq!(report.figure_value("sincos_max_ulps"), None, "no sinf/cosf in the port's rounds");
    tests::assert_checks_held(
        &report,
        &[
            "matches CPU reference",
            "uniform control matches its CPU reference",
            "identical results across variants (implied by the CPU check)",
        ],
    );
}

#[test]
fn the_uniform_control_can_be_left_out() {
    gpu_test_support::require_gpu!();
    let report = tests::passed(run(&Options { uniform_control: false, ..Options::quick() }));
    assert_eq!(report.figure_value("uniform_dynamic_over_static"), None);
    assert!(report.figure_value("best_static_ms").is_some());
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    tests::assert_refused(run(&Options { batch: 3, ..Options::quick() }), "batch", "powers of two");
}

#[test]
fn the_chapter_listings_workload_runs_its_two_kernels_on_a_full_grid() {
    gpu_test_support::require_gpu!();
    let tests::Run { options, report, json, figure } = tests::book_quick_run::<atomic_work_queue::Program>();
    assert_eq!(options.costs, atomic_work_queue::Costs::Sawtooth);
    assert_eq!(options.arithmetic, Arithmetic::Listing);
    // The listing's sinf * cosf rounds ran, were checked, and the report says so and what differs.
    assert_eq!(json["data"]["arithmetic"], "listing");
    tests::assert_checks_held(&report, &["matches CPU reference", SINCOS_CHECK]);
    assert!(figure("sincos_max_ulps") <= f64::from(atomic_work_queue::SINCOS_MAX_ULPS));
    let notes = json["notes"].as_array().expect("notes");
    let note = |start: &str| notes.iter().filter_map(|n| n.as_str()).find(|n| n.starts_with(start));
    assert!(note("arithmetic: the listing's float rounds").is_some(), "{notes:?}");
    let differs = note("as the listing: ").unwrap_or_else(|| panic!("{notes:?}"));
    assert!(differs.contains("not as the listing: 65536 items (the listing: 1 Mi)"), "{differs}");
    // The listing's two kernels only: its static one is the baseline, no sweep, no control.
    let names: Vec<&str> = json["data"]["variants"]
        .as_array()
        .expect("variants")
        .iter()
        .filter_map(|v| v["variant"].as_str())
        .collect();
    assert_eq!(names, ["static_per_item", "warp_batch_32"]);
    assert_eq!(json["data"]["best_static"], "static_per_item");
    assert_eq!(figure("dynamic_over_static"), figure("static_per_item_ms") / figure("dynamic_warp_ms"));
    // The listing's own timing (each kernel's first run, static first) is reported beside it.
    tests::assert_positive_figures(&report, &["first_run_static_ms", "first_run_dynamic_ms"]);
    assert_eq!(
        figure("first_run_dynamic_over_static"),
        figure("first_run_static_ms") / figure("first_run_dynamic_ms")
    );
    for absent in
        ["static_ms", "hierarchical_ms", "best_batch", "uniform_dynamic_over_static", "static_tile_imbalance"]
    {
        assert_eq!(report.figure_value(absent), None, "{absent} belongs to the port's lineup");
    }
    assert!(atomic_work_queue::headline(&report).contains("(static_per_item)"));
}

#[test]
fn the_listings_arithmetic_runs_in_every_variant() {
    gpu_test_support::require_gpu!();
    let options = Options { arithmetic: Arithmetic::Listing, items: 1 << 14, ..Options::quick() };
    let report = tests::passed(run(&options));
    assert_eq!(report.to_json()["data"]["arithmetic"], "listing");
    tests::assert_checks_held(
        &report,
        &["matches CPU reference", "uniform control matches its CPU reference", SINCOS_CHECK],
    );
    tests::assert_positive_figures(&report, &["dynamic_over_static", "hierarchical_ms", "best_batch_ms"]);
}
