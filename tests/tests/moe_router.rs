//! `moe_router` on a real GPU: the device router's fire-and-forget expert graphs and
//! tail-launched combine, and the host-driven routing, both give the CPU model's per-expert
//! token counts and combined output, with one launch per busy expert per step and no
//! device-side launch refused; the report carries the chapter's figures. Speed is not asserted.

use chapter_common::ExampleError;
use moe_router::{run, Options};

#[test]
fn quick_run_passes_and_reports_every_figure() {
    gpu_test_support::require_gpu!();
    let options = Options::quick();
    let report = run(&options).unwrap_or_else(|err| panic!("{err}"));
    assert!(report.passed(), "{}", report.to_text());

    let json = report.to_json();
    assert_eq!(json["verdict"], "PASS");
    let figure = |name: &str| chapter_tests::figure(&report, name);
    for name in ["device_us_per_step", "host_us_per_step", "speedup", "experts_launched_per_step"] {
        let value = figure(name);
        assert!(value.is_finite() && value > 0.0, "{name} = {value}");
    }
    assert_eq!(figure("tokens"), f64::from(options.tokens));
    assert_eq!(figure("experts"), f64::from(options.experts));
    assert!(figure("experts_launched_per_step") <= f64::from(options.experts));
    let checks = json["checks"].as_array().expect("checks");
    for way in ["device routing", "host-driven routing"] {
        for what in [
            "tokens per expert equal the CPU model",
            "combined output equals the CPU model",
            "one launch per busy expert per step",
        ] {
            let name = format!("{way}: {what}");
            assert!(
                checks.iter().any(|c| c["name"] == name.as_str() && c["held"] == true),
                "{name}: {checks:?}"
            );
        }
    }
    let runs = json["data"]["runs_us_per_step"]["device"].as_array().expect("per-run times");
    assert_eq!(runs.len(), options.runs);
    let model = json["data"]["tokens_per_expert"]["model"].as_array().expect("counts per expert");
    let routed: u64 = model.iter().map(|c| c.as_u64().expect("a count")).sum();
    assert_eq!(routed, u64::from(options.tokens * options.top_k));
}

#[test]
fn top_1_routing_passes_too() {
    gpu_test_support::require_gpu!();
    let options = Options { top_k: 1, experts: 5, ..Options::quick() };
    let report = run(&options).unwrap_or_else(|err| panic!("{err}"));
    assert!(report.passed(), "{}", report.to_text());
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    let err = run(&Options { experts: 65, ..Options::quick() }).unwrap_err();
    assert!(
        matches!(err, ExampleError::Options { option: "experts", .. }),
        "not the options variant: {err:?}"
    );
    assert!(err.to_string().contains("experts must be"), "{err}");
}
