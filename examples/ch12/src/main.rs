//! `cargo xtask ch12`: runs every ported chapter program in order, one progress line each,
//! then one table: program, check (PASS/FAIL), headline figure, the chapter's claim.
//! Exits non-zero when any check fails. `--json` prints the table as JSON as well;
//! `--summarize FILE...` prints the median headline ratios of saved `--json` runs.
//!
//! Every program runs in a process of its own (see `isolate`); `--in-process` runs them all in
//! this one.
//!
//! Without a CUDA device (or driver) every program is marked SKIPPED and the exit status is 0,
//! unless `REQUIRE_GPU=1`; any other CUDA error while looking for the device fails (see `gpu`).

mod gpu;
mod isolate;
mod programs;
#[cfg(test)]
mod readme_check;
mod summary;
mod table;

use std::process::ExitCode;

use clap::Parser;
use cuda_graph::Device;

use table::{Check, Row};

/// Runs the chapter's programs and prints the summary table.
#[derive(Debug, Parser)]
#[command(name = "ch12", about = "Run every ported chapter program and summarize")]
struct Cli {
    /// Also print the table as one JSON object.
    #[arg(long)]
    json: bool,
    /// Smaller sizes and fewer iterations (a quick correctness pass, not for figures).
    #[arg(long)]
    quick: bool,
    /// Run only these programs (comma-separated crate names), in the chapter's order.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Run every program in this process instead of one process each (programs then share
    /// one CUDA context: a sticky error in one fails all later ones).
    #[arg(long)]
    in_process: bool,
    /// Run this one program here and print its row for the parent runner (internal).
    #[arg(long, hide = true)]
    child: Option<String>,
    /// Run nothing: print the median headline ratio of each program over these saved outputs
    /// of `ch12 --json` (one run a file), as a Markdown table. Needs no GPU.
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with_all = ["json", "quick", "only", "in_process", "child"])]
    summarize: Vec<std::path::PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !cli.summarize.is_empty() {
        return match summary::summarize(&cli.summarize) {
            Ok(table) => {
                print!("{table}");
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("ch12: {err}");
                ExitCode::from(2)
            }
        };
    }
    let mut programs = programs::all();
    if let Some(name) = &cli.child {
        return match programs.iter().find(|p| p.name == name.as_str()) {
            Some(program) => {
                println!("{}", isolate::child_line(&program.row(cli.quick)));
                ExitCode::SUCCESS
            }
            None => {
                eprintln!("ch12: no program named {name}");
                ExitCode::from(2)
            }
        };
    }
    if !cli.only.is_empty() {
        if let Some(unknown) = cli.only.iter().find(|name| !programs.iter().any(|p| p.name == name.as_str()))
        {
            let names: Vec<&str> = programs.iter().map(|p| p.name).collect();
            eprintln!("ch12: no program named {unknown}; the programs are: {}", names.join(", "));
            return ExitCode::from(2);
        }
        programs.retain(|p| cli.only.iter().any(|name| name == p.name));
    }
    let device = match gpu::plan_here() {
        gpu::Plan::Run(_) => match Device::get(0).and_then(|d| d.properties()) {
            Ok(properties) => Ok(properties.name),
            Err(err) => {
                eprintln!("ch12: device 0 is there but cannot be used: {err}");
                return ExitCode::FAILURE;
            }
        },
        gpu::Plan::Skip(why) => Err(why),
        gpu::Plan::Fail(why) => {
            eprintln!("ch12: {why}; nothing was run");
            return ExitCode::FAILURE;
        }
    };
    let rows: Vec<Row> = match &device {
        Err(err) => {
            println!("ch12: no CUDA device here ({err}).");
            println!(
                "ch12: the {} programs need a GPU; nothing was run. On a GPU machine: cargo xtask ch12",
                programs.len()
            );
            programs.iter().map(|p| Row::skipped(p.name, p.claim)).collect()
        }
        Ok(name) => {
            println!("ch12: running {} programs on {name}", programs.len());
            programs
                .iter()
                .enumerate()
                .map(|(i, program)| {
                    println!("[{}/{}] {} ...", i + 1, programs.len(), program.name);
                    let row = if cli.in_process {
                        program.row(cli.quick)
                    } else {
                        isolate::run_in_child(program, cli.quick)
                    };
                    println!("[{}/{}] {}: {}", i + 1, programs.len(), program.name, row.check.label());
                    for failure in &row.failures {
                        println!("    {failure}");
                    }
                    row
                })
                .collect()
        }
    };
    print!("{}", table::render(&rows));
    if cli.json {
        println!("{}", table::to_json(&rows));
    }
    if device.is_ok() && programs.is_empty() {
        println!("ch12: no chapter program is ported yet");
    }
    if rows.iter().any(|r| r.check == Check::Fail) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
