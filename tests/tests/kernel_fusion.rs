//! `kernel_fusion` on a real GPU: unfused, fused and graph outputs all equal the CPU reference
//! bit for bit, and the report carries every figure. Speed is not asserted here.

use kernel_fusion::{run, Options};

#[test]
fn quick_run_passes_and_reports_every_figure() {
    gpu_test_support::require_gpu!();
    let tests::Run { options, report, json, figure } = tests::quick_run::<kernel_fusion::Program>();
    for variant in ["unfused", "fused", "graph"] {
        let names = ["ms", "gbps", "traffic_gbps"].map(|suffix| format!("{variant}_{suffix}"));
        tests::assert_positive_figures(&report, &names);
        for n in &options.sweep {
            assert!(figure(&format!("sweep_{n}_{variant}_us")) > 0.0);
        }
    }
    tests::assert_positive_figures(
        &report,
        &["fused_over_unfused", "fused_over_graph", "graph_over_unfused"],
    );
    assert_eq!(figure("elements"), f64::from(options.size));
    // The fused kernel moves 12 bytes per element, so its traffic and effective bandwidth agree.
    assert!((figure("fused_gbps") - figure("fused_traffic_gbps")).abs() < 1e-9);
    tests::assert_checks_held(&report, &["all variants match CPU reference"]);
    let sizes = json["data"]["sizes"].as_array().expect("data.sizes");
    assert_eq!(sizes.len(), 1 + options.sweep.len());
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    tests::assert_refused(run(&Options { iters: 0, ..Options::quick() }), "iters", "iters");
}
