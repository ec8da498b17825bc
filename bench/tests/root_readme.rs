//! The top README's benchmark table is the committed run's: it must equal what
//! `cuda-graph-bench --readme-table bench/results` prints from `bench/results/bench.csv`.
//! After a new run is committed, paste that command's output into README.md.

use std::path::Path;

/// The package folder, where `cargo test` and `.gpu/run` start tests (the build's own path
/// may not exist where a bundle runs).
const PACKAGE: &str = ".";

#[test]
fn the_top_readmes_table_is_the_committed_bench_csvs() {
    let package = Path::new(PACKAGE);
    let csv = std::fs::read_to_string(package.join("results/bench.csv")).expect("bench/results/bench.csv");
    let readme = std::fs::read_to_string(package.join("../README.md")).expect("README.md");
    let results = cuda_graph_bench_report::Results::parse(&csv).expect("bench.csv parses");
    assert!(!results.runs.is_empty(), "bench.csv has no run");
    let table = cuda_graph_bench_report::root_table::root_readme_table(&results.runs);
    assert!(
        readme.contains(&table),
        "README.md's benchmark table differs from bench/results/bench.csv; replace it with the \
         output of `cargo run -p cuda-graph-bench -- --readme-table bench/results`:\n{table}"
    );
}
