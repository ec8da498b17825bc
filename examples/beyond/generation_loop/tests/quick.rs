//! `generation_loop` on a real GPU, quick preset: every way produces the CPU reference's
//! tokens, token for token, at every batch size, and `--out` writes what the PyTorch twin
//! reads and what `--redraw` draws. Speed is reported, not asserted.

use chapter_common::ExampleError;
use generation_loop::ways::Plan;
use generation_loop::{export, redraw, run, Options};

#[test]
fn quick_run_matches_the_reference_every_way_and_writes_its_outputs() {
    gpu_test_support::require_gpu!();
    if gpu_test_support::sanitizer_tool().as_deref() == Some("racecheck") {
        // racecheck's process dies with SIGSEGV on a thread of the tool's own
        // (libsanitizer-collection.so), 0 hazards reported, even at --batches 1 --max-len 2;
        // memcheck, synccheck and initcheck run this test, and tests/each_way.rs runs the
        // same kernels under racecheck through the host-driven ways (RELIABILITY.md, "Sanitizers").
        eprintln!("skipped under racecheck: the tool's process dies on this program (RELIABILITY.md)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("generation-loop-quick-{}", std::process::id()));
    let options = Options { out: Some(dir.clone()), ..Options::quick() };
    let report = run(&options).unwrap_or_else(|err| panic!("{err}"));
    assert!(report.passed(), "{}", report.to_text());

    // (d) and the programmatic probes run where the device has programmatic dependent launch.
    let (_device, properties) = chapter_common::device_zero().expect("device 0");
    let plan = Plan::new(properties.major >= 9);
    let json = report.to_json();
    let checks = json["checks"].as_array().expect("checks");
    let generating = plan.probes.iter().filter(|p| p.generates()).map(|p| p.label());
    for label in plan.ways.iter().map(|w| w.label()).chain(generating) {
        let name = format!("{label} equals the CPU reference token for token");
        assert!(checks.iter().any(|c| c["name"] == name.as_str() && c["held"] == true), "{name}: {checks:?}");
    }
    let rows = generation_loop::results::rows_from(&json["data"]["rows"], "report").expect("rows");
    assert_eq!(rows.len(), options.batches.len() * plan.ways.len());
    let profile = json["data"]["profile"].as_array().expect("data.profile");
    assert_eq!(profile.len(), options.batches.len());
    for entry in profile {
        for probe in &plan.probes {
            let median = entry[probe.key()]["median"].as_f64().unwrap_or(f64::NAN);
            assert!(median.is_finite() && median > 0.0, "{}: {entry}", probe.key());
        }
    }
    for row in &rows {
        assert!(row.us_per_step.is_finite() && row.us_per_step > 0.0, "{row:?}");
        assert!(row.tokens_per_s.is_finite() && row.tokens_per_s > 0.0, "{row:?}");
        assert!((1..=options.max_len).contains(&row.steps), "{row:?}");
        assert_eq!(row.runs, options.runs, "{row:?}");
    }
    let ratio = report.figure_value("while_over_graph_per_step").expect("the headline figure");
    assert!(ratio.is_finite() && ratio > 0.0, "{ratio}");

    // What the twin reads, and the report the redraw reads.
    let weights = std::fs::metadata(dir.join(export::WEIGHTS_FILE)).expect("weights.bin").len();
    let header: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(export::MODEL_FILE)).unwrap()).unwrap();
    let floats: u64 = header["tensors"].as_array().unwrap().iter().map(|t| t["len"].as_u64().unwrap()).sum();
    assert_eq!(weights, 4 * floats);
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(export::EXPECTED_FILE)).unwrap()).unwrap();
    assert_eq!(expected["tokens"].as_array().unwrap().len(), 4);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(redraw::REPORT_FILE)).unwrap()).unwrap();
    assert_eq!(written["verdict"], "PASS");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    let err = run(&Options { batches: vec![128], ..Options::quick() }).unwrap_err();
    assert!(
        matches!(err, ExampleError::Options { option: "batches", .. }),
        "not the options variant: {err:?}"
    );
    assert!(err.to_string().contains("1..=64"), "{err}");
}
