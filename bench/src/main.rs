//! `cuda-graph-bench` (`cargo xtask bench [args]`): measures the Rust path and the C++ twin,
//! writes the CSV, hands over to the report crate for the charts and the results README, and
//! prints the goals and the table last.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use cuda_graph_bench::harness::Plan;
use cuda_graph_bench::report::{over_runs, redraw, root_table, table, Goals, Results};
use cuda_graph_bench::{default_out_dir, run, write_outputs, BenchError, Options};

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
    /// Full runs of everything, one after the other in this process (default 1): the CSV keeps
    /// every run's rows, the table gives the medians over the runs and their spread, and each
    /// goal is decided per run and over the runs.
    #[arg(long)]
    runs: Option<usize>,
    /// Untimed warm-up runs per side (default 5; 1 with --quick).
    #[arg(long)]
    warmup: Option<usize>,
    /// The CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: i32,
    /// Measure nothing: redraw DIR's chart with text from its bench.csv (for results from a
    /// machine that had no font). Needs no GPU.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["quick", "out", "reps", "warmup", "runs"])]
    redraw: Option<PathBuf>,
    /// Measure nothing: print the top README's benchmark table from DIR's bench.csv (medians
    /// over its runs), to paste into README.md. Needs no GPU.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["quick", "out", "reps", "warmup", "runs", "redraw"])]
    readme_table: Option<PathBuf>,
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
        let chart = redraw::redraw(dir)?;
        println!("redrew {} with text", chart.display());
        return Ok(());
    }
    if let Some(dir) = &cli.readme_table {
        print!("{}", root_table::root_readme_table(&Results::read(dir)?.runs));
        return Ok(());
    }
    // Read before measuring: a goals file that does not read must not cost a GPU run.
    let goals = Goals::bench()?;
    let mut options = if cli.quick { Options::quick() } else { Options::full() };
    options.device = cli.device;
    options.runs = cli.runs.unwrap_or(options.runs);
    options.plan = Plan {
        warmup: cli.warmup.unwrap_or(options.plan.warmup),
        reps: cli.reps.unwrap_or(options.plan.reps),
    };
    let out = cli.out.clone().unwrap_or_else(|| default_out_dir(cli.quick));
    println!(
        "cuda-graph-bench ({} run): {} warm-up + {} samples per side, Rust and C++ in pairs, each side first in every other pair, medians; {} run(s)",
        options.mode(),
        options.plan.warmup,
        options.plan.reps,
        options.runs
    );
    let results = run(&options, &mut |line| println!("{line}"))?;
    // The figures are printed even if writing the files fails: a GPU run is not to be lost.
    let written = write_outputs(&results, &goals, &out);

    println!(
        "\ngoals (bench/goals.json, set for {}; {} run(s) on {}; met over the runs only if the median meets it and at least half the runs did):",
        goals.set_for,
        results.runs.len(),
        results.info.device_name()
    );
    for goal in over_runs::decide(&goals, &results.runs) {
        println!("  {goal}");
    }
    for line in over_runs::row_median_lines(&goals, &results.runs) {
        println!("  beside it: {line}");
    }
    match &written {
        Ok(written) => {
            println!("\nwrote {}", written.csv.display());
            let note = if written.report.chart_has_text {
                ""
            } else {
                " (without text: no font found; BENCH_FONT=path.ttf adds labels, or --redraw DIR on a machine with a font)"
            };
            println!("wrote {}{note}", written.report.chart.display());
            println!("wrote {}{note}", written.report.chain_chart.display());
            println!("wrote {}", written.report.readme.display());
        }
        Err(err) => println!("\nwriting the results failed: {err}"),
    }
    println!("\n{}; {}", results.info.device, results.info.driver);
    print!("{}", table::text_table(&results.runs));
    written.map(|_| ())
}
