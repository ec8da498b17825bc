//! Issue 8's goals, checked against a run, and what is not measured yet.

use crate::harness::Row;
use crate::{data_loop, graph_replay};

/// Figures the benchmark does not take yet, and why; printed in the output as placeholders,
/// never as numbers.
pub const PENDING: &[(&str, &str)] = &[
    (
        "host vs device launch by graph width 1/8/32/64 (fire-and-forget, tail)",
        "comes with the device-launch crate; not measured here yet",
    ),
    (
        "data-dependent loop, device self-relaunch (5000 steps)",
        "comes with the device-launch crate; not measured here yet",
    ),
];

/// The most a Rust/C++ ratio may be.
pub const MAX_RATIO: f64 = 1.03;
/// Graph replay at 100 nodes, µs per node (Rust path).
pub const MAX_REPLAY_US_PER_NODE: f64 = 0.80;
/// WHILE loop, µs per step (Rust path).
pub const MAX_WHILE_US_PER_STEP: f64 = 4.5;

/// How a run fares against one goal.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Reached, with the figure.
    Met(String),
    /// Missed, with the figure and by how much.
    Missed(String),
    /// This run did not take the figure (a parameter left out).
    NotMeasured,
    /// The benchmark cannot measure it yet.
    Pending(&'static str),
}

/// One goal of issue 8 and its verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Goal {
    /// The goal, as the issue states it.
    pub text: &'static str,
    /// How this run fares.
    pub verdict: Verdict,
}

impl std::fmt::Display for Goal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.verdict {
            Verdict::Met(figure) => write!(f, "met      {}: {figure}", self.text),
            Verdict::Missed(figure) => write!(f, "MISSED   {}: {figure}", self.text),
            Verdict::NotMeasured => write!(f, "not run  {}", self.text),
            Verdict::Pending(why) => write!(f, "pending  {}: {why}", self.text),
        }
    }
}

fn over(value: f64, limit: f64) -> String {
    format!("{:.0}% over", (value / limit - 1.0) * 100.0)
}

fn find<'r>(rows: &'r [Row], operation: &str, parameter: &str) -> Option<&'r Row> {
    rows.iter().find(|row| row.operation == operation && row.parameter == parameter)
}

fn at_most(text: &'static str, row: Option<&Row>, limit: f64) -> Goal {
    let verdict = match row {
        None => Verdict::NotMeasured,
        Some(row) => {
            let figure = format!("{:.3} {}", row.rust(), row.unit);
            if row.rust() <= limit {
                Verdict::Met(figure)
            } else {
                Verdict::Missed(format!("{figure}, {}", over(row.rust(), limit)))
            }
        }
    };
    Goal { text, verdict }
}

/// The goals of issue 8 against `rows`.
pub fn check(rows: &[Row], while_steps: u32) -> Vec<Goal> {
    let worst =
        rows.iter().filter(|row| row.ratio().is_finite()).max_by(|a, b| a.ratio().total_cmp(&b.ratio()));
    let over_ratio: Vec<String> = rows
        .iter()
        .filter(|row| row.ratio() > MAX_RATIO || row.ratio().is_nan())
        .map(|row| {
            format!(
                "{} {} at {:.3} ({})",
                row.operation,
                row.parameter,
                row.ratio(),
                over(row.ratio(), MAX_RATIO)
            )
        })
        .collect();
    let ratios = Goal {
        text: "every Rust/C++ ratio <= 1.03",
        verdict: match worst {
            None => Verdict::NotMeasured,
            Some(_) if !over_ratio.is_empty() => Verdict::Missed(over_ratio.join("; ")),
            Some(worst) => {
                Verdict::Met(format!("worst {:.3} ({} {})", worst.ratio(), worst.operation, worst.parameter))
            }
        },
    };
    vec![
        ratios,
        at_most(
            "graph replay <= 0.80 µs per node at 100 nodes",
            find(rows, graph_replay::OPERATION, "nodes=100"),
            MAX_REPLAY_US_PER_NODE,
        ),
        at_most(
            "WHILE loop <= 4.5 µs per step",
            find(rows, data_loop::WHILE_NODE, &format!("steps={while_steps}")),
            MAX_WHILE_US_PER_STEP,
        ),
        Goal {
            text: "device fire-and-forget of a 64-wide graph >= 2.3x faster than host launch with sync",
            verdict: Verdict::Pending("comes with the device-launch crate"),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Pair;
    use chapter_common::Samples;

    fn row(operation: &'static str, parameter: &str, rust: f64, cpp: f64) -> Row {
        Row::new(operation, parameter, "µs", Pair { rust: Samples(vec![rust]), cpp: Samples(vec![cpp]) })
    }

    #[test]
    fn goals_are_met_missed_or_not_measured() {
        let rows = vec![
            row(graph_replay::OPERATION, "nodes=100", 0.70, 0.69),
            row(data_loop::WHILE_NODE, "steps=5000", 5.0, 4.0),
        ];
        let goals = check(&rows, 5000);
        assert!(
            matches!(&goals[0].verdict, Verdict::Missed(why) if why.contains("loop, WHILE node") && why.contains("21% over")),
            "{:?}",
            goals[0]
        );
        assert!(matches!(&goals[1].verdict, Verdict::Met(_)), "{:?}", goals[1]);
        assert!(
            matches!(&goals[2].verdict, Verdict::Missed(why) if why.contains("11% over")),
            "{:?}",
            goals[2]
        );
        assert!(matches!(goals[3].verdict, Verdict::Pending(_)));
        let goals = check(&rows[..1], 5000);
        assert!(matches!(goals[0].verdict, Verdict::Met(_)));
        assert_eq!(goals[2].verdict, Verdict::NotMeasured);
        assert!(goals[2].to_string().starts_with("not run"));
    }
}
