//! The rows of the results table (one per batch size and way, ours and PyTorch's), read from
//! the example's report JSON and the twin's JSON, and what is drawn and written from them: the
//! Markdown table and the goals with their measured values.

use std::fmt::Write as _;

use serde_json::Value;

/// One measured way at one batch size.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Sequences generated together.
    pub batch: u32,
    /// The way's key (`host_launches`, …, `torch_eager`, `torch_graph`).
    pub way: String,
    /// Its label for tables and the chart.
    pub label: String,
    /// Steps of one generation (its longest sequence).
    pub steps: u32,
    /// Tokens of one generation (all sequences).
    pub tokens: u64,
    /// Median µs per step over the timed runs.
    pub us_per_step: f64,
    /// Median tokens per second over the timed runs.
    pub tokens_per_s: f64,
    /// Timed runs.
    pub runs: usize,
}

impl Row {
    /// The row as JSON: the fields above, with each figure's median, range and runs.
    pub fn to_json(&self, us: &chapter_common::Samples, tps: &chapter_common::Samples) -> Value {
        serde_json::json!({
            "batch": self.batch,
            "way": self.way,
            "label": self.label,
            "steps": self.steps,
            "tokens": self.tokens,
            "us_per_step": us.to_json(),
            "tokens_per_s": tps.to_json(),
        })
    }

    /// Reads a row written by [`Row::to_json`] or by `torch_twin.py` (same fields).
    ///
    /// ```
    /// let json = serde_json::json!({"batch": 4, "way": "torch_eager", "label": "PyTorch eager", "steps": 10,
    ///     "tokens": 31, "us_per_step": {"median": 100.0, "runs": [99.0, 100.0, 101.0]},
    ///     "tokens_per_s": {"median": 31000.0}});
    /// let row = generation_loop::results::Row::from_json(&json).unwrap();
    /// assert_eq!((row.batch, row.runs, row.us_per_step), (4, 3, 100.0));
    /// ```
    pub fn from_json(value: &Value) -> Result<Row, String> {
        let field = |name: &str| value.get(name).ok_or_else(|| format!("a row has no `{name}`: {value}"));
        let number =
            |v: &Value, what: &str| v.as_f64().ok_or_else(|| format!("`{what}` is not a number: {v}"));
        let text = |name: &str| -> Result<String, String> {
            Ok(field(name)?.as_str().ok_or_else(|| format!("`{name}` is not text"))?.to_string())
        };
        Ok(Row {
            batch: number(field("batch")?, "batch")? as u32,
            way: text("way")?,
            label: text("label")?,
            steps: number(field("steps")?, "steps")? as u32,
            tokens: number(field("tokens")?, "tokens")? as u64,
            us_per_step: number(&field("us_per_step")?["median"], "us_per_step.median")?,
            tokens_per_s: number(&field("tokens_per_s")?["median"], "tokens_per_s.median")?,
            runs: field("us_per_step")?["runs"].as_array().map_or(0, Vec::len),
        })
    }
}

/// The rows of a JSON array (the report's `data.rows`, the twin's `rows`).
pub fn rows_from(value: &Value, what: &str) -> Result<Vec<Row>, String> {
    value.as_array().ok_or_else(|| format!("{what}: no array of rows"))?.iter().map(Row::from_json).collect()
}

/// The median µs per step of `way` at `batch`, if measured.
pub fn us_per_step(rows: &[Row], batch: u32, way: &str) -> Option<f64> {
    rows.iter().find(|r| r.batch == batch && r.way == way).map(|r| r.us_per_step)
}

/// The Markdown table: one line per batch size and way, in the rows' order.
///
/// ```
/// use generation_loop::results::{markdown_table, Row};
/// let row = Row { batch: 1, way: "while_graph".into(), label: "(c)".into(), steps: 205, tokens: 205,
///     us_per_step: 9.5, tokens_per_s: 105_263.0, runs: 5 };
/// assert!(markdown_table(&[row]).contains("| 1 | (c) | 9.50 | 105263 | 205 | 205 |"));
/// ```
pub fn markdown_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| batch | way | µs per step | tokens per s | steps | tokens |\n|---:|---|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {:.2} | {:.0} | {} | {} |",
            r.batch, r.label, r.us_per_step, r.tokens_per_s, r.steps, r.tokens
        );
    }
    out
}

/// One goal of the issue, with what was measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Goal {
    /// What is asked.
    pub text: String,
    /// The measured ratio, if both sides were measured.
    pub measured: Option<f64>,
    /// The ratio asked for.
    pub target: f64,
}

impl Goal {
    /// `goal: TEXT: measured 2.31x (met)`, or why it was not measured.
    pub fn line(&self) -> String {
        match self.measured {
            Some(m) => format!(
                "goal: {}: measured {m:.2}x ({})",
                self.text,
                if m >= self.target { "met" } else { "missed" }
            ),
            None => format!("goal: {}: not measured", self.text),
        }
    }
}

/// The ways PyTorch drives its loop from the host (the twin's keys).
pub const TORCH_WAYS: [&str; 2] = ["torch_eager", "torch_graph"];

/// The issue's goals at `batch`, measured where the rows allow: (c) at least 2x faster per step
/// than (b), at least 5x faster than PyTorch's fastest host-driven loop, and (d) faster than
/// (c) (not measured while (d) is not built).
pub fn goals(rows: &[Row], batch: u32) -> Vec<Goal> {
    let c = us_per_step(rows, batch, "while_graph");
    let b = us_per_step(rows, batch, "graph_per_step");
    let torch = TORCH_WAYS.iter().filter_map(|way| us_per_step(rows, batch, way)).reduce(f64::min);
    let d = us_per_step(rows, batch, "while_pdl");
    let ratio = |slow: Option<f64>, fast: Option<f64>| Some(slow? / fast?);
    vec![
        Goal {
            text: format!("(c) at least 2x faster per step than (b) at batch {batch}"),
            measured: ratio(b, c),
            target: 2.0,
        },
        Goal {
            text: format!(
                "(c) at least 5x faster per step than PyTorch's fastest host loop at batch {batch}"
            ),
            measured: ratio(torch, c),
            target: 5.0,
        },
        Goal {
            text: format!("(d) faster per step than (c) at batch {batch}"),
            measured: ratio(c, d),
            target: 1.0,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(batch: u32, way: &str, us: f64) -> Row {
        Row {
            batch,
            way: way.into(),
            label: way.into(),
            steps: 100,
            tokens: 100 * u64::from(batch),
            us_per_step: us,
            tokens_per_s: 1e6 / us,
            runs: 3,
        }
    }

    #[test]
    fn goals_take_the_fastest_torch_loop_and_say_what_is_missing() {
        let rows = [
            row(1, "graph_per_step", 25.0),
            row(1, "while_graph", 10.0),
            row(1, "torch_eager", 300.0),
            row(1, "torch_graph", 45.0),
        ];
        let goals = goals(&rows, 1);
        assert_eq!(goals[0].measured, Some(2.5));
        assert_eq!(goals[1].measured, Some(4.5));
        assert!(goals[0].line().ends_with("(met)") && goals[1].line().ends_with("(missed)"));
        assert_eq!(goals[2].measured, None);
        assert!(goals[2].line().ends_with("not measured"));
    }

    #[test]
    fn rows_round_trip_through_json() {
        let r = row(16, "while_graph", 12.5);
        let us = chapter_common::Samples(vec![12.0, 12.5, 13.0]);
        let tps = chapter_common::Samples(vec![r.tokens_per_s]);
        let back = Row::from_json(&r.to_json(&us, &tps)).unwrap();
        assert_eq!(back, r);
        assert!(Row::from_json(&serde_json::json!({"batch": 1})).unwrap_err().contains("way"));
    }
}
