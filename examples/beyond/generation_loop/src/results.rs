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
    /// µs per step of each timed run, in the order they ran.
    pub us_runs: Vec<f64>,
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
    /// assert_eq!(row.us_runs, [99.0, 100.0, 101.0]);
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
            us_runs: field("us_per_step")?["runs"]
                .as_array()
                .map(|runs| runs.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default(),
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
///     us_per_step: 9.5, tokens_per_s: 105_263.0, runs: 1, us_runs: vec![9.5] };
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

/// One goal, with what was measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Goal {
    /// What is asked.
    pub text: String,
    /// The ratio of the medians, if both sides were measured.
    pub measured: Option<f64>,
    /// The ratio asked for.
    pub target: f64,
    /// The lowest and highest ratio over the faster side's runs (the slower side's median
    /// over each run), where its runs were recorded.
    pub range: Option<(f64, f64)>,
    /// Whether the goal must hold in every run (judged by the range's low end) rather than
    /// by the medians.
    pub every_run: bool,
}

impl Goal {
    /// `goal: TEXT: measured 2.31x, runs 2.20x-2.40x (met)`, or why it was not measured.
    ///
    /// ```
    /// use generation_loop::results::Goal;
    /// let goal = Goal { text: "x".into(), measured: Some(2.3), target: 2.0, range: Some((1.9, 2.4)), every_run: true };
    /// assert_eq!(goal.line(), "goal: x: measured 2.30x, runs 1.90x-2.40x (missed: not in every run)");
    /// ```
    pub fn line(&self) -> String {
        let Some(m) = self.measured else {
            return format!("goal: {}: not measured", self.text);
        };
        let runs = self.range.map(|(low, high)| format!(", runs {low:.2}x-{high:.2}x")).unwrap_or_default();
        format!("goal: {}: measured {m:.2}x{runs} ({})", self.text, self.verdict())
    }

    /// `met`, `missed`, or `missed: not in every run`.
    fn verdict(&self) -> &'static str {
        match (self.measured, self.every_run, self.range) {
            (Some(m), _, _) if m < self.target => "missed",
            (Some(_), true, Some((low, _))) if low < self.target => "missed: not in every run",
            (Some(_), true, None) => "missed: the runs were not recorded",
            (Some(_), _, _) => "met",
            (None, _, _) => "not measured",
        }
    }
}

/// The row of `way` at `batch`, if measured.
fn row_of<'r>(rows: &'r [Row], batch: u32, way: &str) -> Option<&'r Row> {
    rows.iter().find(|r| r.batch == batch && r.way == way)
}

/// The fastest (lowest median µs per step) of the rows at `batch` whose way `pick` accepts.
fn fastest(rows: &[Row], batch: u32, pick: impl Fn(&str) -> bool) -> Option<&Row> {
    rows.iter()
        .filter(|r| r.batch == batch && pick(&r.way))
        .min_by(|a, b| a.us_per_step.total_cmp(&b.us_per_step))
}

/// The goal that `fast` is `target` times faster per step than `slow`: the medians' ratio, and
/// `slow`'s median over each of `fast`'s runs.
fn goal(text: String, slow: Option<&Row>, fast: Option<&Row>, target: f64, every_run: bool) -> Goal {
    let (measured, range) = match (slow, fast) {
        (Some(slow), Some(fast)) => {
            let ratios = fast.us_runs.iter().map(|&us| slow.us_per_step / us);
            let range = ratios.fold(None, |range: Option<(f64, f64)>, r| {
                Some(range.map_or((r, r), |(low, high)| (low.min(r), high.max(r))))
            });
            (Some(slow.us_per_step / fast.us_per_step), range)
        }
        _ => (None, None),
    };
    Goal { text, measured, target, range, every_run }
}

/// Whether `way` is one of PyTorch's (the twin's keys all start with `torch_`).
pub fn is_torch(way: &str) -> bool {
    way.starts_with("torch_")
}

/// The goals at `batch`, measured where the rows allow:
/// - (c) at least 2x faster per step than the faster host-driven graph loop, (b) or (b′);
/// - (d) at least 2x faster per step than PyTorch's fastest way, in every run of (d) (each
///   run against PyTorch's median);
/// - (d) faster per step than (c).
pub fn goals(rows: &[Row], batch: u32) -> Vec<Goal> {
    let c = row_of(rows, batch, "while_graph");
    let d = row_of(rows, batch, "while_pdl");
    let host = fastest(rows, batch, |way| way == "graph_per_step" || way == "graph_per_step_mapped");
    let torch = fastest(rows, batch, is_torch);
    let name = |row: Option<&Row>| row.map(|r| format!(" (here {})", r.label)).unwrap_or_default();
    vec![
        goal(
            format!(
                "(c) at least 2x faster per step than the faster host loop of one graph per step, (b) or (b′){}, \
                 at batch {batch}",
                name(host)
            ),
            host,
            c,
            2.0,
            false,
        ),
        goal(
            format!(
                "(d) at least 2x faster per step than PyTorch's fastest way{}, one step per WHILE iteration, \
                 in every run, at batch {batch}",
                name(torch)
            ),
            torch,
            d,
            2.0,
            true,
        ),
        goal(format!("(d) faster per step than (c) at batch {batch}"), c, d, 1.0, false),
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
            us_runs: vec![us * 0.9, us, us * 1.2],
        }
    }

    #[test]
    fn goals_take_the_fastest_host_loop_and_torch_way_and_judge_every_run() {
        let rows = [
            row(1, "graph_per_step", 25.0),
            row(1, "graph_per_step_mapped", 22.0),
            row(1, "while_graph", 10.0),
            row(1, "while_pdl", 9.0),
            row(1, "torch_graph", 45.0),
            row(1, "torch_compiled_decode_graph", 19.0),
        ];
        let goals = goals(&rows, 1);
        assert_eq!(goals[0].measured, Some(2.2));
        assert!(goals[0].text.contains("(here graph_per_step_mapped)"), "{}", goals[0].text);
        assert!(goals[0].line().ends_with("(met)"), "{}", goals[0].line());
        // 19 / 9 = 2.11 on the medians, but the slowest run (9 * 1.2) gives 1.76.
        assert!(goals[1].text.contains("(here torch_compiled_decode_graph)"), "{}", goals[1].text);
        assert!(
            goals[1].line().contains("runs 1.76x-2.35x (missed: not in every run)"),
            "{}",
            goals[1].line()
        );
        assert!(goals[2].line().ends_with("(met)"));
        let without_d = goals_without(&rows, "while_pdl");
        assert!(without_d[1].line().ends_with("not measured"), "{}", without_d[1].line());
    }

    fn goals_without(rows: &[Row], way: &str) -> Vec<Goal> {
        let kept: Vec<Row> = rows.iter().filter(|r| r.way != way).cloned().collect();
        goals(&kept, 1)
    }

    #[test]
    fn rows_round_trip_through_json() {
        let r = row(16, "while_graph", 12.5);
        let us = chapter_common::Samples(r.us_runs.clone());
        let tps = chapter_common::Samples(vec![r.tokens_per_s]);
        let back = Row::from_json(&r.to_json(&us, &tps)).unwrap();
        assert_eq!(back, r);
        assert!(Row::from_json(&serde_json::json!({"batch": 1})).unwrap_err().contains("way"));
    }
}
