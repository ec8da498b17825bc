//! `llama_decode --quick` on a real GPU (skipped without one): the tiny model's every check
//! holds (weights, each kernel, every way's tokens equal to (a)'s and to the CPU reference
//! model's, the first step's logits within the tolerance), every way has a positive time, and
//! `--out` writes the report, the table and the twin's dump. Speed is reported, not asserted.

use llama_decode::output::{DUMP_FILE, REPORT_FILE};
use llama_decode::ways::plan;
use llama_decode::{run, Options};

/// Whether this test must skip: racecheck's process dies on programs whose WHILE graphs set
/// their condition from a kernel (a fault of the tool's, RELIABILITY.md, "Sanitizers"); the
/// kernels' shared memory is checked under racecheck by tests/kernels.rs, which launches every
/// kernel on a stream.
fn skipped_under_racecheck() -> bool {
    let racecheck = gpu_test_support::sanitizer_tool().as_deref() == Some("racecheck");
    if racecheck {
        eprintln!("skipped under racecheck: the tool's process dies on WHILE graphs (RELIABILITY.md)");
    }
    racecheck
}

#[test]
fn quick_run_passes_every_check_and_writes_its_outputs() {
    gpu_test_support::require_gpu!();
    if skipped_under_racecheck() {
        return;
    }
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

/// The WHILE ways run whole bodies of several steps, then a loop of one step for what is left:
/// N not a multiple of the body, N below it, and N up to the sequence's room (the tiny model's
/// cache holds 56 tokens after the prompt) each give N tokens equal to (a)'s.
#[test]
fn while_bodies_of_several_steps_stop_at_n_whatever_n_is() {
    gpu_test_support::require_gpu!();
    if skipped_under_racecheck() {
        return;
    }
    let room = Options::quick().config().max_seq - llama_decode::PROMPT_LEN;
    for (tokens, steps_per_iteration) in [(30, 4), (3, 4), (room, 5), (room, 1), (room, 16)] {
        let options = Options { tokens, steps_per_iteration, runs: 1, ..Options::quick() };
        let report = run(&options).unwrap_or_else(|err| panic!("{err}"));
        assert!(report.passed(), "{tokens} tokens, {steps_per_iteration} a body: {}", report.to_text());
        let json = report.to_json();
        let checks = json["checks"].as_array().expect("checks");
        let (_device, properties) = chapter_common::device_zero().expect("device 0");
        for way in plan(properties.major >= 9) {
            let held = checks
                .iter()
                .any(|c| c["held"] == true && c["name"].as_str().is_some_and(|n| n.starts_with(way.label())));
            assert!(held, "{tokens} tokens, {}: no held check of its tokens: {checks:?}", way.key());
        }
    }
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    let err = run(&Options { tokens: 1000, ..Options::quick() }).unwrap_err();
    assert!(matches!(err, chapter_common::ExampleError::Options { option: "tokens", .. }), "{err:?}");
}
