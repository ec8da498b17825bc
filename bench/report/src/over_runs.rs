//! Several full runs in one process (`--runs N`): each figure as the median over the runs, and
//! each goal decided per run, then over the runs.
//!
//! A goal is met over the runs only if the median of its per-run figures meets it **and** it was
//! met in at least half the runs; met in fewer than half, it is missed whatever the median says.

use crate::goals::{Bound, Figure, Goal, Goals, Verdict};
use crate::row::{Row, Summary};
use crate::samples::{median, Samples};

/// The rows of the first run, in its order, each summarizing one sample per run that measured
/// it: that run's median, Rust and C++. So [`Row::rust`] and [`Row::cpp`] of a merged row are
/// the medians over the runs, and [`Summary::range`] their spread.
pub fn merge(runs: &[Vec<Row>]) -> Vec<Row> {
    let Some(first) = runs.first() else { return Vec::new() };
    first
        .iter()
        .map(|row| {
            let (mut rust, mut cpp) = (Samples::default(), Samples::default());
            for same in runs.iter().filter_map(|rows| find(rows, row)) {
                rust.push(same.rust());
                cpp.push(same.cpp());
            }
            Row::new(
                row.operation.as_str(),
                row.parameter.as_str(),
                row.unit.as_str(),
                Summary::of(&rust),
                Summary::of(&cpp),
            )
        })
        .collect()
}

/// Each run's Rust/C++ ratio of `row` (its operation and parameter), in run order.
pub fn ratios(runs: &[Vec<Row>], row: &Row) -> Samples {
    Samples(runs.iter().filter_map(|rows| find(rows, row)).map(Row::ratio).collect())
}

fn find<'r>(rows: &'r [Row], like: &Row) -> Option<&'r Row> {
    rows.iter().find(|row| row.operation == like.operation && row.parameter == like.parameter)
}

/// A row's label (operation and parameter) and its Rust/C++ ratio.
pub type RowRatio = (String, f64);

/// Each row's Rust/C++ ratio as the table gives it (the median of the runs' ratios), the rows
/// above `at_most` in table order, and the highest row: the figure the
/// worst-ratio goal would give were each row first taken over the runs (less moved by one
/// run's noise than each run's worst row, which the goal holds). `None` without rows.
///
/// ```
/// use cuda_graph_bench_report::{over_runs::rows_over, Row};
/// let run = |ratio: f64| vec![Row::single("graph instantiate", "nodes=100", "µs", ratio, 1.0)];
/// let (over, highest) = rows_over(&[run(1.05), run(1.01), run(1.02)], 1.03).unwrap();
/// assert!(over.is_empty());
/// assert_eq!((highest.0.as_str(), highest.1), ("graph instantiate nodes=100", 1.02));
/// ```
pub fn rows_over(runs: &[Vec<Row>], at_most: f64) -> Option<(Vec<RowRatio>, RowRatio)> {
    let labelled: Vec<RowRatio> = merge(runs)
        .iter()
        .map(|row| {
            let label = format!("{} {}", row.operation, row.parameter).trim_end().to_string();
            (label, ratios(runs, row).median())
        })
        .collect();
    let highest = labelled.iter().max_by(|a, b| a.1.total_cmp(&b.1))?.clone();
    let over = labelled.into_iter().filter(|(_, ratio)| ratio.is_nan() || *ratio > at_most).collect();
    Some((over, highest))
}

/// For each worst-ratio goal with an upper bound, over several runs: a line saying which rows
/// the table's Rust/C++ column puts over that bound (the same limit held to each row
/// taken over the runs first), printed beside the goal's own verdict, never instead of it.
/// Empty for one run (the table is then that run's).
pub fn row_median_lines(goals: &Goals, runs: &[Vec<Row>]) -> Vec<String> {
    if runs.len() < 2 {
        return Vec::new();
    }
    goals
        .goals
        .iter()
        .filter(|spec| spec.figure == Figure::WorstRatio)
        .filter_map(|spec| match spec.bound {
            Bound::AtMost(limit) => Some((spec, limit)),
            Bound::AtLeast(_) => None,
        })
        .filter_map(|(spec, limit)| {
            let (over, highest) = rows_over(runs, limit)?;
            let rows = if over.is_empty() {
                format!("none over {limit}; the highest: {} at {:.3}", highest.0, highest.1)
            } else {
                let listed: Vec<String> =
                    over.iter().map(|(row, ratio)| format!("{row} at {ratio:.3}")).collect();
                format!("{} over {limit}: {}", over.len(), listed.join("; "))
            };
            Some(format!(
                "{} ({}), each row taken over the {} runs first (the table's Rust/C++ column): {rows}",
                spec.text,
                spec.name,
                runs.len()
            ))
        })
        .collect()
}

/// One goal over several runs.
#[derive(Debug, Clone, PartialEq)]
pub struct GoalOverRuns {
    /// The goal's name in the goals file.
    pub name: String,
    /// The goal, as the goals file states it.
    pub text: String,
    /// What the figure is held to.
    pub bound: Bound,
    /// Each run's verdict, in run order.
    pub per_run: Vec<Verdict>,
    /// Each run's figure (`None` where the run did not take it).
    pub figures: Vec<Option<f64>>,
}

/// How a goal fares over the runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OverRuns {
    /// The median meets the bound and at least half the runs met it.
    Met,
    /// The median misses the bound, or fewer than half the runs met it.
    Missed,
    /// No run took the figure.
    NotMeasured,
}

impl GoalOverRuns {
    /// Gathers goal `index` of every run's [`crate::goals::Goals::check`].
    pub fn gather(per_run: &[Vec<Goal>], index: usize) -> Option<GoalOverRuns> {
        let first = per_run.first()?.get(index)?;
        let goals: Vec<&Goal> = per_run.iter().filter_map(|goals| goals.get(index)).collect();
        Some(GoalOverRuns {
            name: first.name.clone(),
            text: first.text.clone(),
            bound: first.bound,
            per_run: goals.iter().map(|goal| goal.verdict.clone()).collect(),
            figures: goals.iter().map(|goal| goal.figure).collect(),
        })
    }

    /// How many runs met the goal.
    pub fn runs_met(&self) -> usize {
        self.per_run.iter().filter(|verdict| matches!(verdict, Verdict::Met(_))).count()
    }

    /// How many runs took the figure.
    pub fn runs_measured(&self) -> usize {
        self.figures.iter().flatten().count()
    }

    /// The median of the measured runs' figures; a NaN figure counts as the worst possible.
    pub fn median(&self) -> Option<f64> {
        let worst = match self.bound {
            Bound::AtMost(_) => f64::INFINITY,
            Bound::AtLeast(_) => f64::NEG_INFINITY,
        };
        let values: Vec<f64> =
            self.figures.iter().flatten().map(|&value| if value.is_nan() { worst } else { value }).collect();
        (!values.is_empty()).then(|| median(&values))
    }

    /// The verdict over the runs.
    pub fn verdict(&self) -> OverRuns {
        match self.median() {
            None => OverRuns::NotMeasured,
            Some(median) if self.bound.meets(median) && 2 * self.runs_met() >= self.runs_measured() => {
                OverRuns::Met
            }
            Some(_) => OverRuns::Missed,
        }
    }
}

impl std::fmt::Display for GoalOverRuns {
    /// The verdict line, then one indented line per run.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let label = match self.verdict() {
            OverRuns::Met => "met     ",
            OverRuns::Missed => "MISSED  ",
            OverRuns::NotMeasured => return write!(f, "not run  {} ({})", self.text, self.name),
        };
        let (met, measured) = (self.runs_met(), self.runs_measured());
        let figures: Vec<String> =
            self.figures.iter().map(|figure| figure.map_or("-".to_string(), |v| format!("{v:.3}"))).collect();
        let median = self.median().unwrap_or(f64::NAN);
        let few = if 2 * met < measured { " (fewer than half)" } else { "" };
        write!(
            f,
            "{label} {} ({}): median over {measured} run(s) {median:.3} (per run {}); met in {met} of {measured} runs{few}",
            self.text,
            self.name,
            figures.join(", ")
        )?;
        for (run, verdict) in self.per_run.iter().enumerate() {
            let line = match verdict {
                Verdict::Met(figure) => format!("met: {figure}"),
                Verdict::Missed(figure) => format!("MISSED: {figure}"),
                Verdict::NotMeasured => "not run".to_string(),
            };
            write!(f, "\n      run {}: {line}", run + 1)?;
        }
        Ok(())
    }
}

/// Every goal of `per_run` (one [`crate::goals::Goals::check`] result per run) over the runs.
pub fn goals(per_run: &[Vec<Goal>]) -> Vec<GoalOverRuns> {
    let count = per_run.first().map_or(0, Vec::len);
    (0..count).filter_map(|index| GoalOverRuns::gather(per_run, index)).collect()
}

/// Every one of `goals` decided in each of `runs`, then over the runs.
///
/// ```
/// use cuda_graph_bench_report::{over_runs, Goals, Row};
/// let run = |us| vec![Row::single("loop, WHILE node", "steps=5000", "µs/step", us, 4.0)];
/// let decided = over_runs::decide(&Goals::bench()?, &[run(4.2), run(4.6), run(4.7)]);
/// let while_loop = decided.iter().find(|goal| goal.name == "while-loop").unwrap();
/// assert_eq!((while_loop.runs_met(), while_loop.verdict()), (1, over_runs::OverRuns::Missed));
/// # Ok::<(), cuda_graph_bench_report::ReportError>(())
/// ```
pub fn decide(goals: &Goals, runs: &[Vec<Row>]) -> Vec<GoalOverRuns> {
    let per_run: Vec<Vec<Goal>> = runs.iter().map(|rows| goals.check(rows)).collect();
    self::goals(&per_run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operations::{DEVICE_FIRE_AND_FORGET, GRAPH_REPLAY, HOST_SYNC, LOOP_WHILE_NODE};

    fn row(operation: &str, parameter: &str, rust: f64, cpp: f64) -> Row {
        Row::single(operation, parameter, "µs", rust, cpp)
    }

    fn check(rows: &[Row]) -> Vec<Goal> {
        Goals::bench().unwrap().check(rows)
    }

    /// Goal `name` over runs whose rows are each of `runs`.
    fn over(name: &str, runs: &[Vec<Row>]) -> GoalOverRuns {
        let per_run: Vec<Vec<Goal>> = runs.iter().map(|rows| check(rows)).collect();
        goals(&per_run).into_iter().find(|goal| goal.name == name).unwrap()
    }

    /// Runs whose WHILE step (Rust) is each of `steps`, the C++ side 4.0.
    fn while_goal(steps: &[f64]) -> GoalOverRuns {
        let runs: Vec<Vec<Row>> =
            steps.iter().map(|&us| vec![row(LOOP_WHILE_NODE, "steps=5000", us, 4.0)]).collect();
        over("while-loop", &runs)
    }

    #[test]
    fn a_goal_met_in_one_run_of_three_is_missed() {
        let goal = while_goal(&[4.0, 4.6, 4.7]);
        assert_eq!(goal.bound, Bound::AtMost(4.5));
        assert_eq!((goal.runs_met(), goal.runs_measured()), (1, 3));
        assert_eq!(goal.verdict(), OverRuns::Missed);
        let text = goal.to_string();
        assert!(text.starts_with("MISSED"), "{text}");
        assert!(text.contains("met in 1 of 3 runs (fewer than half)"), "{text}");
        assert!(text.contains("per run 4.000, 4.600, 4.700"), "{text}");
        assert!(text.contains("run 1: met: 4.000") && text.contains("run 3: MISSED: 4.700"), "{text}");
        assert!(text.contains("WHILE loop <= 4.5 µs per step (while-loop): median"), "{text}");
    }

    #[test]
    fn half_the_runs_is_enough_fewer_is_not() {
        // Median 4.5 (the mean of 4.4 and 4.6) meets the bound, and 2 of 4 runs did: half is
        // enough. With 1 of 4 it is not.
        let half = while_goal(&[4.4, 4.6, 4.0, 4.7]);
        assert_eq!((half.median(), half.runs_met()), (Some(4.5), 2));
        assert_eq!(half.verdict(), OverRuns::Met);
        let one = while_goal(&[4.51, 4.49, 4.52, 4.53]);
        assert_eq!((one.runs_met(), one.verdict()), (1, OverRuns::Missed));
    }

    #[test]
    fn met_in_most_runs_but_a_median_over_the_bound_is_missed_and_all_met_is_met() {
        let goal = while_goal(&[4.0, 4.6, 4.7, 4.1, 4.8]);
        assert_eq!((goal.runs_met(), goal.median()), (2, Some(4.6)));
        assert_eq!(goal.verdict(), OverRuns::Missed);
        let goal = while_goal(&[4.0, 4.1, 4.6]);
        assert_eq!(goal.verdict(), OverRuns::Met);
        assert!(goal.to_string().contains("met in 2 of 3 runs"), "{goal}");
        assert!(!goal.to_string().contains("fewer than half"), "{goal}");
        let one_run = while_goal(&[4.6]);
        assert_eq!(one_run.verdict(), OverRuns::Missed, "one run decides as before");
    }

    #[test]
    fn at_least_goals_and_nan_figures_count_as_the_worst() {
        let run = |host: f64, device: f64| {
            vec![
                row(HOST_SYNC, "width=64", host, host),
                row(DEVICE_FIRE_AND_FORGET, "width=64", device, device),
            ]
        };
        let speedup = |runs: &[Vec<Row>]| over("fire-and-forget-speedup", runs);
        let goal = speedup(&[run(70.0, 28.0), run(60.0, 28.0), run(66.0, 28.0)]);
        assert_eq!(goal.bound, Bound::AtLeast(2.3));
        assert_eq!((goal.runs_met(), goal.verdict()), (2, OverRuns::Met), "{goal}");
        let goal = speedup(&[run(70.0, 28.0), run(60.0, 28.0), run(62.0, 28.0)]);
        assert_eq!((goal.runs_met(), goal.verdict()), (1, OverRuns::Missed), "{goal}");
        let nan = speedup(&[run(70.0, 28.0), run(f64::NAN, 28.0), run(f64::NAN, 28.0)]);
        assert_eq!(nan.median(), Some(f64::NEG_INFINITY), "two of three runs are NaN");
        assert_eq!(nan.verdict(), OverRuns::Missed);
    }

    #[test]
    fn the_ratio_goal_holds_each_runs_worst_row() {
        let run = |ratio: f64| {
            vec![row(GRAPH_REPLAY, "nodes=100", 1.0, 1.0), row(LOOP_WHILE_NODE, "steps=5000", ratio, 1.0)]
        };
        let goal = over("rust-over-cpp", &[run(1.01), run(1.05), run(1.04)]);
        assert_eq!(goal.figures, [Some(1.01), Some(1.05), Some(1.04)]);
        assert_eq!(goal.verdict(), OverRuns::Missed);
        let goal = over("rust-over-cpp", &[run(1.01), run(1.05), run(1.0)]);
        assert_eq!(goal.verdict(), OverRuns::Met);
        let none = over("replay-per-node", &[vec![], vec![]]);
        assert_eq!(none.verdict(), OverRuns::NotMeasured);
        assert!(none.to_string().starts_with("not run"));
    }

    #[test]
    fn the_row_median_line_names_the_rows_over_the_bound_beside_the_goal() {
        let goals = Goals::bench().unwrap();
        let run = |replay: f64, while_node: f64| {
            vec![
                row(GRAPH_REPLAY, "nodes=100", replay, 1.0),
                row(LOOP_WHILE_NODE, "steps=5000", while_node, 1.0),
            ]
        };
        // Each run's worst row is over (1.05, 1.05, 1.02), but no row is over in two runs.
        let noisy = [run(1.05, 1.01), run(1.0, 1.05), run(1.0, 1.02)];
        assert_eq!(over("rust-over-cpp", &noisy).verdict(), OverRuns::Missed, "the goal's own verdict");
        let lines = row_median_lines(&goals, &noisy);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("none over 1.03; the highest: loop, WHILE node steps=5000 at 1.020"),
            "{lines:?}"
        );
        let lines = row_median_lines(&goals, &[run(1.0, 1.05), run(1.0, 1.04), run(1.0, 1.0)]);
        assert!(lines[0].contains("1 over 1.03: loop, WHILE node steps=5000 at 1.040"), "{lines:?}");
        assert!(
            row_median_lines(&goals, &[run(1.0, 1.05)]).is_empty(),
            "one run: the goal's line says it all"
        );
    }

    #[test]
    fn merged_rows_hold_one_median_per_run() {
        let runs = vec![
            vec![row(GRAPH_REPLAY, "nodes=1", 2.0, 1.0), row(GRAPH_REPLAY, "nodes=10", 1.0, 1.0)],
            vec![row(GRAPH_REPLAY, "nodes=10", 3.0, 2.0), row(GRAPH_REPLAY, "nodes=1", 4.0, 2.0)],
            vec![row(GRAPH_REPLAY, "nodes=1", 9.0, 3.0)],
        ];
        let merged = merge(&runs);
        assert_eq!(merged.len(), 2);
        assert_eq!((merged[0].rust.range(), merged[0].rust.count), ((2.0, 9.0), 3));
        assert_eq!((merged[0].rust(), merged[0].cpp()), (4.0, 2.0));
        assert_eq!(
            (merged[1].cpp.range(), merged[1].cpp.count),
            ((1.0, 2.0), 2),
            "the third run has no nodes=10"
        );
        assert_eq!(ratios(&runs, &merged[0]).0, [2.0, 2.0, 3.0]);
        assert!(merge(&[]).is_empty());
    }
}
