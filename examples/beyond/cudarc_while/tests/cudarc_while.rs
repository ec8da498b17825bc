//! The example's quick run on a real GPU (skipped without one): both ways agree with the CPU
//! (the run fails otherwise), from PTX and from NVRTC.

#[test]
fn both_ways_match_the_cpu_from_ptx_and_from_nvrtc() {
    gpu_test_support::require_gpu!();
    for nvrtc in [false, true] {
        let report = cudarc_while::run(&cudarc_while::Config { n: 10_000, repeats: 1, nvrtc }).unwrap();
        assert_eq!(report.rounds, cudarc_while::cpu_reference(10_000).1);
        assert_eq!(report.rounds, 261, "the largest stopping time below 10^4 (6171)");
        assert!(report.graph_us_per_round > 0.0 && report.host_us_per_round > 0.0);
    }
}
