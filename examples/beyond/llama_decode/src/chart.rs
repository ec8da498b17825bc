//! The chart (`--chart DIR`, no GPU): from a results folder's `llama_decode.json` and (where
//! present) `torch.json`, `llama_decode.png`. Left, µs per step of each way beside PyTorch's
//! (its eager way, ten times slower, is named in the caption instead of drawn), the goal's 760
//! µs dashed. Right, each kernel kind's own time per step beside what its weights take at the
//! GPU's peak bandwidth. Text needs a TrueType font, read at run time (`LLAMA_DECODE_FONT` or
//! the system's font folders).

use std::path::Path;

use plotters::prelude::*;
use serde_json::Value;

use crate::output::{REPORT_FILE, TORCH_FILE};

/// The chart's file name in a results folder.
pub const FILE_NAME: &str = "llama_decode.png";

/// The goal drawn on the left panel, µs per step.
pub const GOAL_US: f64 = 760.0;

/// One bar: its label, its value and, for a kernel, the time its weights take at peak.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// The label under it.
    pub label: String,
    /// µs per step.
    pub us: f64,
    /// µs per step its weights take at the GPU's peak bandwidth (kernels with weights).
    pub floor_us: Option<f64>,
    /// PyTorch's (drawn apart).
    pub torch: bool,
}

fn number(value: &Value, what: &str) -> Result<f64, String> {
    value.as_f64().ok_or_else(|| format!("{REPORT_FILE}: {what} is not a number"))
}

/// The ways' bars from the report, then PyTorch's compiled and graph ways from the twin's
/// figures.
///
/// ```
/// let report = serde_json::json!({"data": {"rows": [
///     {"way": "graph_per_step", "label": "(b) host loop, one graph per step", "us_per_step": 750.0}]}});
/// let torch = serde_json::json!({"us_per_step": {"compile": 1200.0, "cuda_graph": 2400.0, "eager": 13000.0}});
/// let bars = llama_decode::chart::way_bars(&report, Some(&torch)).unwrap();
/// assert_eq!(bars.iter().map(|b| b.label.as_str()).collect::<Vec<_>>(), ["(b)", "torch.compile", "torch graph"]);
/// ```
pub fn way_bars(report: &Value, torch: Option<&Value>) -> Result<Vec<Bar>, String> {
    let rows = report["data"]["rows"].as_array().ok_or_else(|| format!("{REPORT_FILE}: no data.rows"))?;
    let mut bars = Vec::new();
    for row in rows {
        let label = row["label"].as_str().unwrap_or("?");
        // "(d) as (c), ..." -> "(d)": the legend under the chart says what each is.
        let short = label.split_whitespace().next().unwrap_or(label).to_string();
        bars.push(Bar {
            label: short,
            us: number(&row["us_per_step"], "a row's us_per_step")?,
            floor_us: None,
            torch: false,
        });
    }
    if let Some(torch) = torch {
        for (key, label) in [("compile", "torch.compile"), ("cuda_graph", "torch graph")] {
            if let Some(us) = torch["us_per_step"][key].as_f64() {
                bars.push(Bar { label: label.to_string(), us, floor_us: None, torch: true });
            }
        }
    }
    Ok(bars)
}

/// Bytes of weights each kernel kind reads per step, from the report's model shape.
fn weight_bytes(config: &Value, kind: &str) -> Option<f64> {
    let get = |key: &str| config[key].as_f64();
    let (layers, hidden, mlp) = (get("layers")?, get("hidden")?, get("mlp")?);
    let (q_heads, kv_heads, head_dim, vocab) =
        (get("q_heads")?, get("kv_heads")?, get("head_dim")?, get("vocab")?);
    let elements = match kind {
        "qkv" => layers * (q_heads + 2.0 * kv_heads) * head_dim * hidden,
        "oproj" => layers * hidden * q_heads * head_dim,
        "gate_up" => layers * 2.0 * mlp * hidden,
        "down" => layers * hidden * mlp,
        "lm_head" => vocab * hidden,
        _ => return None,
    };
    Some(elements * 2.0)
}

/// The kernel kinds' bars from the report's profile, each with what its weights take at
/// `peak_gbs`.
///
/// ```
/// let report = serde_json::json!({"data": {
///     "config": {"layers": 1, "hidden": 256, "mlp": 512, "q_heads": 4, "kv_heads": 2, "head_dim": 64, "vocab": 1000},
///     "profile": {"kernel_us_per_step": {"qkv": 2.0, "attn": 1.0}}}});
/// let bars = llama_decode::chart::kernel_bars(&report, Some(1000.0)).unwrap();
/// assert_eq!(bars[0].label, "qkv");
/// // 512 rows of 256 bf16 at 1000 GB/s: 0.262 µs.
/// assert!((bars[0].floor_us.unwrap() - 0.262144).abs() < 1e-9);
/// assert_eq!(bars[1].floor_us, None);
/// ```
pub fn kernel_bars(report: &Value, peak_gbs: Option<f64>) -> Result<Vec<Bar>, String> {
    let data = &report["data"];
    let kernels = data["profile"]["kernel_us_per_step"]
        .as_object()
        .ok_or_else(|| format!("{REPORT_FILE}: no data.profile.kernel_us_per_step"))?;
    let mut bars = Vec::new();
    for kind in crate::profile::kinds() {
        let Some(us) = kernels.get(kind) else { continue };
        let floor_us = peak_gbs.and_then(|gbs| weight_bytes(&data["config"], kind).map(|b| b / (gbs * 1e3)));
        bars.push(Bar { label: kind.to_string(), us: number(us, "a kernel's µs")?, floor_us, torch: false });
    }
    Ok(bars)
}

const OURS: RGBColor = RGBColor(0x94, 0x67, 0xbd);
const TORCH: RGBColor = RGBColor(0xd6, 0x27, 0x28);
const FLOOR: RGBColor = RGBColor(0x7f, 0x7f, 0x7f);

/// Draws one panel of bars on `area`, with `goal` dashed across it where given.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>, title: &str, bars: &[Bar], goal: Option<f64>,
) -> Result<(), String> {
    let error = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let top = bars.iter().map(|b| b.us).fold(goal.unwrap_or(0.0), f64::max) * 1.15;
    let n = bars.len() as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..n, 0.0..top)
        .map_err(error)?;
    let labels: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(bars.len() * 2 + 1)
        .x_label_formatter(&|x| {
            let index = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 0.01 && index < labels.len() {
                labels[index].clone()
            } else {
                String::new()
            }
        })
        .y_desc("µs per step")
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .draw()
        .map_err(error)?;
    for (i, bar) in bars.iter().enumerate() {
        let x = i as f64;
        let color = if bar.torch { TORCH } else { OURS };
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x + 0.15, 0.0), (x + 0.85, bar.us)],
                color.filled(),
            )))
            .map_err(error)?;
        if let Some(floor) = bar.floor_us {
            let style = ShapeStyle::from(&FLOOR).stroke_width(3);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x + 0.1, floor), (x + 0.9, floor)],
                    style,
                )))
                .map_err(error)?;
        }
        let text = Text::new(format!("{:.1}", bar.us), (x + 0.2, bar.us + top * 0.04), ("sans-serif", 14));
        chart.draw_series(std::iter::once(text)).map_err(error)?;
    }
    if let Some(goal) = goal {
        let style = ShapeStyle::from(&BLACK).stroke_width(2);
        chart.draw_series(DashedLineSeries::new([(0.0, goal), (n, goal)], 10, 6, style)).map_err(error)?;
        let text =
            Text::new(format!("dashed: the goal, {goal:.0} µs"), (0.1, top * 0.97), ("sans-serif", 15));
        chart.draw_series(std::iter::once(text)).map_err(error)?;
    }
    Ok(())
}

/// Draws both panels into a PNG at `path` (1400 × 600), titled `caption`.
pub fn draw(path: &Path, caption: &str, ways: &[Bar], kernels: &[Bar]) -> Result<(), String> {
    if !chapter_common::chart_font::load_sans("LLAMA_DECODE_FONT") {
        return Err("no TrueType font found: set LLAMA_DECODE_FONT to a .ttf file".to_string());
    }
    let root = BitMapBackend::new(path, (1400, 600)).into_drawing_area();
    let error = |e: DrawingAreaErrorKind<_>| e.to_string();
    root.fill(&WHITE).map_err(error)?;
    let root = root.titled(caption, ("sans-serif", 20)).map_err(error)?;
    let (left, right) = root.split_horizontally(700);
    panel(&left, "Per decode step (lower is better)", ways, Some(GOAL_US))?;
    panel(&right, "Kernels alone per step; grey: their weights at peak bandwidth", kernels, None)?;
    root.present().map_err(error)?;
    Ok(())
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Draws `dir/llama_decode.png` from `dir/llama_decode.json` and (if present) `dir/torch.json`;
/// returns what it drew, as text.
///
/// ```no_run
/// let drawn = llama_decode::chart::chart(std::path::Path::new("examples/beyond/llama_decode/results/h200-2026-11-29-paired"))?;
/// println!("{drawn}");
/// # Ok::<(), String>(())
/// ```
pub fn chart(dir: &Path) -> Result<String, String> {
    let report = read_json(&dir.join(REPORT_FILE))?;
    let torch_path = dir.join(TORCH_FILE);
    let torch = if torch_path.exists() { Some(read_json(&torch_path)?) } else { None };
    let device = report["data"]["device"].as_str().unwrap_or("unknown device");
    let ways = way_bars(&report, torch.as_ref())?;
    let kernels = kernel_bars(&report, crate::peak_gbs(device))?;
    let eager = torch.as_ref().and_then(|t| t["us_per_step"]["eager"].as_f64());
    let mut caption = format!("llama_decode, Llama-3.2-1B shapes, batch 1: {device}");
    if let Some(eager) = eager {
        caption.push_str(&format!(" (PyTorch eager: {eager:.0} µs per step, not drawn)"));
    }
    let path = dir.join(FILE_NAME);
    draw(&path, &caption, &ways, &kernels)?;
    let list =
        |bars: &[Bar]| bars.iter().map(|b| format!("{} {:.1}", b.label, b.us)).collect::<Vec<_>>().join(", ");
    Ok(format!("drew {}: ways {}; kernels {}\n", path.display(), list(&ways), list(&kernels)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_run_is_drawn_where_a_font_exists() {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        let source = here.join("results/h200-2026-11-29-paired");
        let dir = std::env::temp_dir().join(format!("llama-decode-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for file in [REPORT_FILE, TORCH_FILE] {
            std::fs::copy(source.join(file), dir.join(file)).unwrap();
        }
        let report = read_json(&dir.join(REPORT_FILE)).unwrap();
        let kernels = kernel_bars(&report, Some(4800.0)).unwrap();
        assert_eq!(kernels.len(), 7, "{kernels:?}");
        // gate/up: 16 layers of 2 x 8192 x 2048 bf16 at 4.8 TB/s: 223.7 µs.
        let gate_up = kernels.iter().find(|b| b.label == "gate_up").unwrap();
        assert!((gate_up.floor_us.unwrap() - 223.696).abs() < 0.01, "{gate_up:?}");
        if chapter_common::chart_font::load_sans("LLAMA_DECODE_FONT") {
            let text = chart(&dir).unwrap();
            assert!(text.contains("(d) 753.3"), "{text}");
            assert!(std::fs::metadata(dir.join(FILE_NAME)).unwrap().len() > 10_000);
        } else {
            eprintln!("skipped drawing: no TrueType font on this machine (set LLAMA_DECODE_FONT)");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
