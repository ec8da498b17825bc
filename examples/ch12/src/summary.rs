//! `ch12 --summarize FILE...`: the median of several runs' headline ratios, from the JSON
//! objects `ch12 --json` printed, so a README's headline comes from committed outputs and not
//! from the last (or best) run: one table for the ports' own workloads and, when the runs hold
//! any, one for the chapter listings' (`--book`). Outputs written before the listings' runs
//! existed (no `book` in a row) still read.

use std::fmt::Write as _;

use serde_json::Value;

/// The first `N.NNx` figure in a headline (`"dynamic 4.22x over static (…)"` gives 4.22): the
/// ratio each program leads with.
pub fn headline_ratio(headline: &str) -> Option<f64> {
    headline.split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ',' | ';')).find_map(|word| {
        let number = word.strip_suffix('x')?;
        number.parse::<f64>().ok().filter(|value| value.is_finite())
    })
}

/// One program across runs: its headline ratio in each run (`None` where a run has no ratio or
/// did not pass) and the headline of the median run.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgramRuns {
    pub program: String,
    pub ratios: Vec<Option<f64>>,
    pub passed: usize,
    pub headlines: Vec<String>,
}

impl ProgramRuns {
    /// The median of the runs' ratios (the lower middle for an even count), if any run had one.
    pub fn median(&self) -> Option<f64> {
        let mut values: Vec<f64> = self.ratios.iter().flatten().copied().collect();
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        Some(values[(values.len() - 1) / 2])
    }

    /// The headline of a run whose ratio is the median.
    pub fn median_headline(&self) -> Option<&str> {
        let median = self.median()?;
        let index = self.ratios.iter().position(|ratio| *ratio == Some(median))?;
        self.headlines.get(index).map(String::as_str)
    }
}

/// Which run of each program a summary reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// The port's own workload: the row's `check` and `headline` (absent when "NOT RUN").
    Port,
    /// The chapter listing's: the row's `book.check` and `book.headline` (absent when the
    /// listing did not run, or in outputs from before `--book`).
    Book,
}

impl Column {
    /// The run's check and headline in `row`, if this column ran.
    fn of(self, row: &Value) -> Option<(&str, &str)> {
        let cell = match self {
            Column::Port => row,
            Column::Book => row.get("book")?,
        };
        let check = cell.get("check")?.as_str()?;
        (check != "NOT RUN").then(|| (check, cell["headline"].as_str().unwrap_or_default()))
    }
}

/// Reads the `programs` of each run's JSON (in run order) into one entry per program that ran
/// in `column`.
pub fn collect(runs: &[Value], column: Column) -> Result<Vec<ProgramRuns>, String> {
    let mut programs: Vec<ProgramRuns> = Vec::new();
    for (run, value) in runs.iter().enumerate() {
        let rows = value["programs"].as_array().ok_or(format!("run {}: no \"programs\" array", run + 1))?;
        for row in rows {
            let name =
                row["program"].as_str().ok_or(format!("run {}: a row without \"program\"", run + 1))?;
            let Some((check, headline)) = column.of(row) else { continue };
            let headline = headline.to_string();
            let passed = check == "PASS";
            let entry = match programs.iter_mut().position(|p| p.program == name) {
                Some(index) => &mut programs[index],
                None => {
                    programs.push(ProgramRuns {
                        program: name.to_string(),
                        ratios: vec![None; run],
                        passed: 0,
                        headlines: vec![String::new(); run],
                    });
                    programs.last_mut().expect("just pushed")
                }
            };
            entry.ratios.resize(run, None);
            entry.headlines.resize(run, String::new());
            entry.ratios.push(if passed { headline_ratio(&headline) } else { None });
            entry.headlines.push(headline);
            entry.passed += passed as usize;
        }
    }
    for entry in &mut programs {
        entry.ratios.resize(runs.len(), None);
        entry.headlines.resize(runs.len(), String::new());
    }
    Ok(programs)
}

/// The summary as a Markdown table: program, runs passed, each run's ratio, the median, and the
/// median run's headline.
pub fn render(programs: &[ProgramRuns], runs: usize) -> String {
    let mut out =
        String::from("| program | passed | headline ratio per run | median | median run's headline |\n");
    out += "|---|---:|---|---:|---|\n";
    for p in programs {
        let ratios: Vec<String> =
            p.ratios.iter().map(|r| r.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"))).collect();
        let median = p.median().map_or_else(|| "-".to_string(), |m| format!("**{m:.2}x**"));
        let _ = writeln!(
            out,
            "| {} | {}/{runs} | {} | {median} | {} |",
            p.program,
            p.passed,
            ratios.join(", "),
            p.median_headline().unwrap_or("-")
        );
    }
    out
}

/// `ch12 --summarize FILE...`: each file holds one run's output; its last line that parses
/// as JSON is that run's table.
pub fn summarize(files: &[std::path::PathBuf]) -> Result<String, String> {
    let mut runs = Vec::new();
    for file in files {
        let text =
            std::fs::read_to_string(file).map_err(|err| format!("cannot read {}: {err}", file.display()))?;
        let value = text
            .lines()
            .rev()
            .find_map(|line| {
                serde_json::from_str::<Value>(line.trim()).ok().filter(|v| v.get("programs").is_some())
            })
            .ok_or(format!("{}: no line with ch12's JSON table (run ch12 with --json)", file.display()))?;
        runs.push(value);
    }
    let mut out = render(&collect(&runs, Column::Port)?, runs.len());
    let book = collect(&runs, Column::Book)?;
    if !book.is_empty() {
        out += "\nThe chapter listings' workloads (--book):\n\n";
        out += &render(&book, runs.len());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_ratio_of_a_headline_is_its_ratio() {
        assert_eq!(headline_ratio("dynamic 4.22x over static (0.40 vs 1.70 ms)"), Some(4.22));
        assert_eq!(headline_ratio("overlap 2.40x (3.93 vs 1.64 ms); priority 30.9x"), Some(2.40));
        assert_eq!(headline_ratio("graph 0.93 vs stream 3.44 µs per kernel (3.68x)"), Some(3.68));
        assert_eq!(headline_ratio("graph scratch peak 32 MiB vs 80 MiB"), None);
        assert_eq!(headline_ratio("not run: no CUDA device"), None);
    }

    #[test]
    fn book_runs_are_their_own_column_and_old_outputs_have_none() {
        let runs = [
            json!({"programs": [
                {"program": "a", "check": "PASS", "headline": "x 3.00x",
                 "book": {"kind": "preset", "check": "PASS", "headline": "y 1.50x"}},
                {"program": "b", "check": "PASS", "headline": "z 2.00x", "book": {"kind": "no listing"}},
            ]}),
            json!({"programs": [
                {"program": "a", "check": "NOT RUN", "headline": "",
                 "book": {"kind": "preset", "check": "PASS", "headline": "y 1.70x"}},
            ]}),
            json!({"programs": [{"program": "a", "check": "PASS", "headline": "x 4.00x"}]}),
        ];
        let port = collect(&runs, Column::Port).unwrap();
        assert_eq!(port.len(), 2);
        assert_eq!(port[0].ratios, [Some(3.0), None, Some(4.0)], "NOT RUN is no ratio");
        let book = collect(&runs, Column::Book).unwrap();
        assert_eq!(book.len(), 1, "b's listing did not run");
        assert_eq!(book[0].program, "a");
        assert_eq!(book[0].ratios, [Some(1.5), Some(1.7), None]);
    }

    #[test]
    fn a_summary_adds_the_book_table_only_when_listings_ran() {
        let dir = std::env::temp_dir().join(format!("ch12-summary-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (old, new) = (dir.join("old.txt"), dir.join("new.txt"));
        std::fs::write(
            &old,
            "table\n{\"programs\":[{\"program\":\"a\",\"check\":\"PASS\",\"headline\":\"2.00x\"}]}\n",
        )
        .unwrap();
        let with_book = r#"{"programs":[{"program":"a","check":"PASS","headline":"2.00x","book":{"kind":"preset","check":"PASS","headline":"1.10x"}}]}"#;
        std::fs::write(&new, format!("{with_book}\n")).unwrap();
        let only_old = summarize(std::slice::from_ref(&old)).unwrap();
        assert!(!only_old.contains("--book"), "{only_old}");
        let both = summarize(&[old, new]).unwrap();
        assert!(both.contains("| a | 2/2 | 2.00, 2.00 | **2.00x** | 2.00x |"), "{both}");
        assert!(
            both.contains("--book") && both.contains("| a | 1/2 | -, 1.10 | **1.10x** | 1.10x |"),
            "{both}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn run(rows: &[(&str, &str, &str)]) -> Value {
        let programs: Vec<Value> = rows
            .iter()
            .map(|(p, check, headline)| json!({"program": p, "check": check, "headline": headline}))
            .collect();
        json!({ "programs": programs })
    }

    #[test]
    fn the_median_is_of_passing_runs_and_names_its_headline() {
        let runs = [
            run(&[("a", "PASS", "x 3.00x"), ("b", "PASS", "y 1.00x")]),
            run(&[("a", "PASS", "x 5.00x"), ("b", "FAIL", "y 9.00x")]),
            run(&[("a", "PASS", "x 4.00x"), ("b", "PASS", "y 2.00x")]),
        ];
        let programs = collect(&runs, Column::Port).unwrap();
        assert_eq!(programs[0].median(), Some(4.0));
        assert_eq!(programs[0].median_headline(), Some("x 4.00x"));
        assert_eq!(programs[1].ratios, [Some(1.0), None, Some(2.0)], "a failed run has no ratio");
        assert_eq!(programs[1].passed, 2);
        assert_eq!(programs[1].median(), Some(1.0), "the lower middle of an even count");
        let table = render(&programs, 3);
        assert!(table.contains("| a | 3/3 | 3.00, 5.00, 4.00 | **4.00x** | x 4.00x |"), "{table}");
        assert!(table.contains("| b | 2/3 | 1.00, -, 2.00 | **1.00x** | y 1.00x |"), "{table}");
    }

    #[test]
    fn a_program_missing_from_a_run_counts_as_no_ratio() {
        let runs = [run(&[("a", "PASS", "2.00x")]), run(&[("b", "PASS", "3.00x")])];
        let programs = collect(&runs, Column::Port).unwrap();
        assert_eq!(programs[0].ratios, [Some(2.0), None]);
        assert_eq!(programs[1].ratios, [None, Some(3.0)]);
    }
}
