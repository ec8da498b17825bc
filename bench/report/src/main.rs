//! `cuda-graph-bench-report`: the benchmark's reports from a results folder's `bench.csv`,
//! without CUDA or a GPU.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use cuda_graph_bench_report::{
    over_runs, redraw, root_table, table, write_report, Goals, ReportError, Results,
};

/// The results README, the charts and the goals' verdicts from DIR's bench.csv.
#[derive(Debug, Parser)]
#[command(name = "cuda-graph-bench-report")]
struct Cli {
    /// The results folder whose bench.csv is read.
    #[arg(value_name = "DIR", required_unless_present_any = ["readme_table", "redraw"])]
    dir: Option<PathBuf>,
    /// Where to write README.md, launch_latency.png and chain_replay.png [default: DIR].
    #[arg(long, value_name = "OUT", requires = "dir")]
    out: Option<PathBuf>,
    /// Only print the top README's benchmark table from DIR's bench.csv.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["dir", "out", "redraw"])]
    readme_table: Option<PathBuf>,
    /// Only redraw DIR's charts with text (for results from a machine that had no font).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["dir", "out"])]
    redraw: Option<PathBuf>,
}

fn main() -> ExitCode {
    match report(&Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("cuda-graph-bench-report: {err}");
            ExitCode::FAILURE
        }
    }
}

fn report(cli: &Cli) -> Result<(), ReportError> {
    if let Some(dir) = &cli.redraw {
        let chart = redraw::redraw(dir)?;
        println!("redrew {} with text", chart.display());
        return Ok(());
    }
    if let Some(dir) = &cli.readme_table {
        print!("{}", root_table::root_readme_table(&Results::read(dir)?.runs));
        return Ok(());
    }
    let dir = cli.dir.as_ref().expect("clap requires DIR without --readme-table or --redraw");
    let results = Results::read(dir)?;
    let goals = Goals::bench()?;
    let written = write_report(&results, &goals, cli.out.as_ref().unwrap_or(dir))?;
    println!(
        "goals (set for {}; {} run(s) on {}):",
        goals.set_for,
        results.runs.len(),
        results.info.device_name()
    );
    for goal in over_runs::decide(&goals, &results.runs) {
        println!("  {goal}");
    }
    for path in [&written.chart, &written.chain_chart, &written.readme] {
        println!("wrote {}", path.display());
    }
    print!("\n{}", table::text_table(&results.runs));
    Ok(())
}
