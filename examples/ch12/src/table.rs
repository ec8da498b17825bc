//! The summary table and its JSON form.

use serde_json::json;

/// A program's verdict.
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
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub program: &'static str,
    pub check: Check,
    pub headline: String,
    pub claim: &'static str,
    /// Why it failed: each failed check (name: detail), or the error it stopped on.
    pub failures: Vec<String>,
}

impl Row {
    pub fn skipped(program: &'static str, claim: &'static str) -> Row {
        Row {
            program,
            check: Check::Skipped,
            headline: "not run: no CUDA device".into(),
            claim,
            failures: Vec::new(),
        }
    }
}

/// The table as aligned text.
pub fn render(rows: &[Row]) -> String {
    let headers = ["program", "check", "headline figure", "chapter's claim"];
    let cells: Vec<[String; 4]> = rows
        .iter()
        .map(|r| {
            [r.program.to_string(), r.check.label().to_string(), r.headline.clone(), r.claim.to_string()]
        })
        .collect();
    let widths: Vec<usize> = (0..4)
        .map(|c| cells.iter().map(|row| row[c].len()).chain([headers[c].len()]).max().unwrap_or(0))
        .collect();
    let line = |values: [&str; 4]| {
        let padded: Vec<String> = values.iter().zip(&widths).map(|(v, w)| format!("{v:<w$}")).collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut out = line(headers);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out += &format!("|-{}-|\n", rule.join("-|-"));
    for row in &cells {
        out += &line([&row[0], &row[1], &row[2], &row[3]]);
    }
    out
}

/// The table as one JSON object: `{"programs": [{program, check, headline, claim, failures}, ...]}`.
pub fn to_json(rows: &[Row]) -> String {
    let programs: Vec<_> = rows
        .iter()
        .map(|r| {
            json!({
                "program": r.program,
                "check": r.check.label(),
                "headline": r.headline,
                "claim": r.claim,
                "failures": r.failures,
            })
        })
        .collect();
    json!({ "programs": programs }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(check: Check) -> Row {
        let failures = if check == Check::Fail { vec!["checksum equal: 1 vs 2".into()] } else { Vec::new() };
        Row { program: "cuda_graphs", check, headline: "1.38x".into(), claim: "1.35-1.40x", failures }
    }

    #[test]
    fn the_table_aligns_columns_and_lists_every_row() {
        let text = render(&[row(Check::Pass), row(Check::Fail)]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].starts_with("| program "));
        assert!(lines[2].contains("| PASS "));
        assert!(lines[3].contains("| FAIL "));
        assert!(lines.iter().all(|l| l.len() == lines[0].len()));
    }

    #[test]
    fn json_has_one_entry_per_row() {
        let value: serde_json::Value = serde_json::from_str(&to_json(&[row(Check::Pass)])).unwrap();
        assert_eq!(value["programs"][0]["check"], "PASS");
        assert_eq!(value["programs"].as_array().unwrap().len(), 1);
        let value: serde_json::Value = serde_json::from_str(&to_json(&[row(Check::Fail)])).unwrap();
        assert_eq!(value["programs"][0]["failures"][0], "checksum equal: 1 vs 2");
    }
}
