//! `cuda-graph-bench` (`cargo xtask bench [args]`): measures the Rust path and the C++ twin,
//! writes the CSV, the chart and the results README, and prints the table last.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use cuda_graph_bench::harness::Plan;
use cuda_graph_bench::{default_out_dir, output, run, write_outputs, BenchError, Options};

/// The cuda-graph crates against hand-written C++ on the same GPU, side by side.
#[derive(Debug, Parser)]
#[command(name = "cuda-graph-bench")]
struct Cli {
    /// A fast smoke run: small sizes, 1 warm-up and 3 samples per side.
    #[arg(long)]
    quick: bool,
    /// Where to write bench.csv, launch_latency.png and README.md [default: bench/results,
    /// or bench/results/quick with --quick].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Timed samples per side (default 31; 3 with --quick).
    #[arg(long)]
    reps: Option<usize>,
    /// Untimed warm-up runs per side (default 5; 1 with --quick).
    #[arg(long)]
    warmup: Option<usize>,
    /// The CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: i32,
    /// Measure nothing: redraw DIR's chart with text from its bench.csv (for results from a
    /// machine that had no font). Needs no GPU.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["quick", "out", "reps", "warmup"])]
    redraw: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match bench(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("cuda-graph-bench: {err}");
            ExitCode::FAILURE
        }
    }
}

fn bench(cli: &Cli) -> Result<(), BenchError> {
    if let Some(dir) = &cli.redraw {
        let chart = cuda_graph_bench::redraw::redraw(dir)?;
        println!("redrew {} with text", chart.display());
        return Ok(());
    }
    let mut options = if cli.quick { Options::quick() } else { Options::full() };
    options.device = cli.device;
    options.plan = Plan {
        warmup: cli.warmup.unwrap_or(options.plan.warmup),
        reps: cli.reps.unwrap_or(options.plan.reps),
    };
    let out = cli.out.clone().unwrap_or_else(|| default_out_dir(cli.quick));
    println!(
        "cuda-graph-bench ({} run): {} warm-up + {} samples per side, Rust and C++ interleaved, medians",
        options.mode(),
        options.plan.warmup,
        options.plan.reps
    );
    let report = run(&options, &mut |line| println!("{line}"))?;
    // The figures are printed even if writing the files fails: a GPU run is not to be lost.
    let written = write_outputs(&report, &out);

    println!("\ngoals (issue 8, set for an H100; this run: {}):", report.info.device.name);
    for goal in &report.goals {
        println!("  {goal}");
    }
    match &written {
        Ok(written) => {
            println!("\nwrote {}", written.csv.display());
            let note = if written.chart_has_text {
                ""
            } else {
                " (without text: no font found; BENCH_FONT=path.ttf adds labels, or --redraw DIR on a machine with a font)"
            };
            println!("wrote {}{note}", written.chart.display());
            println!("wrote {}", written.readme.display());
        }
        Err(err) => println!("\nwriting the results failed: {err}"),
    }
    println!("\n{}; {}", report.info.device.device_line(), report.info.device.driver_line());
    print!("{}", output::text_table(&report.rows));
    written.map(|_| ())
}
