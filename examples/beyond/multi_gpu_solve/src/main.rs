//! `multi_gpu_solve [--quick] [--rows N] [--features K] [--repeats R]`: the solve on every GPU
//! of the host, one graph launch per GPU, checked against the CPU and timed against the same
//! passes driven from the host. Exits non-zero when a check fails.

use std::process::ExitCode;

use cuda_graph::CudaError;
use multi_gpu_solve::problem::Config;

fn main() -> ExitCode {
    multi_gpu_solve::nccl_environment();
    let (config, repeats) = match parse(std::env::args().skip(1).collect()) {
        Ok(parsed) => parsed,
        Err(usage) => {
            eprintln!("{usage}");
            return ExitCode::from(2);
        }
    };
    match run(&config, repeats) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("multi_gpu_solve: {err}");
            ExitCode::FAILURE
        }
    }
}

fn parse(args: Vec<String>) -> Result<(Config, usize), String> {
    const USAGE: &str = "usage: multi_gpu_solve [--quick] [--rows N] [--features K (1-32)] [--repeats R]";
    let mut config = Config::full();
    let mut repeats = 5;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| -> Result<usize, String> {
            args.next().and_then(|v| v.parse().ok()).ok_or(format!("{name} needs a number\n{USAGE}"))
        };
        match arg.as_str() {
            "--quick" => {
                config = Config::quick();
                repeats = 2;
            }
            "--rows" => config.rows_per_gpu = value("--rows")?,
            "--features" => config.features = value("--features")?,
            "--repeats" => repeats = value("--repeats")?,
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    if !(1..=32).contains(&config.features) || config.rows_per_gpu == 0 || repeats == 0 {
        return Err(format!("features must be 1 to 32, rows and repeats at least 1\n{USAGE}"));
    }
    if u32::try_from(config.rows_per_gpu * config.features).is_err() {
        return Err(format!("rows x features must fit in 32 bits\n{USAGE}"));
    }
    Ok((config, repeats))
}

/// Solves, checks and prints; `Ok(false)` when a check failed.
fn run(config: &Config, repeats: usize) -> Result<bool, CudaError> {
    let report = multi_gpu_solve::run(config, repeats)?;
    println!(
        "multi_gpu_solve: {} GPU(s), {} rows each, {} features; CPU: {} passes",
        report.ranks, config.rows_per_gpu, config.features, report.cpu_passes
    );
    for (name, way) in [("one graph launch per GPU", &report.graph), ("driven from the host", &report.host)] {
        println!(
            "  {name}: {} passes, {:.2} us/pass (median of {repeats}), largest over the repeats |w - w_cpu| = {:.1e}, \
             |w - w*| = {:.1e}, ranks alike: {}: {}",
            way.outcome.passes,
            way.us_per_pass,
            way.from_cpu,
            way.from_exact,
            way.ranks_alike,
            if way.ok { "ok in every repeat".to_string() } else { format!("MISMATCH in repeats {:?}", way.failed_repeats) }
        );
    }
    println!("  the graph runs a pass {:.2}x as fast as the host-driven loop", report.speedup());
    if report.passed() {
        println!("multi_gpu_solve: both ways match the CPU");
    }
    Ok(report.passed())
}
