//! `kernel_fusion` on a real GPU: unfused, fused and graph outputs all equal the CPU reference
//! bit for bit, and the report carries every figure. Speed is not asserted here.

use chapter_common::ExampleError;
use kernel_fusion::{run, Options};

#[test]
fn quick_run_passes_and_reports_every_figure() {
    gpu_test_support::require_gpu!();
    let options = Options::quick();
    let report = run(&options).unwrap_or_else(|err| panic!("{err}"));
    assert!(report.passed(), "{}", report.to_text());

    let json = report.to_json();
    assert_eq!(json["verdict"], "PASS");
    let figure = |name: &str| chapter_tests::figure(&report, name);
    for variant in ["unfused", "fused", "graph"] {
        for suffix in ["ms", "gbps", "traffic_gbps"] {
            let value = figure(&format!("{variant}_{suffix}"));
            assert!(value.is_finite() && value > 0.0, "{variant}_{suffix} = {value}");
        }
        for n in &options.sweep {
            assert!(figure(&format!("sweep_{n}_{variant}_us")) > 0.0);
        }
    }
    for name in ["fused_over_unfused", "fused_over_graph", "graph_over_unfused"] {
        let ratio = figure(name);
        assert!(ratio.is_finite() && ratio > 0.0, "{name} = {ratio}");
    }
    assert_eq!(figure("elements"), f64::from(options.size));
    // The fused kernel moves 12 bytes per element, so its traffic and effective bandwidth agree.
    assert!((figure("fused_gbps") - figure("fused_traffic_gbps")).abs() < 1e-9);
    let checks = json["checks"].as_array().expect("checks");
    assert!(
        checks.iter().any(|c| c["name"] == "all variants match CPU reference" && c["held"] == true),
        "{checks:?}"
    );
    let sizes = json["data"]["sizes"].as_array().expect("data.sizes");
    assert_eq!(sizes.len(), 1 + options.sweep.len());
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    let err = run(&Options { iters: 0, ..Options::quick() }).unwrap_err();
    assert!(matches!(err, ExampleError::Options { option: "iters", .. }), "not the options variant: {err:?}");
    assert!(err.to_string().contains("iters"), "{err}");
}
