//! `llama_decode --quick` on a real GPU (skipped without one): the tiny model's every check
//! holds (weights, each kernel, every way's tokens equal to (a)'s and to the CPU reference
//! model's, the first step's logits within the tolerance), every way has a positive time, and
//! `--out` writes the report, the table and the twin's dump. Speed is reported, not asserted.

use llama_decode::output::{DUMP_FILE, REPORT_FILE};
use llama_decode::ways::plan;
use llama_decode::{run, Options};

#[test]
fn quick_run_passes_every_check_and_writes_its_outputs() {
    gpu_test_support::require_gpu!();
    let dir = std::env::temp_dir().join(format!("llama-decode-quick-{}", std::process::id()));
    let options = Options { out: Some(dir.clone()), ..Options::quick() };
    let report = run(&options).unwrap_or_else(|err| panic!("{err}"));
    assert!(report.passed(), "{}", report.to_text());

    let (_device, properties) = chapter_common::device_zero().expect("device 0");
    let json = report.to_json();
    let checks = json["checks"].as_array().expect("checks");
    for name in [
        "the tokens equal the CPU reference model's",
        "the first step's logits are within the tolerance of the CPU reference's",
        "the weights the GPU generated equal the CPU hash",
    ] {
        assert!(checks.iter().any(|c| c["name"] == name && c["held"] == true), "{name}: {checks:?}");
    }
    for way in plan(properties.major >= 9) {
        let us = report.figure_value(&format!("{}_us_per_step", way.key())).expect("a figure per way");
        assert!(us.is_finite() && us > 0.0, "{}: {us}", way.key());
    }
    let dump: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(DUMP_FILE)).expect("dump.json"))
            .expect("JSON");
    assert_eq!(dump["tokens"].as_array().expect("tokens").len(), options.tokens);
    assert_eq!(dump["first_logits"].as_array().expect("logits").len(), options.config().vocab);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(REPORT_FILE)).expect("report")).expect("JSON");
    assert_eq!(written["verdict"], "PASS");
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    let err = run(&Options { tokens: 1000, ..Options::quick() }).unwrap_err();
    assert!(matches!(err, chapter_common::ExampleError::Options { option: "tokens", .. }), "{err:?}");
}
