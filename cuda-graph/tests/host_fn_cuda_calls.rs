//! SOUNDNESS.md, "Things of other code", item 8: CUDA forbids CUDA calls inside a host function
//! (they may deadlock, as a wait for the very stream that runs the host function does). Every
//! CUDA-calling function of this crate returns `Err` there, saying why, before CUDA sees the call.
//! Each scenario runs in a child process (this test binary again) with a time limit, so that a
//! hang, as before the fix, fails the test instead of hanging it.

use std::process::Command;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{Device, DeviceBuffer, Refusal, Stream};
use test_kernels::fill_pattern;

/// The environment variable that makes this binary run one scenario as the child.
const SCENARIO: &str = "HOST_FN_CUDA_CALLS_SCENARIO";
const LIMIT: Duration = Duration::from_secs(60);

/// What each crate call inside the host function returned, one line each.
fn calls_inside(stream: &Stream, buffer: &DeviceBuffer<u32>) -> Vec<(String, bool)> {
    let mut results = Vec::new();
    let mut record = |what: &str, result: cuda_graph::Result<()>| {
        let refused = result.as_ref().is_err_and(|err| err.refusal() == Some(&Refusal::InHostFunction));
        let text = result.map_or_else(|err| err.to_string(), |()| "Ok".to_string());
        results.push((format!("{what}: {text}"), refused));
    };
    record("Stream::synchronize of its own stream", stream.synchronize());
    record("DeviceBuffer::zeroed", DeviceBuffer::<u32>::zeroed(16).map(drop));
    record("Stream::new", Stream::new().map(drop));
    record("Kernel::launch", fill_pattern().launch(stream, LaunchConfig::new(1, 32), (buffer.ptr(), 16, 1)));
    record("Device::synchronize", Device::get(0).and_then(|device| device.synchronize()));
    results
}

/// The child: runs the calls inside a stream host function and a graph host node, prints
/// every result, and exits 0 when each was refused for being inside a host function.
fn child() {
    Device::get(0).unwrap().set_current().unwrap();
    // The host functions wait for the very stream that runs them: a deadlock, if CUDA took it.
    let stream = Arc::new(Stream::new().unwrap());
    let (sender, results) = mpsc::channel();
    let on_stream = {
        let (sender, probe) = (sender.clone(), stream.clone());
        let buffer = DeviceBuffer::<u32>::zeroed(16).unwrap();
        move || sender.send(("stream host function", calls_inside(&probe, &buffer))).unwrap()
    };
    stream.launch_host_fn(on_stream).unwrap();
    let graph = Graph::new().unwrap();
    let (node_stream, node_buffer) = (stream.clone(), DeviceBuffer::<u32>::zeroed(16).unwrap());
    graph
        .add_host(
            move || sender.send(("graph host node", calls_inside(&node_stream, &node_buffer))).unwrap(),
            &[],
        )
        .unwrap();
    let exec = graph.instantiate::<HostLaunch>(Default::default()).unwrap();
    exec.launch(&stream).unwrap();
    stream.synchronize().unwrap();
    let mut refused_all = true;
    for (place, lines) in results.try_iter() {
        for (line, refused) in lines {
            refused_all &= refused;
            println!("{place}: {line}");
        }
    }
    std::process::exit(if refused_all { 0 } else { 3 });
}

#[test]
fn crate_calls_inside_host_functions_are_refused_not_hung() {
    if std::env::var_os(SCENARIO).is_some() {
        child();
    }
    gpu_test_support::require_gpu!();
    let mut process = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crate_calls_inside_host_functions_are_refused_not_hung",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(SCENARIO, "1")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the test binary as a child");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = process.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > LIMIT {
            process.kill().ok();
            process.wait().ok();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut output = String::new();
    if let Some(mut stdout) = process.stdout.take() {
        use std::io::Read;
        stdout.read_to_string(&mut output).ok();
    }
    match status {
        None => panic!("CUDA calls inside a host function hung for {LIMIT:?}:\n{output}"),
        Some(status) => assert!(status.success(), "not every call was refused ({status}):\n{output}"),
    }
    assert_eq!(output.matches("not allowed inside a host function").count(), 10, "{output}");
}
