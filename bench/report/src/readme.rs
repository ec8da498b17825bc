//! The results folder's README: where the figures came from, the table, the goals' verdicts.

use std::fmt::Write as _;

use crate::over_runs::GoalOverRuns;
use crate::results::Results;
use crate::table::markdown_table;

/// The README's file name in a results folder.
pub const FILE_NAME: &str = "README.md";

/// The results README of `results`, with the goals decided over its runs (`goals`, set for
/// `set_for`) and then `row_lines` ([`over_runs::row_median_lines`](crate::over_runs::row_median_lines));
/// `chart_note` follows the charts' names (empty when they have text).
pub fn results_readme(
    results: &Results, goals: &[GoalOverRuns], row_lines: &[String], set_for: &str, chart_note: &str,
) -> String {
    let info = &results.info;
    let mut out = String::new();
    let _ = writeln!(out, "# Benchmark results\n");
    let _ = writeln!(out, "Measured on {}, {}, {} ({}).\n", info.device, info.driver, info.date, info.method);
    let _ = writeln!(
        out,
        "Written by `cargo xtask bench` (bench/); the numbers are in `bench.csv`, the charts in"
    );
    let _ = writeln!(out, "`launch_latency.png` and `chain_replay.png`{chart_note}.\n");
    out.push_str(&markdown_table(&results.runs));
    let _ = writeln!(out, "\n## Goals (bench/goals.json, set for {set_for})\n");
    if results.runs.len() > 1 {
        let _ = writeln!(
            out,
            "Each goal is decided in each run, then over the runs: met only if the median of the runs'\n\
             figures meets it and at least half the runs met it.\n"
        );
    }
    for goal in goals {
        // The per-run lines become a nested list.
        let _ = writeln!(out, "- {}", goal.to_string().replace("\n      run ", "\n  - run "));
    }
    if !row_lines.is_empty() {
        let _ = writeln!(
            out,
            "\nThe same limits held to each row as the table gives it (the median over the runs):\n"
        );
        for line in row_lines {
            let _ = writeln!(out, "- {line}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goals::Goals;
    use crate::over_runs;
    use crate::results::{method_line, RunInfo};
    use crate::row::Row;

    fn results(runs: usize) -> Results {
        let run = vec![Row::single(crate::operations::LOOP_WHILE_NODE, "steps=5000", "µs", 4.6, 4.0)];
        Results {
            info: RunInfo {
                device: "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)".into(),
                driver: "driver 580.65.06 (CUDA 13.0), runtime CUDA 13.0".into(),
                date: "2026-01-02 03:04 UTC".into(),
                method: method_line("full", 5, 31, runs),
            },
            runs: vec![run; runs],
        }
    }

    #[test]
    fn the_readme_names_the_device_and_gives_the_goals() {
        let goals = Goals::bench().unwrap();
        let one = results(1);
        let readme =
            results_readme(&one, &over_runs::decide(&goals, &one.runs), &[], &goals.set_for, " (no text)");
        assert!(
            readme.contains("Measured on NVIDIA H100 80GB HBM3 (sm_90, 132 SMs), driver 580.65.06"),
            "{readme}"
        );
        assert!(readme.contains("`chain_replay.png` (no text).\n"), "{readme}");
        assert!(readme.contains("## Goals (bench/goals.json, set for an H100)"), "{readme}");
        assert!(readme.contains("- MISSED   WHILE loop <= 4.5 µs per step (while-loop): median"), "{readme}");
        assert!(readme.contains("\n  - run 1: MISSED: 4.600 µs (samples 4.600-4.600), 2% over"), "{readme}");
        assert!(!readme.contains("decided in each run"), "{readme}");
        let three = results(3);
        let row_lines = over_runs::row_median_lines(&goals, &three.runs);
        let readme =
            results_readme(&three, &over_runs::decide(&goals, &three.runs), &row_lines, &goals.set_for, "");
        assert!(readme.contains("decided in each run, then over the runs"), "{readme}");
        assert!(
            readme.contains("each row as the table gives it (the median over the runs):\n\n- every"),
            "{readme}"
        );
        assert!(!readme.to_lowercase().contains("issue"), "{readme}");
    }
}
