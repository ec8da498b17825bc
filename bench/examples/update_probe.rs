//! What `GraphExec::update` costs the host thread beyond CUDA's `cudaGraphExecUpdate`, in one
//! process: the bench's row "graph exec update" reads 1.017-1.039 of the C++ twin where the raw
//! call from Rust on the same exec and graphs reads 0.998-1.010.
//!
//! One exec of the bench's 100-node chain is updated from two graphs of its shape in turn
//! (every update changes every node's parameters). Each sample times 20 updates of one way
//! (std::time::Instant); 41 samples a way after 5 warm-up samples, the ways taking turns, each
//! sample starting one way further on. Medians, ns per update. Then the pieces the crate adds
//! around the call, timed alone (1000 calls a sample): the driver's `cuCtxGetCurrent` (how the
//! crate asks which context is current) and `Device::with_current` around nothing.
//!
//! ```text
//! bash .gpu/run update_probe          # on the GPU machine, from the bundle
//! ```

use std::ffi::c_void;
use std::time::Instant;

use cuda_graph::graph::{Graph, GraphExec, HostLaunch};
use cuda_graph::{sys, CudaError, Device, DeviceBuffer};
use cuda_graph_bench::graph_replay::build_chain;
use cuda_graph_bench::Result;

const NODES: u32 = 100;
const CALLS: usize = 20;
const SAMPLES: usize = 41;
const WARMUP: usize = 5;
const PIECE_CALLS: u32 = 1000;

/// `cuCtxGetCurrent`.
type CtxGetCurrent = unsafe extern "C" fn(*mut *mut c_void) -> i32;

fn ctx_get_current() -> Result<CtxGetCurrent> {
    let entry = cuda_graph_bench::driver_entry::entry_point(c"cuCtxGetCurrent", 4000)?;
    // SAFETY: the entry point is cuCtxGetCurrent, whose C signature CtxGetCurrent is.
    Ok(unsafe { std::mem::transmute::<*mut c_void, CtxGetCurrent>(entry) })
}

/// The ways of updating, by index.
const WAYS: [&str; 4] = [
    "cudaGraphExecUpdate (raw)",
    "raw + 2 cuCtxGetCurrent",
    "raw inside Device::with_current",
    "GraphExec::update",
];

fn raw_update(exec: sys::cudaGraphExec_t, from: &Graph) -> Result<()> {
    let mut info = sys::cudaGraphExecUpdateResultInfo::default();
    // SAFETY: the exec and the graph are alive and used by this thread only; the graph has
    // the exec's topology; `info` is writable.
    let status = unsafe { sys::cudaGraphExecUpdate(exec, from.as_raw(), &mut info) };
    if status == sys::cudaError::cudaSuccess {
        return Ok(());
    }
    Err(CudaError::from_code(status.0 as i32, "cudaGraphExecUpdate").into())
}

fn median(samples: &mut [f64]) -> (f64, f64, f64) {
    samples.sort_by(f64::total_cmp);
    (samples[samples.len() / 2], samples[0], samples[samples.len() - 1])
}

fn main() -> Result<()> {
    let device = Device::current()?;
    let counter = DeviceBuffer::<u32>::zeroed(1)?;
    let graphs = [build_chain(&counter, NODES, 1)?, build_chain(&counter, NODES, 2)?];
    let mut exec: GraphExec<HostLaunch> = graphs[0].instantiate(Default::default())?;
    let stream = cuda_graph::Stream::new()?;
    exec.upload(&stream)?;
    stream.synchronize()?;
    // SAFETY: the raw handle is used only below, by this thread, for whole-graph updates from
    // `graphs`, which live until main returns; the exec is never launched after them.
    let raw = unsafe { exec.as_raw() };
    let get_current = ctx_get_current()?;
    let mut next = 0usize;
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); WAYS.len()];
    for sample in 0..WARMUP + SAMPLES {
        for turn in 0..WAYS.len() {
            let way = (sample + turn) % WAYS.len();
            let start = Instant::now();
            for _ in 0..CALLS {
                let from = &graphs[next % 2];
                next += 1;
                match way {
                    0 => raw_update(raw, from)?,
                    1 => {
                        for _ in 0..2 {
                            let mut context = std::ptr::null_mut();
                            // SAFETY: a valid out-pointer.
                            std::hint::black_box(unsafe { get_current(&mut context) });
                        }
                        raw_update(raw, from)?
                    }
                    2 => device.with_current(|| raw_update(raw, from))?,
                    _ => exec.update(from)?,
                }
            }
            let ns = start.elapsed().as_nanos() as f64 / CALLS as f64;
            if sample >= WARMUP {
                samples[way].push(ns);
            }
        }
    }
    println!("# gpu: {}", device.properties()?.name);
    println!("host time per update of a {NODES}-node chain, ns (median of {SAMPLES} samples of {CALLS} calls; min-max):");
    for (name, way) in WAYS.iter().zip(&mut samples) {
        let (mid, low, high) = median(way);
        println!("  {name:<36} {mid:>8.0}   ({low:.0}-{high:.0})");
    }

    let mut pieces: [(&str, Vec<f64>); 2] =
        [("cuCtxGetCurrent", Vec::new()), ("Device::with_current(nothing)", Vec::new())];
    for sample in 0..WARMUP + SAMPLES {
        for (index, (_, times)) in pieces.iter_mut().enumerate() {
            let start = Instant::now();
            for _ in 0..PIECE_CALLS {
                if index == 0 {
                    let mut context = std::ptr::null_mut();
                    // SAFETY: a valid out-pointer.
                    std::hint::black_box(unsafe { get_current(&mut context) });
                } else {
                    device.with_current(|| Ok::<(), CudaError>(()))?;
                }
            }
            if sample >= WARMUP {
                times.push(start.elapsed().as_nanos() as f64 / f64::from(PIECE_CALLS));
            }
        }
    }
    println!("host time per call, ns (median of {SAMPLES} samples of {PIECE_CALLS} calls; min-max):");
    for (name, times) in &mut pieces {
        let (mid, low, high) = median(times);
        println!("  {name:<36} {mid:>8.1}   ({low:.1}-{high:.1})");
    }
    Ok(())
}
