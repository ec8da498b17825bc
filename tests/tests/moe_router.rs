//! `moe_router` on a real GPU: the device router's fire-and-forget expert graphs and
//! tail-launched combine, and the host-driven routing, both give the CPU model's per-expert
//! token counts and combined output, with one launch per busy expert per step and no
//! device-side launch refused; the report carries the chapter's figures. Speed is not asserted.

use moe_router::{run, Options};

#[test]
fn quick_run_passes_and_reports_every_figure() {
    gpu_test_support::require_gpu!();
    let tests::Run { options, report, json, figure } = tests::quick_run::<moe_router::Program>();
    tests::assert_positive_figures(
        &report,
        &["device_us_per_step", "host_us_per_step", "speedup", "experts_launched_per_step"],
    );
    assert_eq!(figure("tokens"), f64::from(options.tokens));
    assert_eq!(figure("experts"), f64::from(options.experts));
    assert!(figure("experts_launched_per_step") <= f64::from(options.experts));
    for way in ["device routing", "host-driven routing"] {
        let whats = [
            "tokens per expert equal the CPU model",
            "combined output equals the CPU model",
            "one launch per busy expert per step",
        ];
        tests::assert_checks_held(&report, &whats.map(|what| format!("{way}: {what}")));
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
    tests::passed(run(&options));
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    tests::assert_refused(run(&Options { experts: 65, ..Options::quick() }), "experts", "experts must be");
}
