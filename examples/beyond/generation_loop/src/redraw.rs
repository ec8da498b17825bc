//! Draws a results folder's chart and writes its README (the table and the goals) from the
//! example's report (`generation.json`, written by `--out`) and the PyTorch twin's figures
//! (`torch.json`). No GPU is needed: the GPU machine runs both programs, this draws here.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::chart;
use crate::results::{goals, markdown_table, rows_from, Row};

/// The example's report in a results folder.
pub const REPORT_FILE: &str = "generation.json";
/// The twin's figures in a results folder.
pub const TORCH_FILE: &str = "torch.json";
/// The results README.
pub const README_FILE: &str = "README.md";

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The profile as a Markdown table: per batch size, the step chains' and the empty loop's µs
/// per step, and what each way adds per step to its chain (its time minus the chain's; (d)'s
/// chain has programmatic edges).
///
/// ```
/// let profile = serde_json::json!([{"batch": 1, "steps": 205, "step_chain": {"median": 7.0},
///     "empty_while": {"median": 5.0}, "added_per_step_us": {"graph_per_step": 10.0, "while_graph": 4.5}}]);
/// let table = generation_loop::redraw::profile_table(&profile);
/// assert!(table.contains("| 1 | 205 | 7.00 | — | 5.00 | — | — | — | 10.00 | — | 4.50 | — |"), "{table}");
/// ```
pub fn profile_table(profile: &Value) -> String {
    let ways = ["host_launches", "graph_per_step", "graph_per_step_mapped", "while_graph", "while_pdl"];
    let mut out = String::from(
        "| batch | steps | all steps in one graph | the same, programmatic edges | WHILE of 4 empty kernels \
         | (c), 4 steps per iteration | (d), 4 steps per iteration | added by (a) | added by (b) | added by (b′) \
         | added by (c) | added by (d) |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let show = |v: &Value| v.as_f64().map_or("—".to_string(), |x| format!("{x:.2}"));
    for entry in profile.as_array().into_iter().flatten() {
        let added: Vec<String> = ways.iter().map(|w| show(&entry["added_per_step_us"][w])).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            entry["batch"],
            entry["steps"],
            show(&entry["step_chain"]["median"]),
            show(&entry["step_chain_pdl"]["median"]),
            show(&entry["empty_while"]["median"]),
            show(&entry["while_unrolled"]["median"]),
            show(&entry["while_unrolled_pdl"]["median"]),
            added.join(" | ")
        );
    }
    out
}

/// The README of a results folder: where the figures come from, the chart, the table, the
/// goals at the smallest batch and both programs' checks.
pub fn readme(report: &Value, torch: Option<&Value>, rows: &[Row]) -> String {
    let device = report["data"]["device"].as_str().unwrap_or("unknown device");
    let mut out = format!("# generation_loop on {device}\n\n");
    let runs = rows.first().map_or(0, |r| r.runs);
    let _ = writeln!(
        out,
        "Medians of {runs} timed runs after a warm-up, in one process: the example's ways from \
         [`{REPORT_FILE}`]({REPORT_FILE}) (verdict {}), PyTorch's from [`{TORCH_FILE}`]({TORCH_FILE}){}. \
         Drawn by `generation_loop --redraw` from those two files.\n",
        report["verdict"].as_str().unwrap_or("?"),
        match torch {
            Some(t) => format!(
                " (PyTorch {}, run right after{}; tokens {})",
                t["torch"].as_str().unwrap_or("?"),
                t["date"].as_str().map(|d| format!(" on {d}")).unwrap_or_default(),
                if t["tokens_match"] == true {
                    "of its bit-exact twin equal to the example's"
                } else {
                    "of its bit-exact twin DIFFERENT from the example's"
                }
            ),
            None => " (not present: no PyTorch figures)".to_string(),
        }
    );
    let _ = writeln!(out, "![µs per step and tokens per second by batch size]({})\n", chart::FILE_NAME);
    out.push_str(&markdown_table(rows));
    let smallest = rows.iter().map(|r| r.batch).min().unwrap_or(1);
    out.push_str("\nGoals:\n\n");
    for goal in goals(rows, smallest) {
        let _ = writeln!(out, "- {}", goal.line().trim_start_matches("goal: "));
    }
    if let Some(torch) = torch {
        out.push_str(&agreement_list(torch));
    }
    out.push_str(
        "\nWhere a step's time goes (µs per step, medians; \"added\" is the way's time minus the unrolled \
         chain's: the loop's control, on the host or on the device):\n\n",
    );
    out.push_str(&profile_table(&report["data"]["profile"]));
    out.push_str("\nChecks of the example:\n\n");
    for check in report["checks"].as_array().into_iter().flatten() {
        let held = if check["held"] == true { "ok" } else { "FAILED" };
        let _ = writeln!(
            out,
            "- {}: {held} ({})",
            check["name"].as_str().unwrap_or("?"),
            check["detail"].as_str().unwrap_or("")
        );
    }
    out
}

/// What the PyTorch ways a practitioner would write (not bit-exact: `nn.GRUCell`'s own
/// activations, compiled kernels) produced against the example's tokens, from `torch.json`'s
/// `agreement` entries: how many steps agree and the largest logit difference from the
/// bit-exact twin while they do. Empty when there are none.
///
/// ```
/// let torch = serde_json::json!({"agreement": [{"batch": 4, "label": "GRUCell", "exact": false,
///     "steps": 205, "steps_agreeing": 12, "median_prefix": 30.5, "tokens_equal": 40, "tokens": 419,
///     "max_logit_diff": 0.0123}]});
/// let text = generation_loop::redraw::agreement_list(&torch);
/// assert!(text.contains("- batch 4, GRUCell: the first 12 of 205 steps agree in every sequence (median \
///     sequence 30.5; 40 of 419 tokens equal); largest logit difference from the bit-exact twin while they \
///     agree 0.0123"), "{text}");
/// ```
pub fn agreement_list(torch: &Value) -> String {
    let Some(entries) = torch["agreement"].as_array().filter(|a| !a.is_empty()) else {
        return String::new();
    };
    let mut out = String::from(
        "\nPyTorch's ways as a PyTorch user writes them (`nn.GRUCell`, `torch.compile`), against the example's \
         tokens (they compute sigmoid and tanh where the example looks them up in tables, so their tokens may \
         differ; every way runs the example's step count):\n\n",
    );
    for e in entries {
        let number = |name: &str| e[name].as_f64().map_or("?".to_string(), |v| format!("{v}"));
        let agreement = if e["exact"] == true {
            "every token equal".to_string()
        } else {
            format!(
                "the first {} of {} steps agree in every sequence (median sequence {}; {} of {} tokens equal)",
                number("steps_agreeing"),
                number("steps"),
                number("median_prefix"),
                number("tokens_equal"),
                number("tokens")
            )
        };
        let _ = writeln!(
            out,
            "- batch {}, {}: {agreement}; largest logit difference from the bit-exact twin while they agree {}",
            e["batch"],
            e["label"].as_str().unwrap_or("?"),
            e["max_logit_diff"].as_f64().map_or("?".to_string(), |v| format!("{v:.4}"))
        );
    }
    out
}

/// Draws `dir/generation_loop.png` and writes `dir/README.md` from `dir/generation.json` and
/// (if present) `dir/torch.json`; returns the table and the goals as text.
///
/// ```no_run
/// let summary = generation_loop::redraw::redraw(std::path::Path::new("examples/beyond/generation_loop/results"))?;
/// print!("{summary}");
/// # Ok::<(), String>(())
/// ```
pub fn redraw(dir: &Path) -> Result<String, String> {
    let report = read_json(&dir.join(REPORT_FILE))?;
    let mut rows = rows_from(&report["data"]["rows"], REPORT_FILE)?;
    let torch_path = dir.join(TORCH_FILE);
    let torch = if torch_path.exists() { Some(read_json(&torch_path)?) } else { None };
    if let Some(torch) = &torch {
        rows.extend(rows_from(&torch["rows"], TORCH_FILE)?);
    }
    rows.sort_by_key(|r| r.batch);
    let device = report["data"]["device"].as_str().unwrap_or("unknown device");
    chart::draw(&dir.join(chart::FILE_NAME), &format!("Greedy generation, 2-layer GRU: {device}"), &rows)?;
    let text = readme(&report, torch.as_ref(), &rows);
    let path = dir.join(README_FILE);
    std::fs::write(&path, &text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(batch: u32, way: &str, us: f64) -> Value {
        json!({"batch": batch, "way": way, "label": way, "steps": 100, "tokens": 100 * batch,
               "us_per_step": {"median": us, "runs": [us, us]}, "tokens_per_s": {"median": 1e6 / us}})
    }

    #[test]
    fn a_results_folder_is_drawn_and_described() {
        let dir = std::env::temp_dir().join(format!("generation-loop-redraw-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let report = json!({"verdict": "PASS", "checks": [{"name": "c", "held": true, "detail": "d"}],
            "data": {"device": "GPU X", "rows": [row(1, "graph_per_step", 20.0), row(1, "while_graph", 8.0),
                                                row(4, "graph_per_step", 22.0), row(4, "while_graph", 9.0)]}});
        let torch = json!({"torch": "2.11", "tokens_match": true, "date": "2026-11-26",
            "rows": [row(1, "torch_graph", 50.0), row(4, "torch_graph", 52.0)],
            "agreement": [{"batch": 1, "label": "compiled", "exact": false, "steps": 100, "steps_agreeing": 3,
                           "median_prefix": 3, "tokens_equal": 9, "tokens": 100, "max_logit_diff": 0.5}]});
        std::fs::write(dir.join(REPORT_FILE), report.to_string()).unwrap();
        std::fs::write(dir.join(TORCH_FILE), torch.to_string()).unwrap();
        let text = readme(&report, Some(&torch), &{
            let mut rows = rows_from(&report["data"]["rows"], "r").unwrap();
            rows.extend(rows_from(&torch["rows"], "t").unwrap());
            rows.sort_by_key(|r| r.batch);
            rows
        });
        assert!(text.contains("# generation_loop on GPU X"), "{text}");
        assert!(
            text.contains("PyTorch 2.11, run right after on 2026-11-26; tokens of its bit-exact twin equal"),
            "{text}"
        );
        assert!(
            text.contains(
                "(b) or (b′) (here graph_per_step), at batch 1: measured 2.50x, runs 2.50x-2.50x (met)"
            ),
            "{text}"
        );
        assert!(
            text.contains("(d) at least 2x faster per step than PyTorch's fastest way (here torch_graph)"),
            "{text}"
        );
        assert!(
            text.contains("- batch 1, compiled: the first 3 of 100 steps agree in every sequence"),
            "{text}"
        );
        assert!(text.contains("- c: ok (d)"), "{text}");
        if chart::load_font() {
            let summary = redraw(&dir).unwrap();
            assert_eq!(summary, std::fs::read_to_string(dir.join(README_FILE)).unwrap());
            assert!(std::fs::metadata(dir.join(chart::FILE_NAME)).unwrap().len() > 10_000);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
