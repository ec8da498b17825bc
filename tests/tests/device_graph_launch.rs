//! `device_graph_launch` on a real GPU: every launch mode (host with and without a sync,
//! device fire-and-forget, tail, sibling, batched fire-and-forget, the bare self-relaunch loop)
//! runs every node of every iteration at every width, no device-side launch is refused in the
//! timed loops, and each limit hit on purpose comes back as the expected device-side error.
//! Speed is not asserted here.

use device_graph_launch::{run, Mode, Options};

#[test]
fn quick_run_passes_and_reports_every_figure() {
    gpu_test_support::require_gpu!();
    // Under a sanitizer every device-side launch is slow: quick_run takes the sanitizer options
    // there, as ch12 does.
    let tests::Run { options, report, json, figure } = tests::quick_run::<device_graph_launch::Program>();
    for width in &options.widths {
        let mut names: Vec<String> =
            options.modes.iter().map(|m| format!("{}_us_w{width}", m.name())).collect();
        names.push(format!("ff_over_host_w{width}"));
        tests::assert_positive_figures(&report, &names);
    }
    let mut ratios = vec!["ff_over_host"];
    if options.modes.contains(&Mode::FireAndForgetBatch) {
        ratios.push("ff_batched_over_host");
    }
    tests::assert_positive_figures(&report, &ratios);
    assert_eq!(figure("widest"), f64::from(options.widest()));
    let mut names: Vec<String> =
        options.modes.iter().map(|m| format!("{}: every iteration ran", m.name())).collect();
    names.extend(
        [
            "121st fire-and-forget launch refused and reported",
            "256th tail launch refused and reported",
            "second launch of a pending graph refused and reported",
        ]
        .map(String::from),
    );
    tests::assert_checks_held(&report, &names);
    // The expected refusals name CUDA's error.
    let checks = json["checks"].as_array().expect("checks");
    let limit =
        checks.iter().find(|c| c["name"] == "121st fire-and-forget launch refused and reported").unwrap();
    assert!(limit["detail"].as_str().unwrap().contains("cudaErrorInvalidValue"), "{limit}");
    let table = json["data"]["us_per_iter"].as_object().expect("per-width table");
    assert_eq!(table.len(), options.widths.len());
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    tests::assert_refused(run(&Options { widths: vec![0], ..Options::quick() }), "widths", "widths must be");
}
