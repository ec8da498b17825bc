//! The results: one row per way (µs per step, tokens per second, achieved bandwidth, % of
//! peak), the goals' verdicts, and the files `--out` writes (the report as JSON, the table as
//! CSV and markdown, the dump for the twin).

use std::fmt::Write as _;
use std::path::Path;

use chapter_common::{Report, Samples};
use serde_json::{json, Value};

use crate::config::Config;
use crate::device::Grid;
use crate::profile::{self, Profile};
use crate::ways::Way;
use crate::{Options, PROMPT_LEN};

/// The dump torch_twin.py reads (prompt, tokens, first-step logits), in `--out DIR`.
pub const DUMP_FILE: &str = "dump.json";
/// The report as JSON, in `--out DIR`.
pub const REPORT_FILE: &str = "llama_decode.json";

/// The file torch_twin.py writes its figures to in a results folder (run-h200.sh's name).
pub const TORCH_FILE: &str = "torch.json";

/// One way's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The way's key.
    pub way: &'static str,
    /// The way's label.
    pub label: &'static str,
    /// Median µs per decode step.
    pub us_per_step: f64,
    /// Tokens per second (1e6 / µs per step).
    pub tokens_per_s: f64,
    /// (weight bytes + mean KV-cache bytes read per step) / step time, GB/s.
    pub gb_per_s: f64,
    /// `gb_per_s` over the GPU's peak, %, where the peak is known.
    pub pct_peak: Option<f64>,
    /// µs per step of each timed run, in run order (run `i` of every way ran in the same round).
    pub us_runs: Vec<f64>,
}

impl Row {
    /// As JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "way": self.way, "label": self.label, "us_per_step": self.us_per_step,
            "tokens_per_s": self.tokens_per_s, "gb_per_s": self.gb_per_s, "pct_of_peak": self.pct_peak,
            "us_runs": self.us_runs,
        })
    }
}

/// Bytes a decode step reads on average over a generation of `tokens` steps after the prompt:
/// the weights and the KV cache of positions 0..=pos.
pub fn bytes_per_step(config: &Config, tokens: usize) -> f64 {
    let first = PROMPT_LEN - 1;
    let cache: f64 =
        (first..first + tokens).map(|pos| config.cache_bytes(pos)).sum::<f64>() / tokens.max(1) as f64;
    config.weight_bytes() + cache
}

/// The rows of `plan` from their samples (µs per step).
pub fn rows(config: &Config, plan: &[Way], us: &[Samples], tokens: usize, peak_gbs: Option<f64>) -> Vec<Row> {
    let bytes = bytes_per_step(config, tokens);
    plan.iter()
        .zip(us)
        .map(|(&way, samples)| {
            let us = samples.median();
            let gb_per_s = bytes / (us * 1e-6) / 1e9;
            Row {
                way: way.key(),
                label: way.label(),
                us_per_step: us,
                tokens_per_s: 1e6 / us,
                gb_per_s,
                pct_peak: peak_gbs.map(|p| 100.0 * gb_per_s / p),
                us_runs: samples.0.clone(),
            }
        })
        .collect()
}

/// The one-sided p-value at or under which a sign test calls one way faster than the other.
pub const SIGNIFICANCE: f64 = 0.05;

/// (d) against (b) run by run. The ways run in rounds (one run of each, in alternating
/// order), so run `i` of (b) and run `i` of (d) are a pair measured side by side: a drift of
/// the GPU's clocks or temperature moves both, where it would blur a comparison of medians.
#[derive(Debug, Clone, PartialEq)]
pub struct Paired {
    /// Pairs whose times differ (equal pairs say nothing about which is faster).
    pub pairs: usize,
    /// Pairs in which (d) took less time than (b).
    pub d_faster: usize,
    /// The median over the pairs of (b) − (d), µs per step.
    pub margin_us: f64,
    /// The sign test's one-sided p-value for "(d) is faster": the chance of `d_faster` or more
    /// of `pairs` if either way were as likely to win each pair.
    pub p_d_faster: f64,
    /// The same for "(b) is faster".
    pub p_b_faster: f64,
}

impl Paired {
    /// Pairs run `i` of `b` with run `i` of `d` (µs per step).
    ///
    /// ```
    /// use llama_decode::output::Paired;
    /// let paired = Paired::of(&[750.0, 751.0, 750.5, 750.2, 750.9], &[749.5, 750.6, 750.0, 749.9, 750.4]);
    /// assert_eq!((paired.d_faster, paired.pairs), (5, 5));
    /// assert!((paired.margin_us - 0.5).abs() < 1e-9);
    /// assert!((paired.p_d_faster - 1.0 / 32.0).abs() < 1e-12); // 5 of 5: 2^-5
    /// ```
    pub fn of(b: &[f64], d: &[f64]) -> Paired {
        let margins: Vec<f64> = b.iter().zip(d).map(|(b, d)| b - d).collect();
        let pairs = margins.iter().filter(|m| **m != 0.0).count();
        let d_faster = margins.iter().filter(|m| **m > 0.0).count();
        Paired {
            pairs,
            d_faster,
            margin_us: chapter_common::median(&margins),
            p_d_faster: sign_test_p(d_faster, pairs),
            p_b_faster: sign_test_p(pairs - d_faster, pairs),
        }
    }
}

/// P(X ≥ `wins`) for X binomial over `pairs` fair coin flips: the one-sided sign test.
///
/// ```
/// use llama_decode::output::sign_test_p;
/// assert_eq!(sign_test_p(3, 3), 0.125); // 3 of 3 is too few to tell
/// assert!((sign_test_p(8, 9) - 10.0 / 512.0).abs() < 1e-12);
/// assert_eq!(sign_test_p(0, 0), 1.0);
/// ```
pub fn sign_test_p(wins: usize, pairs: usize) -> f64 {
    let mut choose = 1.0f64; // C(pairs, k), from k = 0
    let mut tail = 0.0;
    for k in 0..=pairs {
        if k >= wins {
            tail += choose;
        }
        choose = choose * (pairs - k) as f64 / (k + 1) as f64;
    }
    tail / 2f64.powi(pairs as i32)
}

/// The issue's goals that this run can judge ((d) ≤ 760 µs, ≤ 700 µs and ≥ 70% of peak as a
/// stretch, (d) faster than (b) by the sign test over their pairs of runs at [`SIGNIFICANCE`]);
/// the PyTorch ratio comes from the twin.
pub fn goal_lines(rows: &[Row]) -> Vec<String> {
    let find = |key: &str| rows.iter().find(|r| r.way == key);
    let (Some(d), Some(b)) = (find("while_pdl"), find("graph_per_step")) else {
        return vec!["goals: (d) did not run, no verdict".to_string()];
    };
    let verdict = |held: bool| if held { "met" } else { "NOT met" };
    let pct = d.pct_peak.map_or("peak unknown".to_string(), |p| format!("{p:.1}% of peak"));
    let paired = Paired::of(&b.us_runs, &d.us_runs);
    let faster = if paired.p_d_faster <= SIGNIFICANCE {
        "met"
    } else if paired.p_b_faster <= SIGNIFICANCE {
        "NOT met, (b) is faster"
    } else if sign_test_p(paired.pairs, paired.pairs) > SIGNIFICANCE {
        "NOT shown, too few runs for the sign test (5 at least)"
    } else {
        "NOT shown, a tie"
    };
    vec![
        format!("goal (d) <= 760 us/step: {} ({:.1})", verdict(d.us_per_step <= 760.0), d.us_per_step),
        format!(
            "stretch (d) <= 700 us/step and >= 70% of peak: {} ({:.1} us, {pct})",
            verdict(d.us_per_step <= 700.0 && d.pct_peak.is_some_and(|p| p >= 70.0)),
            d.us_per_step
        ),
        format!(
            "goal (d) faster than (b): {faster} ({:.1} vs {:.1} us; (d) faster in {} of {} pairs of runs, \
             sign test p = {:.3}; median margin {:.2} us, {:.3}%)",
            d.us_per_step,
            b.us_per_step,
            paired.d_faster,
            paired.pairs,
            paired.p_d_faster,
            paired.margin_us,
            100.0 * paired.margin_us / b.us_per_step
        ),
        "goal >= 1.3x faster than PyTorch's fastest way: judged from torch_twin.py's figures (see README.md)"
            .to_string(),
    ]
}

/// The table (markdown): the device and the GEMVs' blocks per SM, the ways, then the profile.
pub fn markdown(
    rows: &[Row], profile: &Profile, device: &str, peak_gbs: Option<f64>, grid: Grid, per_iteration: usize,
) -> String {
    let mut out = String::new();
    let peak = peak_gbs.map_or("unknown".to_string(), |p| format!("{p:.0} GB/s"));
    let _ = writeln!(
        out,
        "{device}, peak {peak}; blocks per SM: {} (gate/up, down, O projection), {} (LM head); gate/up and \
         down: {}; steps per WHILE iteration: {per_iteration}\n",
        grid.blocks_per_sm,
        grid.lm_head_blocks_per_sm,
        if grid.pipelined { "pipelined" } else { "plain" }
    );
    let _ = writeln!(out, "| way | µs/step | tokens/s | GB/s | % of peak |");
    let _ = writeln!(out, "|---|---:|---:|---:|---:|");
    for r in rows {
        let pct = r.pct_peak.map_or("n/a".to_string(), |p| format!("{p:.1}"));
        let _ = writeln!(
            out,
            "| {} | {:.1} | {:.1} | {:.0} | {pct} |",
            r.label, r.us_per_step, r.tokens_per_s, r.gb_per_s
        );
    }
    let _ = writeln!(out, "\n| profile | µs/step |");
    let _ = writeln!(out, "|---|---:|");
    for kind in profile::kinds() {
        if let Some((_, us)) = profile.kernel_us.iter().find(|(name, _)| *name == kind) {
            let _ = writeln!(out, "| kernels alone: {kind} | {us:.1} |");
        }
    }
    let _ = writeln!(out, "| kernels alone: sum | {:.1} |", profile.kernels_us);
    let _ = writeln!(
        out,
        "| kernels alone: sum at the first decode position | {:.1} |",
        profile.kernels_first_us
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| gaps of {} (its time − the kernels') | {:.1} |",
            r.label,
            r.us_per_step - profile.kernels_us
        );
    }
    let _ = writeln!(
        out,
        "| empty WHILE loop (control and launches), per iteration | {:.1} |",
        profile.empty_while_us
    );
    let unrolled = format!("{} steps unrolled, {} launches", profile.chain_steps, profile.chain_launches);
    let _ = writeln!(out, "| {unrolled}, plain edges | {:.1} |", profile.chain_us);
    if let Some(us) = profile.chain_pdl_us {
        let _ = writeln!(out, "| {unrolled}, programmatic edges | {us:.1} |");
    }
    out
}

/// The rows as CSV.
pub fn csv(rows: &[Row]) -> String {
    let mut out = "way,us_per_step,tokens_per_s,gb_per_s,pct_of_peak\n".to_string();
    for r in rows {
        let pct = r.pct_peak.map_or(String::new(), |p| format!("{p:.3}"));
        let _ = writeln!(out, "{},{:.3},{:.3},{:.3},{pct}", r.way, r.us_per_step, r.tokens_per_s, r.gb_per_s);
    }
    out
}

/// The model and the run, as the twin reads them.
pub fn config_json(config: &Config, options: &Options) -> Value {
    json!({
        "hidden": config.hidden, "layers": config.layers, "q_heads": config.q_heads, "kv_heads": config.kv_heads,
        "head_dim": crate::config::HEAD_DIM, "mlp": config.mlp, "vocab": config.vocab, "max_seq": config.max_seq,
        "rope_theta": config.rope_theta, "rope_scaling": config.rope_scaling, "eps": config.eps,
        "seed": options.seed, "seed32": crate::weights::seed32(options.seed), "tokens": options.tokens,
        "runs": options.runs, "weight_bytes": config.weight_bytes(),
        "blocks_per_sm": options.blocks_per_sm, "lm_head_blocks_per_sm": options.lm_head_blocks_per_sm,
        "pipelined_gemv": options.pipelined_gemv, "steps_per_iteration": options.steps_per_iteration,
        "bytes_per_step": bytes_per_step(config, options.tokens),
    })
}

/// Writes `bytes` to `path`, creating its folder.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Writes the report, the CSV and the markdown table into `dir`.
pub fn write_results(dir: &Path, report: &Report, rows: &[Row], table: &str) -> Result<(), String> {
    let text = serde_json::to_string_pretty(&report.to_json()).unwrap_or_default();
    write(&dir.join(REPORT_FILE), text.as_bytes())?;
    write(&dir.join("llama_decode.csv"), csv(rows).as_bytes())?;
    write(&dir.join("llama_decode.md"), table.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidth_and_goals_follow_from_the_step_time() {
        let config = Config::llama_3_2_1b();
        let bytes = bytes_per_step(&config, 256);
        // 2.47 GB of weights plus a few MB of cache.
        assert!(bytes > config.weight_bytes() && bytes < config.weight_bytes() + 20e6, "{bytes}");
        let samples = |v: f64| Samples(vec![v; 5]);
        let plan = [Way::GraphPerStep, Way::WhilePdl];
        let rows = rows(&config, &plan, &[samples(800.0), samples(690.0)], 256, Some(4800.0));
        assert!((rows[1].gb_per_s - bytes / 690e-6 / 1e9).abs() < 1e-6);
        assert!((rows[1].pct_peak.unwrap() - 100.0 * rows[1].gb_per_s / 4800.0).abs() < 1e-9);
        let goals = goal_lines(&rows);
        assert!(goals[0].contains(": met"), "{goals:?}");
        assert!(goals[1].contains(": met"), "{goals:?}");
        assert!(goals[2].contains(": met"), "{goals:?}");
        assert!(csv(&rows).lines().count() == 3);
        // The verdict is the pairs', not the medians': 3 pairs cannot show it, 9 of 9 can.
        let runs = |v: &[f64]| Samples(v.to_vec());
        let three = super::rows(
            &config,
            &plan,
            &[runs(&[748.9, 749.5, 748.9]), runs(&[748.7, 749.2, 748.6])],
            256,
            Some(4800.0),
        );
        assert!(goal_lines(&three)[2].contains(": NOT shown, too few runs"), "{:?}", goal_lines(&three));
        let b = [749.0, 749.4, 748.8, 749.9, 749.1, 748.7, 749.3, 749.6, 749.0];
        let d: Vec<f64> = b.iter().map(|v| v - 0.3).collect();
        let nine = super::rows(&config, &plan, &[runs(&b), runs(&d)], 256, Some(4800.0));
        let line = &goal_lines(&nine)[2];
        assert!(
            line.contains(": met (") && line.contains("9 of 9 pairs") && line.contains("p = 0.002"),
            "{line}"
        );
        let slower = super::rows(&config, &plan, &[runs(&d), runs(&b)], 256, Some(4800.0));
        assert!(goal_lines(&slower)[2].contains(": NOT met, (b) is faster ("), "{:?}", goal_lines(&slower));
        // Mixed pairs: 5 of 9 is no evidence either way.
        let mixed: Vec<f64> =
            b.iter().enumerate().map(|(i, v)| if i < 5 { v - 0.3 } else { v + 0.3 }).collect();
        let tie = super::rows(&config, &plan, &[runs(&b), runs(&mixed)], 256, Some(4800.0));
        assert!(goal_lines(&tie)[2].contains(": NOT shown, a tie ("), "{:?}", goal_lines(&tie));
    }
}
