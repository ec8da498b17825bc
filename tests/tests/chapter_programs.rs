//! Every chapter program of the one list ([`chapter_registry::all`]), the same way: what each
//! program's own tests (`tests/<program>.rs`, for its figures and checks) need not repeat. A
//! program added to the list is tested here with no test of its own:
//!
//! - its options pass its own checks (default, quick and the chapter workload's), and zero
//!   timed runs is refused;
//! - `run` refuses bad options with an error, before any CUDA call, not a panic;
//! - `--book` runs something exactly where its listing says so;
//! - on a GPU, its quick run and the quick form of its chapter workload pass every check.
//!
//! Under compute-sanitizer the two GPU walks skip, saying so: `ch12 --quick` runs every program
//! of the list there (each in a process of its own), and each program's quick-run test too.

use chapter_registry::{all, Program, Workload};

#[test]
fn every_programs_options_pass_its_checks_and_zero_runs_does_not() {
    for program in all() {
        program.assert_options_checked();
    }
}

#[test]
fn invalid_options_are_an_error_not_a_panic_in_every_program() {
    // Refused before any CUDA call, so this needs no GPU.
    for program in all() {
        tests::assert_refused(program.run_with_no_timed_runs(), "runs", "runs");
    }
}

#[test]
fn a_program_without_a_workload_of_the_chapters_runs_none() {
    // Nothing runs, so this needs no GPU.
    for program in all().into_iter().filter(|p| !p.listing.runs) {
        assert!(program.run(Workload::Book, true).is_none(), "{}: {:?}", program.name, program.listing);
    }
}

#[test]
fn every_programs_quick_run_passes() {
    gpu_test_support::require_gpu!();
    if tests::under_sanitizer() {
        eprintln!(
            "skipped under compute-sanitizer: ch12 --quick and each program's quick-run test run these"
        );
        return;
    }
    let failures: Vec<String> = all().iter().filter_map(|p| failure(p, Workload::Port)).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_chapter_workload_of_its_own_passes_in_its_quick_form() {
    gpu_test_support::require_gpu!();
    if tests::under_sanitizer() {
        eprintln!("skipped under compute-sanitizer: ch12 --quick runs the ports' workloads there");
        return;
    }
    // A listing whose workload is the port's own ran in every_programs_quick_run_passes.
    let with_workload = all().into_iter().filter(|p| p.listing.runs && !p.listing.same_as_port());
    let failures: Vec<String> = with_workload.filter_map(|p| failure(&p, Workload::Book)).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What went wrong in `program`'s quick run on `workload`, or `None` when every check held
/// and it reported a headline.
fn failure(program: &Program, workload: Workload) -> Option<String> {
    let what = format!("{} ({workload:?}, quick)", program.name);
    match program.run(workload, true) {
        None => Some(format!("{what}: no such workload, though its listing says it runs")),
        Some(Err(err)) => Some(format!("{what}: {err}")),
        Some(Ok(report)) if !report.passed() || report.to_json()["verdict"] != "PASS" => {
            Some(format!("{what}: {}", report.to_text()))
        }
        Some(Ok(report)) if program.headline(&report).is_empty() => Some(format!("{what}: no headline")),
        Some(Ok(_)) => None,
    }
}
