//! `cuda_graphs_conditional` on a real GPU: the bodies of the IF, IF/ELSE, nested IF and
//! SWITCH nodes run exactly as the CPU model says for every input, and the WHILE loop and the
//! two host-driven loops (mapped flag, copied flag) all stop where the model does with its
//! values. Speed is not asserted: the WHILE step's goal is reported, not checked.

use cuda_graphs_conditional::{run, Options, Program};

#[test]
fn quick_run_passes_and_reports_every_figure() {
    gpu_test_support::require_gpu!();
    let tests::Run { options, report, json, figure } = tests::quick_run::<Program>();
    tests::assert_positive_figures(
        &report,
        &[
            "while_over_mapped_per_step",
            "while_us_per_step",
            "mapped_loop_us_per_step",
            "copy_loop_us_per_step",
            "while_over_copy_per_step",
            "while_ms",
            "mapped_loop_ms",
            "copy_loop_ms",
            "routing_ms_per_launch",
        ],
    );
    // The headline ratio is the mapped-flag loop's step over the WHILE step, of the same run.
    let ratio = figure("mapped_loop_us_per_step") / figure("while_us_per_step");
    assert!((figure("while_over_mapped_per_step") - ratio).abs() <= 1e-9 * ratio, "{ratio}");
    // Every WHILE figure in both units: per sweep and per WHILE iteration (K sweeps), the
    // iteration being the loop's time over its iterations.
    let per_iteration = figure("while_us_per_iteration");
    let want = figure("while_ms") * 1000.0 / figure("while_iterations");
    assert!((per_iteration - want).abs() <= 1e-9 * want, "{per_iteration} vs {want}");
    assert!(per_iteration >= figure("while_us_per_step"));
    tests::assert_positive_figures(&report, &["mapped_loop_us_per_round", "copy_loop_us_per_round"]);
    // Each goal judged in its own unit: per sweep at K = 4 (the default), per iteration always.
    let goal = &json["data"]["while_step_goal"];
    assert_eq!(goal["at_most_us"], 4.5);
    assert_eq!(goal["sweeps_per_iteration"], options.unroll);
    assert_eq!(goal["per_sweep"]["met"], figure("while_us_per_step") <= 4.5, "{goal}");
    assert_eq!(goal["per_iteration"]["met"], per_iteration <= 4.5, "{goal}");
    let headline = cuda_graphs_conditional::headline(&report);
    assert!(headline.contains("over mapped-flag host loop"), "{headline}");
    assert!(
        headline.contains("per iteration of 4 sweeps") && headline.contains("µs/iteration"),
        "{headline}"
    );
    assert!(
        headline.contains("per sweep at 4 sweeps per iteration: ") && headline.contains("; per iteration: ")
    );
    let notes: Vec<&str> =
        json["notes"].as_array().expect("notes").iter().filter_map(|n| n.as_str()).collect();
    for unit in ["goal (H100) per sweep, at 4 sweeps", "goal (H100) per WHILE iteration: "] {
        let line = notes.iter().find(|n| n.starts_with(unit)).unwrap_or_else(|| panic!("{unit}: {notes:?}"));
        assert!(line.contains("µs per sweep (runs") && line.contains("µs per"), "{line}");
        assert!(line.contains(&format!("{per_iteration:.2} µs per")), "{line}");
    }
    assert!(figure("while_steps") >= 2.0);
    assert_eq!(figure("sweeps_per_round"), f64::from(options.unroll));
    assert_eq!(figure("routing_inputs"), f64::from(options.inputs));
    // Every body ran at least once (the first 64 inputs cover every path).
    let bodies = json["data"]["bodies"].as_object().expect("data.bodies");
    assert_eq!(bodies.len(), 8);
    assert!(bodies.values().all(|count| count.as_u64().unwrap_or(0) > 0), "{bodies:?}");
    tests::assert_checks_held(
        &report,
        &[
            "bodies that ran equal the CPU model",
            "WHILE loop equals the CPU model",
            "mapped-flag host loop equals the CPU model",
            "copy host loop equals the CPU model",
        ],
    );
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    tests::assert_refused(run(&Options { size: 4096, ..Options::quick() }), "size", "one block");
}

#[test]
fn one_sweep_a_body_is_judged_per_iteration_only() {
    gpu_test_support::require_gpu!();
    let tests::Run { report, json, figure, .. } =
        tests::passing_run::<Program>(Options { unroll: 1, ..Options::quick() });
    // One sweep an iteration: the two units are the same figure.
    assert_eq!(figure("while_us_per_iteration"), figure("while_us_per_step"));
    assert_eq!(figure("while_iterations"), figure("while_steps"));
    let goal = &json["data"]["while_step_goal"];
    assert!(goal["per_sweep"]["met"].is_null(), "stated at 4 sweeps: {goal}");
    assert_eq!(goal["per_iteration"]["met"], figure("while_us_per_iteration") <= 4.5, "{goal}");
    let headline = cuda_graphs_conditional::headline(&report);
    assert!(headline.contains("not judged (1 sweep per iteration here); per iteration: "), "{headline}");
}
