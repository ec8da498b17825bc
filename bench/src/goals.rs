//! Issue 8's goals, and issue 24's for programmatic dependent launch, checked against a run.

use crate::harness::Row;
use crate::{data_loop, device_launch_width, graph_replay, pdl_chain};

/// The most a Rust/C++ ratio may be.
pub const MAX_RATIO: f64 = 1.03;
/// Graph replay at 100 nodes, µs per node (Rust path).
pub const MAX_REPLAY_US_PER_NODE: f64 = 0.80;
/// WHILE loop, µs per step (Rust path).
pub const MAX_WHILE_US_PER_STEP: f64 = 4.5;
/// Host launch + sync over device fire-and-forget, µs per launch of the 64-wide graph (Rust
/// path): the least speed-up.
pub const MIN_FIRE_AND_FORGET_SPEEDUP: f64 = 2.3;
/// The width that speed-up is taken at.
pub const SPEEDUP_WIDTH: u32 = 64;
/// Issue 24: the 100-node chain of empty kernels with programmatic edges, µs per node (Rust).
pub const MAX_PDL_EMPTY_US_PER_NODE: f64 = 0.52;
/// Issue 24: the same chain of read-modify-write kernels, µs per node (Rust).
pub const MAX_PDL_RMW_US_PER_NODE: f64 = 0.68;
/// Issue 24: plain over programmatic edges, 100-node empty chain (Rust): the least gain.
pub const MIN_PDL_EMPTY_GAIN: f64 = 1.45;
/// Issue 24: the same for the read-modify-write chain.
pub const MIN_PDL_RMW_GAIN: f64 = 1.35;
/// The chain length issue 24's goals are taken at.
pub const PDL_GOAL_NODES: u32 = 100;

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
}

/// One goal (issue 8 or 24) and its verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Goal {
    /// The goal, as the issue states it.
    pub text: &'static str,
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
            Verdict::Met(figure) => write!(f, "met      {}: {figure}", self.text),
            Verdict::Missed(figure) => write!(f, "MISSED   {}: {figure}", self.text),
            Verdict::NotMeasured => write!(f, "not run  {}", self.text),
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
    let figure = row.map(Row::rust);
    let verdict = match row {
        None => Verdict::NotMeasured,
        Some(row) => {
            let (low, high) = row.pair.rust.range();
            let figure = format!("{:.3} {} (samples {low:.3}-{high:.3})", row.rust(), row.unit);
            if row.rust() <= limit {
                Verdict::Met(if high > limit {
                    format!("{figure}; the median only: samples reach {}", over(high, limit))
                } else {
                    figure
                })
            } else {
                Verdict::Missed(format!("{figure}, {}", over(row.rust(), limit)))
            }
        }
    };
    Goal { text, verdict, figure, bound: Bound::AtMost(limit) }
}

/// How many times faster device fire-and-forget is than host launch + sync at `width`
/// (Rust path), at least `least`.
fn speedup_at_least(text: &'static str, rows: &[Row], width: u32, least: f64) -> Goal {
    let parameter = format!("width={width}");
    let host = find(rows, device_launch_width::HOST_SYNC, &parameter);
    let device = find(rows, device_launch_width::DEVICE_FIRE_AND_FORGET, &parameter);
    let figure = host.zip(device).map(|(host, device)| host.rust() / device.rust());
    let verdict = match (host, device) {
        (Some(host), Some(device)) => {
            let speedup = host.rust() / device.rust();
            let ((host_low, host_high), (device_low, device_high)) =
                (host.pair.rust.range(), device.pair.rust.range());
            // The least and most speed-up the samples allow: the fastest host sample against
            // the slowest device one, and the other way round.
            let (worst, best) = (host_low / device_high, host_high / device_low);
            let figure = format!(
                "{speedup:.2}x, samples allow {worst:.2}-{best:.2}x (host + sync {:.3} {unit}, samples \
                 {host_low:.3}-{host_high:.3}; fire-and-forget {:.3} {unit}, samples {device_low:.3}-{device_high:.3})",
                host.rust(),
                device.rust(),
                unit = host.unit
            );
            if speedup >= least {
                Verdict::Met(if worst < least {
                    format!("{figure}; the median only: decide over several runs")
                } else {
                    figure
                })
            } else {
                let short = if speedup.is_finite() { (1.0 - speedup / least) * 100.0 } else { 100.0 };
                Verdict::Missed(format!("{figure}, {short:.0}% short of {least}x"))
            }
        }
        _ => Verdict::NotMeasured,
    };
    Goal { text, verdict, figure, bound: Bound::AtLeast(least) }
}

/// Plain over programmatic edges for the 100-node chain (Rust path), at least `least`.
fn gain_at_least(text: &'static str, rows: &[Row], rmw: bool, least: f64) -> Goal {
    let figure = pdl_chain::gain(rows, rmw, PDL_GOAL_NODES);
    let verdict = match figure {
        None => Verdict::NotMeasured,
        Some(gain) => {
            let text = format!("{gain:.2}x");
            if gain >= least {
                Verdict::Met(text)
            } else {
                Verdict::Missed(format!("{text}, {:.0}% short of {least}x", (1.0 - gain / least) * 100.0))
            }
        }
    };
    Goal { text, verdict, figure, bound: Bound::AtLeast(least) }
}

/// The goals of issue 8, then issue 24's, against `rows`.
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
        // A NaN ratio counts as the worst (it misses the goal above).
        figure: worst.map(
            |worst| {
                if rows.iter().any(|row| row.ratio().is_nan()) {
                    f64::NAN
                } else {
                    worst.ratio()
                }
            },
        ),
        bound: Bound::AtMost(MAX_RATIO),
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
        speedup_at_least(
            "device fire-and-forget of a 64-wide graph >= 2.3x faster than host launch with sync",
            rows,
            SPEEDUP_WIDTH,
            MIN_FIRE_AND_FORGET_SPEEDUP,
        ),
        at_most(
            "(issue 24) 100-node empty chain, programmatic edges <= 0.52 µs per node",
            find(rows, pdl_chain::EMPTY_PROGRAMMATIC, "nodes=100"),
            MAX_PDL_EMPTY_US_PER_NODE,
        ),
        at_most(
            "(issue 24) 100-node read-modify-write chain, programmatic edges <= 0.68 µs per node",
            find(rows, pdl_chain::RMW_PROGRAMMATIC, "nodes=100"),
            MAX_PDL_RMW_US_PER_NODE,
        ),
        gain_at_least(
            "(issue 24) programmatic edges >= 1.45x faster than plain, 100-node empty chain",
            rows,
            false,
            MIN_PDL_EMPTY_GAIN,
        ),
        gain_at_least(
            "(issue 24) programmatic edges >= 1.35x faster than plain, 100-node read-modify-write chain",
            rows,
            true,
            MIN_PDL_RMW_GAIN,
        ),
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
        assert_eq!(goals[3].verdict, Verdict::NotMeasured, "no (f) rows");
        let goals = check(&rows[..1], 5000);
        assert!(matches!(goals[0].verdict, Verdict::Met(_)));
        assert_eq!(goals[2].verdict, Verdict::NotMeasured);
        assert!(goals[2].to_string().starts_with("not run"));
    }

    fn width_rows(host: f64, fire_and_forget: f64) -> Vec<Row> {
        use device_launch_width::{DEVICE_FIRE_AND_FORGET, DEVICE_TAIL, HOST_SYNC};
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
        let spread = |values: Vec<f64>| Pair { rust: Samples(values.clone()), cpp: Samples(values) };
        let rows = vec![Row::new(graph_replay::OPERATION, "nodes=100", "µs", spread(vec![0.70, 0.75, 0.95]))];
        let goals = check(&rows, 5000);
        assert!(
            matches!(&goals[1].verdict, Verdict::Met(why) if why.contains("samples 0.700-0.950") && why.contains("the median only")),
            "{:?}",
            goals[1]
        );
        use device_launch_width::{DEVICE_FIRE_AND_FORGET, HOST_SYNC};
        let rows = vec![
            Row::new(HOST_SYNC, "width=64", "µs", spread(vec![57.0, 70.0, 243.0])),
            Row::new(DEVICE_FIRE_AND_FORGET, "width=64", "µs", spread(vec![27.0, 28.0, 29.0])),
        ];
        let goals = check(&rows, 5000);
        assert!(
            matches!(&goals[3].verdict, Verdict::Met(why) if why.contains("samples allow 1.97-9.00x") && why.contains("decide over several runs")),
            "{:?}",
            goals[3]
        );
    }

    #[test]
    fn the_fire_and_forget_speedup_is_taken_at_width_64() {
        let goals = check(&width_rows(12.0, 4.0), 5000);
        assert!(
            matches!(&goals[3].verdict, Verdict::Met(figure) if figure.starts_with("3.00x, samples allow 3.00-3.00x (host + sync 12.000 µs")),
            "{:?}",
            goals[3]
        );
        let goals = check(&width_rows(12.0, 6.0), 5000);
        assert!(
            matches!(&goals[3].verdict, Verdict::Missed(figure) if figure.starts_with("2.00x") && figure.ends_with("13% short of 2.3x")),
            "{:?}",
            goals[3]
        );
        assert!(goals[3].to_string().starts_with("MISSED"), "{}", goals[3]);
        let exactly = check(&width_rows(2.3, 1.0), 5000);
        assert!(matches!(exactly[3].verdict, Verdict::Met(_)), "{:?}", exactly[3]);
        let gains = check(
            &[
                row(pdl_chain::RMW_PLAIN, "nodes=100", 0.9, 0.9),
                row(pdl_chain::RMW_PROGRAMMATIC, "nodes=100", 0.6, 0.6),
                row(pdl_chain::EMPTY_PLAIN, "nodes=100", 0.7, 0.7),
                row(pdl_chain::EMPTY_PROGRAMMATIC, "nodes=100", 0.56, 0.56),
            ],
            5000,
        );
        assert!(matches!(&gains[5].verdict, Verdict::Met(why) if why.starts_with("0.600")), "{:?}", gains[5]);
        assert!(
            matches!(&gains[4].verdict, Verdict::Missed(why) if why.contains("8% over")),
            "{:?}",
            gains[4]
        );
        assert!(
            matches!(&gains[6].verdict, Verdict::Missed(why) if why == "1.25x, 14% short of 1.45x"),
            "{:?}",
            gains[6]
        );
        assert!(matches!(&gains[7].verdict, Verdict::Met(why) if why == "1.50x"), "{:?}", gains[7]);
        let without_64: Vec<Row> =
            width_rows(12.0, 4.0).into_iter().filter(|row| row.parameter != "width=64").collect();
        assert_eq!(check(&without_64, 5000)[3].verdict, Verdict::NotMeasured);
    }
}
