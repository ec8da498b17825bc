//! The README's results are the committed run's: each way's row of the table the run wrote
//! (`results/h200-2026-11-29-staged/llama_decode.md`) appears in README.md as it is, and the PyTorch
//! rows carry the twin's medians (`torch.json`), rounded as printed. No GPU needed.

use std::path::Path;

const RUN: &str = "results/h200-2026-11-29-staged";

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

#[test]
fn the_readme_tables_are_the_committed_runs() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = read(&here.join("README.md"));
    let table = read(&here.join(RUN).join("llama_decode.md"));
    let ways: Vec<&str> = table.lines().filter(|line| line.starts_with("| (")).collect();
    assert_eq!(ways.len(), 4, "the run's table has the four ways");
    for row in ways {
        assert!(readme.lines().any(|line| line == row), "README.md lacks the run's row {row:?}");
    }
    let torch: serde_json::Value = serde_json::from_str(&read(&here.join(RUN).join("torch.json"))).unwrap();
    for (way, label) in [
        ("compile", "PyTorch, `torch.compile` (reduce-overhead), its fastest"),
        ("cuda_graph", "PyTorch, one CUDA graph per step"),
        ("eager", "PyTorch, eager"),
    ] {
        let us = torch["us_per_step"][way].as_f64().unwrap_or_else(|| panic!("torch.json: no {way}"));
        let row = format!("| {label} | {us:.1} | {:.1} |", 1e6 / us);
        assert!(readme.lines().any(|line| line.starts_with(&row)), "README.md lacks {row:?}");
    }
    assert_eq!(torch["fastest"], "compile", "the README names compile the twin's fastest");
}
