//! The summary table and its JSON form: per program, the port's own workload and the chapter
//! listing's (`--book`), next to the chapter's claim.

pub use chapter_registry::Listing;
use serde_json::{json, Value};

/// A verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Its results matched the CPU reference.
    Pass,
    /// They did not, or it failed.
    Fail,
    /// Not run (no GPU).
    Skipped,
}

impl Check {
    pub fn label(self) -> &'static str {
        match self {
            Check::Pass => "PASS",
            Check::Fail => "FAIL",
            Check::Skipped => "SKIPPED",
        }
    }

    /// The check a label names (anything unknown is a failure).
    pub fn from_label(label: &str) -> Check {
        match label {
            "PASS" => Check::Pass,
            "SKIPPED" => Check::Skipped,
            _ => Check::Fail,
        }
    }
}

/// One run of one program: its verdict, headline, and why it failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub check: Check,
    pub headline: String,
    /// Why it failed: each failed check (name: detail), or the error it stopped on.
    pub failures: Vec<String>,
}

impl Cell {
    /// A run that could not happen: no GPU.
    pub fn skipped() -> Cell {
        Cell { check: Check::Skipped, headline: "not run: no CUDA device".into(), failures: Vec::new() }
    }

    /// A run that failed before it produced a report.
    pub fn failed(why: String) -> Cell {
        Cell { check: Check::Fail, headline: format!("error: {why}"), failures: vec![why] }
    }

    /// The cell's JSON fields: `check`, `headline`, `failures`.
    pub fn to_json(&self) -> Value {
        json!({"check": self.check.label(), "headline": self.headline, "failures": self.failures})
    }

    /// The cell from its JSON fields, if they are there.
    pub fn from_json(value: &Value) -> Option<Cell> {
        let failures =
            value["failures"].as_array()?.iter().filter_map(|f| f.as_str().map(str::to_string)).collect();
        Some(Cell {
            check: Check::from_label(value["check"].as_str()?),
            headline: value["headline"].as_str()?.to_string(),
            failures,
        })
    }
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub program: &'static str,
    pub claim: &'static str,
    pub listing: Listing,
    /// The port's own workload, unless only the listings' ran (`--book`).
    pub port: Option<Cell>,
    /// The listing's workload, when it ran.
    pub book: Option<Cell>,
}

impl Row {
    /// The row's verdict: a failure of either run fails it; skipped when nothing ran.
    pub fn check(&self) -> Check {
        let checks: Vec<Check> = self.port.iter().chain(&self.book).map(|cell| cell.check).collect();
        if checks.contains(&Check::Fail) {
            Check::Fail
        } else if checks.contains(&Check::Pass) {
            Check::Pass
        } else {
            Check::Skipped
        }
    }

    /// The port's column.
    fn port_cell(&self) -> String {
        self.port.as_ref().map_or_else(|| "not run (--book)".to_string(), |cell| cell.headline.clone())
    }

    /// The chapter workload's column: its figure, "same as port", "no listing", or "broken: why"
    /// (with the figure of what of it could run).
    fn book_cell(&self) -> String {
        let ran = self.book.as_ref().map(|cell| match cell.check {
            Check::Fail => format!("FAIL: {}", cell.headline),
            _ => cell.headline.clone(),
        });
        match (self.listing.kind, self.listing.why, ran) {
            ("same", _, None) => "same as port".to_string(),
            ("no listing", ..) => "no listing".to_string(),
            ("broken", why, ran) => {
                let why = format!("broken: {}", why.unwrap_or("see the note"));
                match ran {
                    Some(ran) => format!("{why}; listing's sizes: {ran}"),
                    None => why,
                }
            }
            (_, _, Some(ran)) => ran,
            (_, _, None) => "not run (--no-book)".to_string(),
        }
    }
}

/// The table as aligned text, then the note of each program's listing.
pub fn render(rows: &[Row]) -> String {
    let headers = ["program", "check", "headline figure", "chapter's workload (--book)", "chapter's claim"];
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            [
                r.program.to_string(),
                r.check().label().to_string(),
                r.port_cell(),
                r.book_cell(),
                r.claim.to_string(),
            ]
        })
        .collect();
    let widths: Vec<usize> = (0..headers.len())
        .map(|c| cells.iter().map(|row| row[c].chars().count()).chain([headers[c].len()]).max().unwrap_or(0))
        .collect();
    let line = |values: [&str; 5]| {
        let padded: Vec<String> = values
            .iter()
            .zip(&widths)
            .map(|(v, w)| format!("{v}{}", " ".repeat(w - v.chars().count())))
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut out = line(headers);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out += &format!("|-{}-|\n", rule.join("-|-"));
    for row in &cells {
        out += &line([&row[0], &row[1], &row[2], &row[3], &row[4]]);
    }
    if !rows.is_empty() {
        out += "\nThe chapter's workloads (what --book runs, and what differs from each port):\n";
        for row in rows {
            out += &format!("- {} ({}): {}\n", row.program, row.listing.kind, row.listing.note);
        }
    }
    out
}

/// The table as one JSON object: `{"programs": [{program, check, headline, claim, failures,
/// book}, ...]}`. `check`, `headline` and `failures` are the port's run (`check` is "NOT RUN"
/// under `--book`); `book` holds the listing's `kind`, `note`, `why` (when broken) and, when it
/// ran, its own `check`, `headline` and `failures`.
pub fn to_json(rows: &[Row]) -> String {
    let programs: Vec<Value> = rows
        .iter()
        .map(|r| {
            let mut book = json!({"kind": r.listing.kind, "note": r.listing.note});
            if let Some(why) = r.listing.why {
                book["why"] = json!(why);
            }
            if let Some(cell) = &r.book {
                for (key, value) in cell.to_json().as_object().into_iter().flatten() {
                    book[key] = value.clone();
                }
            }
            let port = r
                .port
                .as_ref()
                .map_or_else(|| json!({"check": "NOT RUN", "headline": "", "failures": []}), Cell::to_json);
            json!({
                "program": r.program,
                "check": port["check"],
                "headline": port["headline"],
                "claim": r.claim,
                "failures": port["failures"],
                "book": book,
            })
        })
        .collect();
    json!({ "programs": programs }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRESET: Listing = Listing { kind: "preset", note: "demo.cu: 1 Mi", why: None, runs: true };

    fn cell(check: Check, headline: &str) -> Cell {
        let failures = if check == Check::Fail { vec!["checksum equal: 1 vs 2".into()] } else { Vec::new() };
        Cell { check, headline: headline.into(), failures }
    }

    fn row(port: Option<Cell>, listing: Listing, book: Option<Cell>) -> Row {
        Row { program: "cuda_graphs", claim: "1.35-1.40x", listing, port, book }
    }

    #[test]
    fn the_table_aligns_columns_lists_every_row_and_every_note() {
        let rows = [
            row(Some(cell(Check::Pass, "graph 3.4x")), PRESET, Some(cell(Check::Pass, "graph 1.3x"))),
            row(Some(cell(Check::Fail, "graph 1.2x")), PRESET, None),
        ];
        let text = render(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("| program ") && lines[0].contains("chapter's workload"));
        assert!(lines[2].contains("| PASS ") && lines[2].contains("| graph 1.3x "), "{}", lines[2]);
        assert!(lines[3].contains("| FAIL ") && lines[3].contains("not run (--no-book)"), "{}", lines[3]);
        assert!(lines[..4].iter().all(|l| l.chars().count() == lines[0].chars().count()));
        assert_eq!(text.matches("- cuda_graphs (preset): demo.cu: 1 Mi").count(), 2, "{text}");
    }

    #[test]
    fn the_book_column_says_what_the_listing_is() {
        let same = Listing { kind: "same", note: "n", why: None, runs: true };
        let none = Listing { kind: "no listing", note: "n", why: None, runs: false };
        let broken = Listing { kind: "broken", note: "n", why: Some("does not compile"), runs: false };
        let port = || Some(cell(Check::Pass, "2.0x"));
        assert_eq!(row(port(), same, None).book_cell(), "same as port");
        assert_eq!(row(None, same, Some(cell(Check::Pass, "2.1x"))).book_cell(), "2.1x");
        assert_eq!(row(port(), none, None).book_cell(), "no listing");
        assert_eq!(row(port(), broken, None).book_cell(), "broken: does not compile");
        let broken_run = row(port(), broken, Some(cell(Check::Pass, "0.2x")));
        assert_eq!(broken_run.book_cell(), "broken: does not compile; listing's sizes: 0.2x");
        assert_eq!(row(port(), PRESET, Some(cell(Check::Fail, "9x"))).book_cell(), "FAIL: 9x");
        assert_eq!(row(None, PRESET, Some(cell(Check::Pass, "1x"))).port_cell(), "not run (--book)");
    }

    #[test]
    fn a_row_fails_when_either_run_fails_and_is_skipped_when_nothing_ran() {
        let pass = || Some(cell(Check::Pass, ""));
        let fail = || Some(cell(Check::Fail, ""));
        assert_eq!(row(pass(), PRESET, pass()).check(), Check::Pass);
        assert_eq!(row(pass(), PRESET, fail()).check(), Check::Fail);
        assert_eq!(row(fail(), PRESET, None).check(), Check::Fail);
        assert_eq!(row(None, PRESET, pass()).check(), Check::Pass);
        assert_eq!(row(Some(Cell::skipped()), PRESET, None).check(), Check::Skipped);
    }

    #[test]
    fn json_has_one_entry_per_row_with_the_book_inside() {
        let rows = [row(Some(cell(Check::Fail, "1.2x")), PRESET, Some(cell(Check::Pass, "1.3x")))];
        let value: Value = serde_json::from_str(&to_json(&rows)).unwrap();
        let entry = &value["programs"][0];
        assert_eq!((entry["check"].as_str(), entry["headline"].as_str()), (Some("FAIL"), Some("1.2x")));
        assert_eq!(entry["failures"][0], "checksum equal: 1 vs 2");
        assert_eq!(entry["book"]["kind"], "preset");
        assert_eq!(
            (entry["book"]["check"].as_str(), entry["book"]["headline"].as_str()),
            (Some("PASS"), Some("1.3x"))
        );
        assert_eq!(Cell::from_json(&entry["book"]), rows[0].book);
        let book_only = [row(None, PRESET, Some(cell(Check::Pass, "1.3x")))];
        let value: Value = serde_json::from_str(&to_json(&book_only)).unwrap();
        assert_eq!(value["programs"][0]["check"], "NOT RUN");
        let broken = Listing { kind: "broken", note: "n", why: Some("w"), runs: false };
        let value: Value = serde_json::from_str(&to_json(&[row(None, broken, None)])).unwrap();
        assert_eq!(value["programs"][0]["book"]["why"], "w");
        assert_eq!(value["programs"][0]["book"].get("check"), None);
    }
}
