//! The quick preset on every GPU of the host, checked against the CPU.

#[test]
fn the_quick_preset_matches_the_cpu_on_every_gpu() {
    gpu_test_support::require_gpu!();
    if let Err(err) = cuda_graph_nccl::version() {
        assert!(std::env::var("REQUIRE_NCCL").map_or(true, |v| v != "1"), "REQUIRE_NCCL=1 but {err}");
        eprintln!("skipped: {err}: the_quick_preset_matches_the_cpu_on_every_gpu");
        return;
    }
    // Before NCCL reads the environment (the only test of this binary).
    multi_gpu_solve::nccl_environment();
    let config = multi_gpu_solve::problem::Config::quick();
    let report = multi_gpu_solve::run(&config, 2).unwrap_or_else(|err| panic!("{err}"));
    eprintln!("{report:#?}");
    assert_eq!(report.ranks as i32, cuda_graph::Device::count().unwrap());
    assert!(report.passed(), "{report:#?}");
    assert!(report.graph.us_per_pass > 0.0 && report.host.us_per_pass > 0.0, "{report:#?}");
}
