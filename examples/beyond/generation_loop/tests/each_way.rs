//! `generation_loop` one way at a time, on a real GPU: each way of running a generation built and
//! run on its own (no other way's graphs, no profile graphs), batch 4, at most 16 tokens, one
//! warm-up and one timed run, each equal to the CPU reference token for token.
//!
//! Under racecheck, whose process dies on the whole program (the quick test skips there,
//! RELIABILITY.md "Sanitizers"), the host-driven ways (a) and (b) are what checks the decoder's
//! kernels for shared-memory races: their kernels are the WHILE ways' but for the last one's
//! `cudaGraphSetConditional` (gl_pick_host and gl_pick_while share gl_pick). The WHILE ways
//! (c) and (d) skip there: racecheck's process dies on them too, and the tool reports a race
//! that is not there in a WHILE body with the same shared-memory pattern as gl_pick
//! (`cuda-graph/repro/racecheck_while_pdl.cu`, variant `while-smem-atomic`).

use generation_loop::device::DeviceModel;
use generation_loop::measure::measure;
use generation_loop::model::Model;
use generation_loop::reference;
use generation_loop::ways::Plan;
use generation_loop::ways::Way;
use generation_loop::Options;

const BATCH: u32 = 4;
const MAX_LEN: u32 = 16;

fn run_alone(way: Way) {
    gpu_test_support::require_gpu!();
    let (_device, properties) = chapter_common::device_zero().expect("device 0");
    if way.programmatic() && properties.major < 9 {
        eprintln!("skipped: {} needs programmatic dependent launch (sm_90 or later)", way.label());
        return;
    }
    if way.one_launch() && gpu_test_support::sanitizer_tool().as_deref() == Some("racecheck") {
        eprintln!(
            "skipped under racecheck: {} is a WHILE graph, on which the tool dies (RELIABILITY.md)",
            way.label()
        );
        return;
    }
    let options = Options::default();
    let model = Model::generate(options.seed, options.end_bias);
    let starts = Model::start_tokens(BATCH as usize, options.seed);
    let want = reference::generate(&model, &starts, MAX_LEN);
    assert!(want.steps() > 1, "the reference generation runs several steps: {}", want.steps());
    let device_model = DeviceModel::new(&model).expect("the weights on the device");
    let plan = Plan { ways: vec![way], probes: Vec::new() };
    let measured = measure(&device_model, &plan, &starts, &want, &[BATCH], MAX_LEN, 1)
        .unwrap_or_else(|err| panic!("{}: {err}", way.label()));
    let [(ran, record)] = measured.ways.as_slice() else { panic!("one way measured: {:?}", measured.ways) };
    assert_eq!(*ran, way);
    assert_eq!(record.generations, 2, "{}: one warm-up and one timed run", way.label());
    assert_eq!(record.mismatch, None, "{} differs from the CPU reference", way.label());
}

/// One test per way, so that each can run alone (`--exact`).
macro_rules! each_way_alone {
    ($($test:ident: $way:ident),* $(,)?) => {$(
        #[test]
        fn $test() {
            run_alone(Way::$way);
        }
    )*};
}

each_way_alone! {
    host_launches_alone: HostLaunches,
    graph_per_step_alone: GraphPerStep,
    graph_per_step_mapped_alone: GraphPerStepMapped,
    while_graph_alone: WhileGraph,
    while_pdl_alone: WhilePdl,
}
