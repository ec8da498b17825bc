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
}

impl Row {
    /// As JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "way": self.way, "label": self.label, "us_per_step": self.us_per_step,
            "tokens_per_s": self.tokens_per_s, "gb_per_s": self.gb_per_s, "pct_of_peak": self.pct_peak,
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
            }
        })
        .collect()
}

/// Below this fraction of (b)'s time, (d) and (b) are called a tie rather than one faster: a
/// run's own spread.
pub const TIE: f64 = 0.005;

/// The goals that this run can judge ((d) ≤ 760 µs, ≤ 700 µs and ≥ 70% of peak as a
/// stretch, (d) faster than (b) by more than [`TIE`]); the PyTorch ratio comes from the twin.
pub fn goal_lines(rows: &[Row]) -> Vec<String> {
    let find = |key: &str| rows.iter().find(|r| r.way == key);
    let (Some(d), Some(b)) = (find("while_pdl"), find("graph_per_step")) else {
        return vec!["goals: (d) did not run, no verdict".to_string()];
    };
    let verdict = |held: bool| if held { "met" } else { "NOT met" };
    let pct = d.pct_peak.map_or("peak unknown".to_string(), |p| format!("{p:.1}% of peak"));
    vec![
        format!("goal (d) <= 760 us/step: {} ({:.1})", verdict(d.us_per_step <= 760.0), d.us_per_step),
        format!(
            "stretch (d) <= 700 us/step and >= 70% of peak: {} ({:.1} us, {pct})",
            verdict(d.us_per_step <= 700.0 && d.pct_peak.is_some_and(|p| p >= 70.0)),
            d.us_per_step
        ),
        format!(
            "goal (d) faster than (b): {} ({:.1} vs {:.1} us, {:.3}x)",
            if (b.us_per_step - d.us_per_step).abs() < TIE * b.us_per_step {
                "a tie, NOT met (within 0.5%)"
            } else {
                verdict(d.us_per_step < b.us_per_step)
            },
            d.us_per_step,
            b.us_per_step,
            b.us_per_step / d.us_per_step
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
        let samples = |v: f64| Samples(vec![v]);
        let plan = [Way::GraphPerStep, Way::WhilePdl];
        let rows = rows(&config, &plan, &[samples(800.0), samples(690.0)], 256, Some(4800.0));
        assert!((rows[1].gb_per_s - bytes / 690e-6 / 1e9).abs() < 1e-6);
        assert!((rows[1].pct_peak.unwrap() - 100.0 * rows[1].gb_per_s / 4800.0).abs() < 1e-9);
        let goals = goal_lines(&rows);
        assert!(goals[0].contains(": met"), "{goals:?}");
        assert!(goals[1].contains(": met"), "{goals:?}");
        assert!(goals[2].contains(": met"), "{goals:?}");
        assert!(csv(&rows).lines().count() == 3);
        // Within 0.5% of each other: a tie, whichever is lower.
        let close = super::rows(&config, &plan, &[samples(748.9), samples(748.7)], 256, Some(4800.0));
        assert!(goal_lines(&close)[2].contains(": a tie, NOT met"), "{:?}", goal_lines(&close));
        let slower = super::rows(&config, &plan, &[samples(700.0), samples(748.7)], 256, Some(4800.0));
        assert!(goal_lines(&slower)[2].contains(": NOT met ("), "{:?}", goal_lines(&slower));
    }
}
