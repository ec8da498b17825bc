//! The report a program prints: named figures, its checks, and the verdict.

use std::fmt::{Display, Write as _};
use std::process::ExitCode;

use serde_json::{json, Map, Value};

/// Whether a program's results matched its reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every check held.
    Pass,
    /// At least one check failed; the strings say which.
    Fail(Vec<String>),
}

/// A program's figures and checks, printed as text or as one JSON object.
///
/// ```
/// let mut report = chapter_common::Report::new("cuda_graphs");
/// report.figure("speedup", 1.38, "x");
/// report.check("checksum equal", true, "stream 12.5 vs graph 12.5");
/// assert!(report.passed());
/// assert_eq!(report.to_json()["figures"]["speedup"], 1.38);
/// ```
#[derive(Debug, Clone)]
pub struct Report {
    program: &'static str,
    figures: Vec<(String, f64, &'static str)>,
    checks: Vec<(String, bool, String)>,
    notes: Vec<String>,
    extra: Map<String, Value>,
}

impl Report {
    /// An empty report for `program`.
    pub fn new(program: &'static str) -> Report {
        Report { program, figures: Vec::new(), checks: Vec::new(), notes: Vec::new(), extra: Map::new() }
    }

    /// Adds a named figure with its unit.
    pub fn figure(&mut self, name: &str, value: f64, unit: &'static str) {
        self.figures.push((name.to_string(), value, unit));
    }

    /// The value of a figure added before.
    pub fn figure_value(&self, name: &str) -> Option<f64> {
        self.figures.iter().find(|(n, _, _)| n == name).map(|(_, v, _)| *v)
    }

    /// The value of a figure added before, or NaN (what a headline prints for a missing one).
    pub fn figure_or_nan(&self, name: &str) -> f64 {
        self.figure_value(name).unwrap_or(f64::NAN)
    }

    /// Adds a check and what was compared.
    pub fn check(&mut self, name: &str, held: bool, detail: impl Into<String>) {
        self.checks.push((name.to_string(), held, detail.into()));
    }

    /// Adds a check that holds when a comparison found no `problem` (the first difference from
    /// the CPU reference, say): its detail is the problem, or `ok()` (what agreed) when there
    /// is none.
    ///
    /// ```
    /// let mut report = chapter_common::Report::new("p");
    /// report.check_no_problem("graph equals the CPU model", None::<String>, || "4096 values".into());
    /// report.check_no_problem("stream equals the CPU model", Some("value 3: 7 vs 8"), || unreachable!());
    /// assert_eq!(report.to_json()["checks"][0]["detail"], "4096 values");
    /// assert_eq!(report.to_json()["checks"][1]["held"], false);
    /// assert_eq!(report.to_json()["checks"][1]["detail"], "value 3: 7 vs 8");
    /// ```
    pub fn check_no_problem(
        &mut self, name: &str, problem: Option<impl Display>, ok: impl FnOnce() -> String,
    ) {
        match problem {
            None => self.check(name, true, ok()),
            Some(problem) => self.check(name, false, problem.to_string()),
        }
    }

    /// Adds a line of context for people (not a check).
    pub fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    /// Adds structured data to the JSON form (a table of timings by size, say).
    pub fn data(&mut self, key: &str, value: Value) {
        self.extra.insert(key.to_string(), value);
    }

    /// The verdict over all checks (a report with no check fails: it proved nothing).
    pub fn verdict(&self) -> Verdict {
        let failed: Vec<String> =
            self.checks.iter().filter(|(_, held, _)| !held).map(|(n, _, d)| format!("{n}: {d}")).collect();
        if self.checks.is_empty() {
            Verdict::Fail(vec!["no check was made".into()])
        } else if failed.is_empty() {
            Verdict::Pass
        } else {
            Verdict::Fail(failed)
        }
    }

    /// True when every check held.
    pub fn passed(&self) -> bool {
        self.verdict() == Verdict::Pass
    }

    /// The report as text.
    pub fn to_text(&self) -> String {
        let mut out = format!("== {}\n", self.program);
        for (name, value, unit) in &self.figures {
            let _ = writeln!(out, "  {name:<40} {value:>12.4} {unit}");
        }
        for (name, held, detail) in &self.checks {
            let _ = writeln!(out, "  check {name}: {} ({detail})", if *held { "ok" } else { "FAILED" });
        }
        for note in &self.notes {
            let _ = writeln!(out, "  note: {note}");
        }
        let _ = writeln!(out, "  verdict: {}", if self.passed() { "PASS" } else { "FAIL" });
        out
    }

    /// The report as one JSON object: program, verdict, figures, checks, notes, data.
    pub fn to_json(&self) -> Value {
        let figures: Map<String, Value> =
            self.figures.iter().map(|(n, v, _)| (n.clone(), json!(v))).collect();
        let units: Map<String, Value> = self.figures.iter().map(|(n, _, u)| (n.clone(), json!(u))).collect();
        let checks: Vec<Value> =
            self.checks.iter().map(|(n, h, d)| json!({"name": n, "held": h, "detail": d})).collect();
        json!({
            "program": self.program,
            "verdict": if self.passed() { "PASS" } else { "FAIL" },
            "figures": figures,
            "units": units,
            "checks": checks,
            "notes": self.notes,
            "data": self.extra,
        })
    }

    /// Prints the report (JSON with `json`) and returns the exit code: failure unless every
    /// check held.
    pub fn finish(&self, json: bool) -> ExitCode {
        if json {
            println!("{}", self.to_json());
        } else {
            print!("{}", self.to_text());
        }
        if self.passed() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_check_fails_the_report_and_is_named() {
        let mut r = Report::new("p");
        r.check("a", true, "");
        r.check("b", false, "1 != 2");
        assert_eq!(r.verdict(), Verdict::Fail(vec!["b: 1 != 2".into()]));
        assert_eq!(r.to_json()["verdict"], "FAIL");
        assert!(r.to_text().contains("check b: FAILED (1 != 2)"));
    }

    #[test]
    fn a_report_without_checks_does_not_pass() {
        assert!(!Report::new("p").passed());
    }
}
