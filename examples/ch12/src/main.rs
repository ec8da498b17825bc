//! `cargo xtask ch12`: runs every ported chapter program in order, on the port's own workload
//! and, where the chapter's listing has one the port can run, on the listing's (`--book`
//! presets, see `chapter_common::Book`), one progress line each; then one table: program,
//! check (PASS/FAIL), the port's headline figure, the listing's (or "no listing", or why the
//! chapter's program is broken), the chapter's claim; then each listing's note. Exits non-zero
//! when any check fails. `--book` runs only the listings' workloads, `--no-book` only the
//! ports'. `--json` prints the table as JSON as well; `--summarize FILE...` prints the median
//! headline ratios of saved `--json` runs.
//!
//! Every run is a process of its own (see `isolate`); `--in-process` runs them all in this one.
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

use programs::Workload;
use table::{Cell, Check, Row};

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
    /// Run only the chapter listings' workloads (each program's `--book` preset), not the
    /// ports' own. With --child: run the listing's workload.
    #[arg(long, conflicts_with = "no_book")]
    book: bool,
    /// Run only the ports' own workloads, not the listings'.
    #[arg(long)]
    no_book: bool,
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
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with_all = ["json", "quick", "only", "in_process", "child", "book", "no_book"])]
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
        let workload = if cli.book { Workload::Book } else { Workload::Port };
        return match programs.iter().find(|p| p.name == name.as_str()) {
            Some(program) => {
                println!("{}", isolate::child_line(&programs::cell(program, workload, cli.quick)));
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
    let plan = Plan { port: !cli.book, book: !cli.no_book, quick: cli.quick, in_process: cli.in_process };
    if cli.quick && chapter_common::under_sanitizer() {
        println!("ch12: under compute-sanitizer: each program runs its sanitizer sizes (ChapterProgram::sanitizer_options)");
    }
    let rows: Vec<Row> = match &device {
        Err(err) => {
            println!("ch12: no CUDA device here ({err}).");
            println!(
                "ch12: the {} programs need a GPU; nothing was run. On a GPU machine: cargo xtask ch12",
                programs.len()
            );
            programs
                .iter()
                .map(|p| Row {
                    program: p.name,
                    claim: p.claim,
                    listing: p.listing,
                    port: plan.port.then(Cell::skipped),
                    book: plan.runs_book(p).then(Cell::skipped),
                })
                .collect()
        }
        Ok(name) => {
            println!("ch12: running {} programs on {name}{}", programs.len(), plan.describe());
            programs.iter().enumerate().map(|(i, program)| plan.row(program, i + 1, programs.len())).collect()
        }
    };
    print!("{}", table::render(&rows));
    if cli.json {
        println!("{}", table::to_json(&rows));
    }
    if device.is_ok() && programs.is_empty() {
        println!("ch12: no chapter program is ported yet");
    }
    if rows.iter().any(|r| r.check() == Check::Fail) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Which workloads run, and how.
struct Plan {
    /// The port's own workload.
    port: bool,
    /// The chapter listing's, where there is one to run.
    book: bool,
    quick: bool,
    in_process: bool,
}

impl Plan {
    /// Whether `program`'s listing workload runs: it has one, and it is not the port's own
    /// default that already runs (then the table says "same as port").
    fn runs_book(&self, program: &programs::Program) -> bool {
        self.book && program.listing.runs && !(self.port && program.listing.same_as_port())
    }

    /// What runs, for the first line.
    fn describe(&self) -> &'static str {
        match (self.port, self.book) {
            (true, true) => " (each on its own workload, then on the chapter listing's where it has one)",
            (true, false) => " (their own workloads only)",
            _ => " (the chapter listings' workloads only)",
        }
    }

    /// Runs `program` (the `n`-th of `of`), printing a progress line per run.
    fn row(&self, program: &programs::Program, n: usize, of: usize) -> Row {
        let run = |workload: Workload| {
            let label = if workload == Workload::Book { " --book" } else { "" };
            println!("[{n}/{of}] {}{label} ...", program.name);
            let cell = if self.in_process {
                programs::cell(program, workload, self.quick)
            } else {
                isolate::run_in_child(program, workload, self.quick)
            };
            println!("[{n}/{of}] {}{label}: {}", program.name, cell.check.label());
            for failure in &cell.failures {
                println!("    {failure}");
            }
            cell
        };
        let port = self.port.then(|| run(Workload::Port));
        let book = self.runs_book(program).then(|| run(Workload::Book));
        Row { program: program.name, claim: program.claim, listing: program.listing, port, book }
    }
}
