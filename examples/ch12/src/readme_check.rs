//! The chapter tables hold the committed runs' figures (the ports' in the top README, the
//! listings' in ch12's own README):
//! each program's "median ratio", "five runs" and headline columns are recomputed here from the
//! saved `ch12 --json` outputs under `results/`, for the ports' own workloads and for the
//! chapter listings' (`--book`), and the test fails where the README says otherwise.

use std::path::{Path, PathBuf};

use crate::summary::{collect, Column, ProgramRuns};

/// The package folder, where `cargo test` and `.gpu/run` start tests (the build's own path
/// may not exist where a bundle runs).
const PACKAGE: &str = ".";

/// The committed run sets, the later ones taking precedence for the programs they hold.
const RUN_SETS: [&str; 1] = ["results/h200-2026-11-28"];

fn runs_of(dir: &Path, column: Column) -> Vec<ProgramRuns> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "txt"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 5, "{}: five runs", dir.display());
    let values: Vec<serde_json::Value> = files
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(file).expect("readable");
            text.lines()
                .rev()
                .find_map(|line| serde_json::from_str::<serde_json::Value>(line.trim()).ok())
                .unwrap_or_else(|| panic!("{}: no JSON line", file.display()))
        })
        .collect();
    collect(&values, column).expect("ch12 JSON")
}

/// Every program's runs of `column`, a later set replacing an earlier one's entry.
fn committed(column: Column) -> Vec<ProgramRuns> {
    let here = Path::new(PACKAGE);
    let mut programs: Vec<ProgramRuns> = Vec::new();
    for set in RUN_SETS {
        for program in runs_of(&here.join(set), column) {
            programs.retain(|known| known.program != program.program);
            programs.push(program);
        }
    }
    programs
}

/// The header line of the ports' table and of the listings' table.
const PORT_HEADER: &str =
    "| program | median ratio | five runs | the median run's headline | chapter's claim |\n";
const BOOK_HEADER: &str = "| program | median ratio | five runs | the median run's headline |\n";

/// The rows of the README table under `header`: program, median ratio cell, five-runs cell,
/// headline cell.
fn readme_rows(readme: &str, header: &str) -> Vec<[String; 4]> {
    let start = readme.find(header).unwrap_or_else(|| panic!("README.md has no table headed {header}"));
    readme[start..]
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<String> =
                line.trim_matches('|').split(" | ").map(|cell| cell.trim().to_string()).collect();
            [cells[0].clone(), cells[1].clone(), cells[2].clone(), cells[3].clone()]
        })
        .collect()
}

/// What the README should say for `program`: the median cell, the five-runs cell, the headline
/// of the median run.
fn expected(program: &ProgramRuns) -> (String, String, String) {
    match program.median() {
        None => (
            "-".to_string(),
            "(no ratio)".to_string(),
            program.headlines[(program.headlines.len() - 1) / 2].clone(),
        ),
        Some(median) => {
            let runs: Vec<String> = program
                .ratios
                .iter()
                .map(|r| r.map_or_else(|| "-".to_string(), |v| format!("{v:.2}")))
                .collect();
            (
                format!("**{median:.2}x**"),
                runs.join(", "),
                program.median_headline().unwrap_or_default().to_string(),
            )
        }
    }
}

fn mismatches(readme: &str, header: &str, programs: &[ProgramRuns]) -> Vec<String> {
    let rows = readme_rows(readme, header);
    let mut problems = Vec::new();
    for program in programs {
        let Some(row) = rows.iter().find(|row| row[0] == program.program) else {
            problems.push(format!("{}: not in the README's table", program.program));
            continue;
        };
        let (median, runs, headline) = expected(program);
        for (what, said, want) in [
            ("median ratio", &row[1], &median),
            ("five runs", &row[2], &runs),
            ("headline", &row[3], &headline),
        ] {
            if said != want {
                problems.push(format!(
                    "{} {what}: README says `{said}`, the committed runs give `{want}`",
                    program.program
                ));
            }
        }
    }
    for row in &rows {
        if !programs.iter().any(|program| program.program == row[0]) {
            problems.push(format!("{}: in the README's table but in no committed run", row[0]));
        }
    }
    problems
}

#[test]
fn the_readmes_ch12_table_matches_the_committed_runs() {
    let readme = std::fs::read_to_string(Path::new(PACKAGE).join("../../README.md")).expect("README.md");
    let programs = committed(Column::Port);
    assert_eq!(programs.len(), 14, "every program has committed runs");
    let problems = mismatches(&readme, PORT_HEADER, &programs);
    assert!(problems.is_empty(), "README.md's ch12 table:\n{}", problems.join("\n"));
    let listings = committed(Column::Book);
    assert!(listings.len() >= 5, "the five programs with a listing have --book runs");
    let ours =
        std::fs::read_to_string(Path::new(PACKAGE).join("README.md")).expect("examples/ch12/README.md");
    let problems = mismatches(&ours, BOOK_HEADER, &listings);
    assert!(
        problems.is_empty(),
        "examples/ch12/README.md's table of the listings' workloads:\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_changed_figure_is_caught() {
    let readme = std::fs::read_to_string(Path::new(PACKAGE).join("../../README.md")).expect("README.md");
    let programs = committed(Column::Port);
    let kernel_fusion = programs.iter().find(|p| p.program == "kernel_fusion").expect("kernel_fusion");
    let (median, runs, _) = expected(kernel_fusion);
    let row = format!("| kernel_fusion | {median} | {runs} |");
    assert!(readme.contains(&row), "{row}");
    let bad_median = readme.replace(&row, &format!("| kernel_fusion | **9.99x** | {runs} |"));
    assert!(mismatches(&bad_median, PORT_HEADER, &programs)
        .iter()
        .any(|p| p.starts_with("kernel_fusion median ratio")));
    let bad_runs = readme.replace(&row, &format!("| kernel_fusion | {median} | 9.99, {runs} |"));
    assert!(mismatches(&bad_runs, PORT_HEADER, &programs)
        .iter()
        .any(|p| p.starts_with("kernel_fusion five runs")));
}
