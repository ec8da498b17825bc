//! The goals: read from a data file (`bench/goals.json`, built in as [`BENCH_GOALS`]) and
//! checked against a run's rows; this module is the file's interpreter.
//!
//! The file is one JSON object:
//!
//! - `set_for`: the GPU the bounds were set for (`an H100`), named in the reports' headings;
//! - `about`: a note for readers, ignored;
//! - `goals`: a list, in the order reported, of objects with
//!   - `name`: the goal's name, lower case words joined by `-` (`replay-per-node`), unique;
//!   - `text`: the goal as the reports state it;
//!   - `figure`: the one number a run yields for it:
//!     - `"worst-ratio"`: the worst Rust/C++ ratio over every row (a NaN ratio counts as the
//!       worst); held `at_most` only;
//!     - `{"rust": ROW}`: that row's Rust median; the verdict also gives its samples' least and
//!       most, and says when only the median meets the bound;
//!     - `{"quotient": {"over": ROW, "under": ROW}}`: the first row's Rust median over the
//!       second's (a speed-up, a gain); when both rows have a `label`, the verdict also gives
//!       each row's figure and samples and the quotients the samples allow;
//!   - `at_most` or `at_least` (one of them): the bound, a number.
//!
//!   A ROW is `{"operation": ..., "parameter": ..., "label": ...}`: the operation as the CSV
//!   names it ([`crate::operations`]; another name is refused), its parameter (`nodes=100`;
//!   left out, the operation's first row, for an operation measured at one size a run, whatever
//!   the size), and an optional label.
//!
//! A goal a run did not measure (its rows missing) is `not run` in that run. Each goal is
//! decided in each run here, then over the runs by [`crate::over_runs::decide`].

use serde_json::{Map, Value};

use crate::error::{ReportError, Result};
use crate::row::Row;

/// The bench's goals file, `bench/goals.json`, as built into this crate.
pub const BENCH_GOALS: &str = include_str!("../../goals.json");

/// How a run fares against one goal.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Reached, with the figure.
    Met(String),
    /// Missed, with the figure and by how much.
    Missed(String),
    /// This run did not take the figure (a parameter left out).
    NotMeasured,
}

/// The limit a goal's figure is held to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// The figure may be at most this.
    AtMost(f64),
    /// The figure must be at least this.
    AtLeast(f64),
}

impl Bound {
    /// Whether `figure` meets the bound (a NaN never does).
    pub fn meets(self, figure: f64) -> bool {
        match self {
            Bound::AtMost(limit) => figure <= limit,
            Bound::AtLeast(least) => figure >= least,
        }
    }

    /// How far `figure`, which misses the bound, misses it: `16% over`, or `7% short of 1.35`
    /// followed by `unit` (a NaN or infinite figure is 100% short).
    fn by_how_much(self, figure: f64, unit: &str) -> String {
        match self {
            Bound::AtMost(limit) => over(figure, limit),
            Bound::AtLeast(least) => {
                let short = if figure.is_finite() { (1.0 - figure / least) * 100.0 } else { 100.0 };
                format!("{short:.0}% short of {least}{unit}")
            }
        }
    }
}

fn over(value: f64, limit: f64) -> String {
    format!("{:.0}% over", (value / limit - 1.0) * 100.0)
}

/// A row a goal reads.
#[derive(Debug, Clone, PartialEq)]
pub struct RowRef {
    /// The operation, as the CSV names it.
    pub operation: String,
    /// Its parameter; `None`: the operation's first row.
    pub parameter: Option<String>,
    /// What the verdict calls the row.
    pub label: Option<String>,
}

impl RowRef {
    fn find<'r>(&self, rows: &'r [Row]) -> Option<&'r Row> {
        rows.iter().find(|row| row.is(&self.operation, self.parameter.as_deref()))
    }
}

/// The one number a goal holds to its bound.
#[derive(Debug, Clone, PartialEq)]
pub enum Figure {
    /// The worst Rust/C++ ratio of every row.
    WorstRatio,
    /// One row's Rust median.
    Rust(RowRef),
    /// One row's Rust median over another's.
    Quotient {
        /// The numerator's row.
        over: RowRef,
        /// The denominator's row.
        under: RowRef,
    },
}

/// One goal of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct GoalSpec {
    /// Its name, e.g. `replay-per-node`.
    pub name: String,
    /// The goal as the reports state it.
    pub text: String,
    /// What a run's figure is.
    pub figure: Figure,
    /// What the figure is held to.
    pub bound: Bound,
}

/// The goals of a goals file.
#[derive(Debug, Clone, PartialEq)]
pub struct Goals {
    /// The GPU the bounds were set for, e.g. `an H100`.
    pub set_for: String,
    /// The goals, in the order reported.
    pub goals: Vec<GoalSpec>,
}

/// One goal against one run's rows, with its verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Goal {
    /// The goal's name.
    pub name: String,
    /// The goal, as the goals file states it.
    pub text: String,
    /// How this run fares.
    pub verdict: Verdict,
    /// The one number held to the bound (the worst ratio, the µs, the speed-up); `None` when
    /// not measured.
    pub figure: Option<f64>,
    /// What the figure is held to.
    pub bound: Bound,
}

impl std::fmt::Display for Goal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.verdict {
            Verdict::Met(figure) => write!(f, "met      {} ({}): {figure}", self.text, self.name),
            Verdict::Missed(figure) => write!(f, "MISSED   {} ({}): {figure}", self.text, self.name),
            Verdict::NotMeasured => write!(f, "not run  {} ({})", self.text, self.name),
        }
    }
}

fn bad(what: String) -> ReportError {
    ReportError::Goals(what)
}

/// The object's keys must be among `known`.
fn only_keys(object: &Map<String, Value>, known: &[&str], what: &str) -> Result<()> {
    match object.keys().find(|key| !known.contains(&key.as_str())) {
        Some(key) => Err(bad(format!("{what}: unknown key `{key}` (known: {})", known.join(", ")))),
        None => Ok(()),
    }
}

fn string(object: &Map<String, Value>, key: &str, what: &str) -> Result<Option<String>> {
    match object.get(key) {
        None => Ok(None),
        Some(Value::String(text)) if !text.is_empty() => Ok(Some(text.clone())),
        Some(_) => Err(bad(format!("{what}: `{key}` must be a non-empty string"))),
    }
}

fn row_ref(value: &Value, what: &str) -> Result<RowRef> {
    let object = value.as_object().ok_or_else(|| bad(format!("{what}: a row must be an object")))?;
    only_keys(object, &["operation", "parameter", "label"], what)?;
    let operation = string(object, "operation", what)?
        .ok_or_else(|| bad(format!("{what}: a row needs an `operation`")))?;
    if !crate::operations::ALL.contains(&operation.as_str()) {
        return Err(bad(format!("{what}: no operation is named `{operation}`")));
    }
    Ok(RowRef {
        operation,
        parameter: string(object, "parameter", what)?,
        label: string(object, "label", what)?,
    })
}

fn figure(value: Option<&Value>, what: &str) -> Result<Figure> {
    match value {
        Some(Value::String(kind)) if kind == "worst-ratio" => Ok(Figure::WorstRatio),
        Some(Value::Object(object)) if object.len() == 1 => {
            let (kind, inner) = object.iter().next().expect("one entry");
            match kind.as_str() {
                "rust" => Ok(Figure::Rust(row_ref(inner, what)?)),
                "quotient" => {
                    let rows = inner.as_object().ok_or_else(|| bad(format!("{what}: a quotient is an object")))?;
                    only_keys(rows, &["over", "under"], what)?;
                    let side = |key: &str| {
                        rows.get(key)
                            .ok_or_else(|| bad(format!("{what}: a quotient needs `{key}`")))
                            .and_then(|row| row_ref(row, what))
                    };
                    Ok(Figure::Quotient { over: side("over")?, under: side("under")? })
                }
                other => Err(bad(format!("{what}: unknown figure `{other}`"))),
            }
        }
        _ => Err(bad(format!(
            "{what}: `figure` must be \"worst-ratio\", {{\"rust\": ROW}} or {{\"quotient\": {{\"over\": ROW, \"under\": ROW}}}}"
        ))),
    }
}

fn goal_spec(value: &Value, index: usize) -> Result<GoalSpec> {
    let object = value.as_object().ok_or_else(|| bad(format!("goal {}: not an object", index + 1)))?;
    let what = match object.get("name").and_then(Value::as_str) {
        Some(name) => format!("goal `{name}`"),
        None => format!("goal {}", index + 1),
    };
    only_keys(object, &["name", "text", "figure", "at_most", "at_least"], &what)?;
    let name = string(object, "name", &what)?.ok_or_else(|| bad(format!("{what}: no `name`")))?;
    let words = name
        .split('-')
        .all(|word| !word.is_empty() && word.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
    if !words {
        return Err(bad(format!("{what}: a name is lower-case words joined by `-`")));
    }
    let text = string(object, "text", &what)?.ok_or_else(|| bad(format!("{what}: no `text`")))?;
    let number = |key: &str| match object.get(key) {
        None => Ok(None),
        Some(value) => match value.as_f64() {
            Some(number) if number.is_finite() => Ok(Some(number)),
            _ => Err(bad(format!("{what}: `{key}` must be a number"))),
        },
    };
    let bound = match (number("at_most")?, number("at_least")?) {
        (Some(limit), None) => Bound::AtMost(limit),
        (None, Some(least)) => Bound::AtLeast(least),
        _ => return Err(bad(format!("{what}: give one of `at_most` and `at_least`"))),
    };
    let figure = figure(object.get("figure"), &what)?;
    if figure == Figure::WorstRatio && matches!(bound, Bound::AtLeast(_)) {
        return Err(bad(format!("{what}: the worst ratio is held `at_most`")));
    }
    Ok(GoalSpec { name, text, figure, bound })
}

impl Goals {
    /// The bench's goals ([`BENCH_GOALS`]).
    ///
    /// ```
    /// let goals = cuda_graph_bench_report::Goals::bench()?;
    /// assert_eq!(goals.set_for, "an H100");
    /// assert_eq!(goals.goals[0].name, "rust-over-cpp");
    /// # Ok::<(), cuda_graph_bench_report::ReportError>(())
    /// ```
    pub fn bench() -> Result<Goals> {
        Goals::parse(BENCH_GOALS)
    }

    /// The goals of a goals file's text (see the module docs).
    pub fn parse(json: &str) -> Result<Goals> {
        let value: Value = serde_json::from_str(json).map_err(|err| bad(format!("not JSON: {err}")))?;
        let object = value.as_object().ok_or_else(|| bad("the file is not an object".to_string()))?;
        only_keys(object, &["about", "set_for", "goals"], "the file")?;
        let set_for =
            string(object, "set_for", "the file")?.ok_or_else(|| bad("no `set_for`".to_string()))?;
        let list = object
            .get("goals")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no `goals` list".to_string()))?;
        let goals = list
            .iter()
            .enumerate()
            .map(|(index, goal)| goal_spec(goal, index))
            .collect::<Result<Vec<_>>>()?;
        for (index, goal) in goals.iter().enumerate() {
            if goals[..index].iter().any(|earlier| earlier.name == goal.name) {
                return Err(bad(format!("two goals are named `{}`", goal.name)));
            }
        }
        Ok(Goals { set_for, goals })
    }

    /// Every goal against one run's `rows`, in the file's order.
    pub fn check(&self, rows: &[Row]) -> Vec<Goal> {
        self.goals.iter().map(|goal| goal.check(rows)).collect()
    }
}

impl GoalSpec {
    /// This goal against one run's `rows`.
    pub fn check(&self, rows: &[Row]) -> Goal {
        let (verdict, figure) = match &self.figure {
            Figure::WorstRatio => self.worst_ratio(rows),
            Figure::Rust(row) => self.rust(row.find(rows)),
            Figure::Quotient { over, under } => self.quotient(over, under, rows),
        };
        Goal { name: self.name.clone(), text: self.text.clone(), verdict, figure, bound: self.bound }
    }

    fn worst_ratio(&self, rows: &[Row]) -> (Verdict, Option<f64>) {
        let bound = self.bound;
        let worst =
            rows.iter().filter(|row| row.ratio().is_finite()).max_by(|a, b| a.ratio().total_cmp(&b.ratio()));
        let missed: Vec<String> = rows
            .iter()
            .filter(|row| !bound.meets(row.ratio()))
            .map(|row| {
                format!(
                    "{} {} at {:.3} ({})",
                    row.operation,
                    row.parameter,
                    row.ratio(),
                    bound.by_how_much(row.ratio(), "")
                )
            })
            .collect();
        let verdict = match worst {
            None => Verdict::NotMeasured,
            Some(_) if !missed.is_empty() => Verdict::Missed(missed.join("; ")),
            Some(worst) => {
                Verdict::Met(format!("worst {:.3} ({} {})", worst.ratio(), worst.operation, worst.parameter))
            }
        };
        // A NaN ratio counts as the worst (it misses the goal above).
        let figure =
            worst.map(
                |worst| {
                    if rows.iter().any(|row| row.ratio().is_nan()) {
                        f64::NAN
                    } else {
                        worst.ratio()
                    }
                },
            );
        (verdict, figure)
    }

    fn rust(&self, row: Option<&Row>) -> (Verdict, Option<f64>) {
        let Some(row) = row else { return (Verdict::NotMeasured, None) };
        let bound = self.bound;
        let (low, high) = row.rust.range();
        let text = format!("{:.3} {} (samples {low:.3}-{high:.3})", row.rust(), row.unit);
        // The sample furthest on the wrong side of the bound.
        let worst_sample = match bound {
            Bound::AtMost(_) => high,
            Bound::AtLeast(_) => low,
        };
        let verdict = if bound.meets(row.rust()) {
            Verdict::Met(if bound.meets(worst_sample) {
                text
            } else {
                let unit = format!(" {}", row.unit);
                format!("{text}; the median only: samples reach {}", bound.by_how_much(worst_sample, &unit))
            })
        } else {
            Verdict::Missed(format!("{text}, {}", bound.by_how_much(row.rust(), &format!(" {}", row.unit))))
        };
        (verdict, Some(row.rust()))
    }

    fn quotient(&self, over: &RowRef, under: &RowRef, rows: &[Row]) -> (Verdict, Option<f64>) {
        let (Some(over_row), Some(under_row)) = (over.find(rows), under.find(rows)) else {
            return (Verdict::NotMeasured, None);
        };
        let bound = self.bound;
        let quotient = over_row.rust() / under_row.rust();
        let mut text = format!("{quotient:.2}x");
        let mut median_only = false;
        if let (Some(over_label), Some(under_label)) = (&over.label, &under.label) {
            let ((over_low, over_high), (under_low, under_high)) =
                (over_row.rust.range(), under_row.rust.range());
            // The least and most quotient the samples allow: the least numerator over the
            // most denominator, and the other way round.
            let (least, most) = (over_low / under_high, over_high / under_low);
            text = format!(
                "{text}, samples allow {least:.2}-{most:.2}x ({over_label} {:.3} {unit}, samples \
                 {over_low:.3}-{over_high:.3}; {under_label} {:.3} {unit}, samples {under_low:.3}-{under_high:.3})",
                over_row.rust(),
                under_row.rust(),
                unit = over_row.unit
            );
            median_only = !bound.meets(match bound {
                Bound::AtMost(_) => most,
                Bound::AtLeast(_) => least,
            });
        }
        let verdict = if bound.meets(quotient) {
            Verdict::Met(if median_only {
                format!("{text}; the median only: decide over several runs")
            } else {
                text
            })
        } else {
            Verdict::Missed(format!("{text}, {}", bound.by_how_much(quotient, "x")))
        };
        (verdict, Some(quotient))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operations::{
        DEVICE_FIRE_AND_FORGET, DEVICE_TAIL, EMPTY_PLAIN, EMPTY_PROGRAMMATIC, GRAPH_REPLAY, HOST_SYNC,
        LOOP_WHILE_NODE, RMW_PLAIN, RMW_PROGRAMMATIC,
    };
    use crate::row::Summary;
    use crate::samples::Samples;

    fn row(operation: &str, parameter: &str, rust: f64, cpp: f64) -> Row {
        Row::single(operation, parameter, "µs", rust, cpp)
    }

    fn check(rows: &[Row]) -> Vec<Goal> {
        Goals::bench().unwrap().check(rows)
    }

    /// The goal named `name` among `goals`.
    fn named<'g>(goals: &'g [Goal], name: &str) -> &'g Goal {
        goals.iter().find(|goal| goal.name == name).unwrap_or_else(|| panic!("no goal {name}"))
    }

    #[test]
    fn the_bench_goals_are_named_and_cite_no_issue() {
        let goals = Goals::bench().unwrap();
        let names: Vec<&str> = goals.goals.iter().map(|goal| goal.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "rust-over-cpp",
                "replay-per-node",
                "while-loop",
                "fire-and-forget-speedup",
                "pdl-empty-chain",
                "pdl-rmw-chain",
                "pdl-empty-gain",
                "pdl-rmw-gain"
            ]
        );
        let words = |text: &str| text.to_lowercase().contains("issue");
        assert!(!words(BENCH_GOALS), "the goals file cites no issue");
        assert_eq!(goals.goals[3].bound, Bound::AtLeast(2.3));
        assert_eq!(goals.goals[1].bound, Bound::AtMost(0.80));
    }

    #[test]
    fn a_goals_file_that_is_wrong_says_where() {
        let file = |goal: &str| format!(r#"{{"set_for": "a GPU", "goals": [{goal}]}}"#);
        let err = |goal: &str| Goals::parse(&file(goal)).unwrap_err().to_string();
        let ok = r#"{"name": "g", "text": "t", "figure": "worst-ratio", "at_most": 1.1}"#;
        assert_eq!(Goals::parse(&file(ok)).unwrap().goals[0].bound, Bound::AtMost(1.1));
        assert!(
            err(r#"{"name": "g", "text": "t", "figure": "worst-ratio", "at_least": 1}"#).contains("at_most")
        );
        assert!(err(r#"{"name": "G 1", "text": "t", "figure": "worst-ratio", "at_most": 1}"#)
            .contains("lower-case"));
        assert!(err(r#"{"name": "g", "text": "t", "figure": "worst-ratio"}"#).contains("one of `at_most`"));
        assert!(
            err(r#"{"name": "g", "text": "t", "figure": "best", "at_most": 1}"#).contains("`figure` must be")
        );
        let unknown =
            r#"{"name": "g", "text": "t", "figure": {"rust": {"operation": "nope"}}, "at_most": 1}"#;
        assert!(err(unknown).contains("goal `g`: no operation is named `nope`"), "{}", err(unknown));
        assert!(err(r#"{"name": "g", "text": "t", "figure": "worst-ratio", "at_most": 1, "x": 2}"#)
            .contains("unknown key `x`"));
        assert!(Goals::parse(&file(&format!("{ok}, {ok}"))).unwrap_err().to_string().contains("two goals"));
        assert!(Goals::parse("[").unwrap_err().to_string().starts_with("goals: not JSON"));
    }

    #[test]
    fn goals_are_met_missed_or_not_measured() {
        let rows =
            vec![row(GRAPH_REPLAY, "nodes=100", 0.70, 0.69), row(LOOP_WHILE_NODE, "steps=5000", 5.0, 4.0)];
        let goals = check(&rows);
        let ratio = named(&goals, "rust-over-cpp");
        assert!(
            matches!(&ratio.verdict, Verdict::Missed(why) if why.contains("loop, WHILE node") && why.contains("21% over")),
            "{ratio:?}"
        );
        assert!(matches!(&named(&goals, "replay-per-node").verdict, Verdict::Met(_)), "{goals:?}");
        let while_loop = named(&goals, "while-loop");
        assert!(
            matches!(&while_loop.verdict, Verdict::Missed(why) if why.contains("11% over")),
            "{while_loop:?}"
        );
        assert_eq!(named(&goals, "fire-and-forget-speedup").verdict, Verdict::NotMeasured, "no (f) rows");
        let goals = check(&rows[..1]);
        assert!(matches!(named(&goals, "rust-over-cpp").verdict, Verdict::Met(_)));
        assert_eq!(named(&goals, "while-loop").verdict, Verdict::NotMeasured);
        assert!(named(&goals, "while-loop").to_string().starts_with("not run"));
        // The WHILE goal reads the loop's row whatever its length (a quick run's 200 steps).
        let quick = check(&[row(LOOP_WHILE_NODE, "steps=200", 4.0, 4.0)]);
        assert!(
            matches!(&named(&quick, "while-loop").verdict, Verdict::Met(why) if why.starts_with("4.000 µs"))
        );
    }

    fn width_rows(host: f64, fire_and_forget: f64) -> Vec<Row> {
        vec![
            row(HOST_SYNC, "width=8", 100.0, 100.0),
            row(HOST_SYNC, "width=64", host, host),
            row(DEVICE_FIRE_AND_FORGET, "width=8", 1.0, 1.0),
            row(DEVICE_FIRE_AND_FORGET, "width=64", fire_and_forget, fire_and_forget),
            row(DEVICE_TAIL, "width=64", 1.0, 1.0),
        ]
    }

    #[test]
    fn a_median_that_meets_a_goal_its_samples_miss_says_so() {
        let spread = |operation: &str, parameter: &str, values: Vec<f64>| {
            let summary = Summary::of(&Samples(values));
            Row::new(operation, parameter, "µs", summary, summary)
        };
        let goals = check(&[spread(GRAPH_REPLAY, "nodes=100", vec![0.70, 0.75, 0.95])]);
        let replay = named(&goals, "replay-per-node");
        assert!(
            matches!(&replay.verdict, Verdict::Met(why) if why.contains("samples 0.700-0.950") && why.contains("the median only")),
            "{replay:?}"
        );
        let rows = vec![
            spread(HOST_SYNC, "width=64", vec![57.0, 70.0, 243.0]),
            spread(DEVICE_FIRE_AND_FORGET, "width=64", vec![27.0, 28.0, 29.0]),
        ];
        let goals = check(&rows);
        let speedup = named(&goals, "fire-and-forget-speedup");
        assert!(
            matches!(&speedup.verdict, Verdict::Met(why) if why.contains("samples allow 1.97-9.00x") && why.contains("decide over several runs")),
            "{speedup:?}"
        );
    }

    #[test]
    fn the_fire_and_forget_speedup_is_taken_at_width_64() {
        let goals = check(&width_rows(12.0, 4.0));
        let speedup = named(&goals, "fire-and-forget-speedup");
        assert!(
            matches!(&speedup.verdict, Verdict::Met(figure) if figure.starts_with("3.00x, samples allow 3.00-3.00x (host + sync 12.000 µs")),
            "{speedup:?}"
        );
        let goals = check(&width_rows(12.0, 6.0));
        let speedup = named(&goals, "fire-and-forget-speedup");
        assert!(
            matches!(&speedup.verdict, Verdict::Missed(figure) if figure.starts_with("2.00x") && figure.ends_with("13% short of 2.3x")),
            "{speedup:?}"
        );
        assert!(speedup.to_string().starts_with("MISSED"), "{speedup}");
        let exactly = check(&width_rows(2.3, 1.0));
        assert!(matches!(named(&exactly, "fire-and-forget-speedup").verdict, Verdict::Met(_)));
        let gains = check(&[
            row(RMW_PLAIN, "nodes=100", 0.9, 0.9),
            row(RMW_PROGRAMMATIC, "nodes=100", 0.6, 0.6),
            row(EMPTY_PLAIN, "nodes=100", 0.7, 0.7),
            row(EMPTY_PROGRAMMATIC, "nodes=100", 0.56, 0.56),
        ]);
        let verdict = |name: &str| named(&gains, name).verdict.clone();
        assert!(matches!(verdict("pdl-rmw-chain"), Verdict::Met(why) if why.starts_with("0.600")));
        assert!(matches!(verdict("pdl-empty-chain"), Verdict::Missed(why) if why.contains("8% over")));
        assert_eq!(verdict("pdl-empty-gain"), Verdict::Missed("1.25x, 14% short of 1.45x".into()));
        assert_eq!(verdict("pdl-rmw-gain"), Verdict::Met("1.50x".into()));
        let without_64: Vec<Row> =
            width_rows(12.0, 4.0).into_iter().filter(|row| row.parameter != "width=64").collect();
        assert_eq!(named(&check(&without_64), "fire-and-forget-speedup").verdict, Verdict::NotMeasured);
    }
}
