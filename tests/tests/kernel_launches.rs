//! `kernel_launches` on a real GPU: every launch, on the stream and in graphs of every size
//! (with programmatic dependent launch too, on sm_90 and later), ran once and in order, and
//! the report carries the chapter's figures. Speed is not asserted here.

use kernel_launches::{run, Options};

#[test]
fn quick_run_passes_and_reports_every_figure() {
    gpu_test_support::require_gpu!();
    let tests::Run { options, report, json, figure } = tests::quick_run::<kernel_launches::Program>();
    tests::assert_positive_figures(
        &report,
        &[
            "stream_us_per_kernel",
            "graph_us_per_kernel",
            "stream_over_graph",
            "stream_host_us_per_launch",
            "graph_host_us_per_launch",
            "instantiate_us",
        ],
    );
    for nodes in options.graph_sizes() {
        assert!(figure(&format!("graph_{nodes}_us_per_kernel")) > 0.0);
    }
    tests::assert_checks_held(
        &report,
        &[
            "every stream launch ran once, in order",
            "every graph node ran once, in order",
            "stream and graph agree",
        ],
    );
    let variants = json["data"]["variants"].as_array().expect("variants");
    let plain = variants.iter().filter(|v| v["programmatic"] == false).count();
    assert_eq!(plain, 1 + options.graph_sizes().len());
    // Programmatic dependent launch, on devices that run it.
    let sm90 = cuda_graph::Device::get(0).and_then(|d| d.properties()).map(|p| p.major >= 9).unwrap_or(false);
    assert_eq!(variants.len() - plain, if sm90 { 2 } else { 0 });
    if sm90 {
        tests::assert_positive_figures(
            &report,
            &["stream_pdl_us_per_kernel", "graph_pdl_us_per_kernel", "graph_over_graph_pdl"],
        );
        tests::assert_checks_held(&report, &["every programmatic launch and node ran once, in order"]);
        assert!(kernel_launches::headline(&report).contains("programmatic edges"));
    }
}

#[test]
fn invalid_options_are_an_error_not_a_panic() {
    // Refused before any CUDA call, so this needs no GPU.
    tests::assert_refused(run(&Options { sweep: vec![0], ..Options::quick() }), "sweep", "graph sizes");
}
