//! The report made from a committed results folder's `bench.csv` is the folder's README: the
//! same table, and the same goals with the same verdicts and figures, per run and over the
//! runs. Only the goal lines' wording has changed since those runs were committed: each goal
//! line now names its goal (` (rust-over-cpp)`), the heading names the goals file, and no goal
//! is prefixed with the tracker's number it came from any more; the comparison takes those
//! out. The lines that hold each row, taken over the runs, to the worst-ratio goal's limit
//! came later too: the READMEs of folders written before are made here without them. The committed files are history
//! and stay as written.

use std::path::Path;

use cuda_graph_bench_report::{over_runs, readme, Goals, Results};

/// The committed results folders, from this package's folder (where `cargo test` and
/// `.gpu/run` start tests).
const FOLDERS: [&str; 6] = [
    "../results",
    "../results/pdl-h100-2026-11-26",
    "../results/h200-2026-11-29-pairs-1",
    "../results/h200-2026-11-29-pairs-2",
    "../results/h200-2026-11-29-pairs-3",
    "../results/h200-2026-11-29-pairs-4",
];

/// `text` without a goal's old prefix: `(issue ` and digits, `) `.
fn without_tracker_prefixes(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("(issue ") {
        let after = &rest[at + "(issue ".len()..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        out.push_str(&rest[..at]);
        match after[digits..].strip_prefix(") ") {
            Some(tail) if digits > 0 => rest = tail,
            _ => {
                out.push_str("(issue ");
                rest = after;
            }
        }
    }
    out + rest
}

/// `text` without what only the wording changed: the heading of the goals, the goals' old
/// prefixes, the goals' names, and the note on the charts' text (it depends on the fonts of
/// the machine that drew them).
fn wording_aside(text: &str, goals: &Goals) -> String {
    let mut text = without_tracker_prefixes(text);
    for goal in &goals.goals {
        text =
            text.replace(&format!(" ({}): ", goal.name), ": ").replace(&format!(" ({})\n", goal.name), "\n");
    }
    text.replace(cuda_graph_bench_report::chart::NO_TEXT_NOTE, "")
        .lines()
        .filter(|line| !line.starts_with("## Goals"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn old_prefixes_are_taken_out_and_nothing_else() {
    let old = ["- met      (issue", " 24) 100-node chain; (issue x) stays"].concat();
    assert_eq!(without_tracker_prefixes(&old), "- met      100-node chain; (issue x) stays");
}

/// The heading of the row lines in a results README.
const ROW_LINES_HEADING: &str = "The same limits held to each row as the table gives it";

#[test]
fn the_committed_readmes_are_what_the_report_makes_of_their_csvs() {
    let goals = Goals::bench().unwrap();
    for folder in FOLDERS {
        let dir = Path::new(folder);
        let results = Results::read(dir).unwrap_or_else(|err| panic!("{folder}: {err}"));
        let committed = std::fs::read_to_string(dir.join("README.md")).unwrap();
        let decided = over_runs::decide(&goals, &results.runs);
        // Folders written before the row lines existed are made without them.
        let row_lines = if committed.contains(ROW_LINES_HEADING) {
            over_runs::row_median_lines(&goals, &results.runs)
        } else {
            Vec::new()
        };
        let made = readme::results_readme(&results, &decided, &row_lines, &goals.set_for, "");
        assert!(made.contains("(rust-over-cpp): median over"), "{made}");
        assert_eq!(wording_aside(&made, &goals), wording_aside(&committed, &goals), "{folder}");
    }
}

#[test]
fn the_committed_csvs_read_back_whole() {
    for folder in FOLDERS {
        let csv = std::fs::read_to_string(Path::new(folder).join("bench.csv")).unwrap();
        let results = Results::parse(&csv).unwrap();
        assert!(results.runs.iter().all(|run| run.len() > 30), "{folder}: every run has its rows");
        assert_eq!(results.csv(), csv, "{folder}: written again, the file is the same to the byte");
    }
}
