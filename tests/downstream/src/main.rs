use std::process::ExitCode;

fn main() -> ExitCode {
    if let Err(why) = downstream_scheduler::device_present() {
        println!("skipped: {why}");
        return if std::env::var("REQUIRE_GPU").as_deref() == Ok("1") {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        };
    }
    match downstream_scheduler::run(4) {
        Ok(outcome) if outcome.launched == 4 && outcome.updated == outcome.elements => {
            println!("downstream: PASS ({outcome:?})");
            ExitCode::SUCCESS
        }
        Ok(outcome) => {
            println!("downstream: FAIL ({outcome:?})");
            ExitCode::FAILURE
        }
        Err(err) => {
            println!("downstream: error: {err}");
            ExitCode::FAILURE
        }
    }
}
