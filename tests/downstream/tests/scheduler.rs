//! The user's scheduler kernel device-launches the uploaded graph; its effect is on the data.

#[test]
fn the_scheduler_kernel_launches_the_uploaded_graph_from_the_device() {
    if let Err(why) = downstream_scheduler::device_present() {
        assert_ne!(std::env::var("REQUIRE_GPU").as_deref(), Ok("1"), "REQUIRE_GPU=1 but {why}");
        // Past the test harness's output capture, so the skip shows.
        let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("skipped: {why}\n").as_bytes());
        return;
    }
    let outcome = downstream_scheduler::run(3).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(outcome.launched, 3, "device-side launches");
    assert_eq!(
        outcome.updated, outcome.elements,
        "every element got +3 per round from the device-launched graph"
    );
}
