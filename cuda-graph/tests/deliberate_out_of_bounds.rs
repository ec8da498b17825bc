//! A deliberate out-of-bounds write is caught by compute-sanitizer's memcheck: the parent
//! test runs the child test of this same binary under memcheck and expects the report. The
//! child does nothing unless the parent asked for it, so a plain run never writes out of
//! bounds.

use std::process::Command;

use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DeviceBuffer, Stream};
use gpu_test_support::{gpu_required, require_gpu};
use test_kernels::write_past_end;

const CHILD_ENV: &str = "CUDA_GRAPH_OOB_CHILD";

#[test]
fn child_writes_past_the_end_when_asked() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let data = DeviceBuffer::<u32>::zeroed(256).unwrap();
    let stream = Stream::new().unwrap();
    write_past_end().launch(&stream, LaunchConfig::new(1, 1), (data.ptr(), 256, 4096)).unwrap();
    let _ = stream.synchronize();
}

#[test]
fn memcheck_reports_a_deliberate_out_of_bounds_write() {
    require_gpu!();
    if std::env::vars().any(|(key, value)| key.contains("INJECTION") && value.contains("sanitizer")) {
        eprintln!("skipped: already running under compute-sanitizer");
        return;
    }
    let sanitizer =
        std::env::var("COMPUTE_SANITIZER").unwrap_or_else(|_| "/usr/local/cuda/bin/compute-sanitizer".into());
    if !std::path::Path::new(&sanitizer).is_file() {
        assert!(!gpu_required(), "REQUIRE_GPU=1 but compute-sanitizer is not at {sanitizer}");
        eprintln!("skipped: no compute-sanitizer at {sanitizer}");
        return;
    }
    let output = Command::new(&sanitizer)
        .args(["--tool", "memcheck", "--error-exitcode", "86"])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", "child_writes_past_the_end_when_asked", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(86), "memcheck did not fail the run:\n{text}");
    assert!(text.contains("Invalid __global__ write"), "memcheck did not name the write:\n{text}");
    assert!(text.contains("write_past_end"), "memcheck did not name the kernel:\n{text}");
}
