//! The README's results are the committed run's: each way's row of the table the run wrote
//! (`results/h200-2026-11-29-paired/llama_decode.md`) appears in README.md as it is, and the PyTorch
//! rows carry the twin's medians (`torch.json`), rounded as printed; the README's verdicts are
//! the run's goal lines (`llama_decode.log`). No GPU needed.

use std::path::Path;

const RUN: &str = "results/h200-2026-11-29-paired";

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

/// The README's item that starts with `start` (a line of a list), to the next item or paragraph,
/// its lines joined by spaces.
fn readme_item(readme: &str, start: &str) -> String {
    let mut lines = readme.lines().skip_while(|l| !l.starts_with(start));
    let first = lines.next().unwrap_or_else(|| panic!("README.md has no item {start:?}"));
    let rest = lines.take_while(|l| l.starts_with("  "));
    std::iter::once(first).chain(rest).map(str::trim).collect::<Vec<_>>().join(" ")
}

/// The run's goal line that starts with `goal` (after "note: "), without `goal`.
fn goal_line<'a>(log: &'a str, goal: &str) -> &'a str {
    let line = log.lines().find_map(|l| l.trim().strip_prefix("note: ")?.strip_prefix(goal));
    line.unwrap_or_else(|| panic!("the run's log has no {goal:?} line"))
}

#[test]
fn the_readme_verdicts_are_the_committed_runs() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = read(&here.join("README.md"));
    let log = read(&here.join(RUN).join("llama_decode.log"));

    let line = goal_line(&log, "goal (d) <= 760 us/step: ");
    let item = readme_item(&readme, "- (d) ≤ 760 µs per step: ");
    assert_eq!(
        item.contains(": **met**"),
        line.starts_with("met "),
        "the run says {line}; README.md says {item}"
    );
    let stretch = goal_line(&log, "stretch (d) <= 700 us/step and >= 70% of peak: ");
    assert_eq!(
        item.contains("Stretch (≤ 700 µs and ≥ 70% of peak): not met"),
        stretch.starts_with("NOT met"),
        "{stretch}"
    );

    // (d) faster than (b): the README may judge it over more processes than the committed run,
    // but it quotes the run's own pairs and, where the run does not say met, the run's word.
    let line = goal_line(&log, "goal (d) faster than (b): ");
    let item = readme_item(&readme, "- (d) faster than (b): ");
    let pairs = line.split("; ").find(|p| p.starts_with("(d) faster in ")).expect("the run's pairs");
    let pairs = pairs.split(',').next().unwrap_or_default().trim_end_matches(" of runs");
    assert!(item.contains(pairs), "README.md's verdict lacks the run's {pairs:?}: {item}");
    let p = line.split("sign test ").nth(1).and_then(|t| t.split(';').next()).expect("the run's p");
    assert!(item.contains(&format!("sign test {p}")), "README.md's verdict lacks the run's {p:?}: {item}");
    if line.starts_with("NOT shown, a tie") {
        assert!(item.contains("calls a tie"), "the run calls it a tie; README.md says {item}");
    } else if line.starts_with("NOT met") {
        assert!(!item.contains("**met"), "the run says {line}; README.md says {item}");
    }

    // The agreement at the kernels' precision, as torch.json has it.
    let torch: serde_json::Value = serde_json::from_str(&read(&here.join(RUN).join("torch.json"))).unwrap();
    let agreement = &torch["agreement"];
    let steps = agreement["tokens_equal_steps"].as_u64().expect("tokens_equal_steps");
    let item = readme_item(&readme, "- Agreement with the twin, at the kernels' precision: ");
    if steps == agreement["steps_compared"].as_u64().expect("steps_compared") {
        assert!(item.contains(&format!("**all {steps}")), "{item}");
    } else {
        assert!(item.contains(&format!("first {steps} ")), "{item}");
    }
    let float64 = &agreement["float64"];
    for key in ["rust_max_abs_diff", "twin_fp32_max_abs_diff"] {
        let value = format!("{:.1e}", float64[key].as_f64().expect(key));
        assert!(item.contains(&value), "README.md lacks {key} {value}: {item}");
    }
    let within = float64["rust_within"].as_bool().expect("rust_within");
    assert_eq!(item.contains("(**within** the criterion"), within, "{item}");
}
