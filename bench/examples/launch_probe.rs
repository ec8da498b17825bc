//! What a stream launch costs the host thread, through the crate and through the CUDA runtime
//! directly, in one process: the bench's (a) row "stream launch, empty kernel, programmatic"
//! is GPU-paced for plain launches but host-paced with programmatic serialization, where the
//! crate's `Kernel::launch_with` took longer than the C++ twin's `cudaLaunchKernelEx`.
//!
//! Each way queues 200 one-thread launches of an empty kernel on one stream and takes the
//! host time of the 200 calls (std::time::Instant; the stream is synchronized after, untimed);
//! 41 samples a way, the ways taking turns, after 5 warm-up samples each. Medians, ns per call.
//!
//! ```text
//! bash .gpu/run launch_probe          # on the GPU machine, from the bundle
//! ```

use std::ffi::c_void;
use std::time::Instant;

use cuda_graph::kernel::{LaunchAttributes, LaunchConfig};
use cuda_graph::{sys, CudaError, Stream};
use cuda_graph_bench::kernels::{bench_empty, bench_pdl_empty};
use cuda_graph_bench::Result;

const CALLS: u32 = 200;
const SAMPLES: usize = 41;
const WARMUP: usize = 5;

/// Queues one launch on the stream.
type Launch = Box<dyn Fn(&Stream) -> Result<()>>;

/// One way of launching, and its samples.
struct Way {
    name: &'static str,
    launch: Launch,
    samples: Vec<f64>,
}

/// `cudaLaunchKernelExC` of `function` (no parameters) on `stream`, one block of one thread,
/// with programmatic stream serialization when `programmatic`.
fn raw_launch_ex(function: *const c_void, stream: &Stream, programmatic: bool) -> Result<()> {
    let mut attribute = sys::cudaLaunchAttribute {
        id: sys::cudaLaunchAttributeID::cudaLaunchAttributeProgrammaticStreamSerialization,
        pad: [0; 4],
        val: sys::cudaLaunchAttributeValue { pad: [0; 64] },
    };
    attribute.val.programmaticStreamSerializationAllowed = 1;
    let config = sys::cudaLaunchConfig_t {
        gridDim: sys::dim3 { x: 1, y: 1, z: 1 },
        blockDim: sys::dim3 { x: 1, y: 1, z: 1 },
        dynamicSmemBytes: 0,
        stream: stream.as_raw(),
        attrs: &mut attribute,
        numAttrs: u32::from(programmatic),
    };
    // SAFETY: `function` is the host stub of a kernel without parameters (bench_pdl_empty or
    // bench_empty, checked by `Kernel::function`), so no argument pointers are read; `config`
    // and the attribute it points at live across the call; the stream is alive (borrowed).
    let status = unsafe { sys::cudaLaunchKernelExC(&config, function, std::ptr::null_mut()) };
    if status == sys::cudaError::cudaSuccess {
        return Ok(());
    }
    Err(CudaError::from_code(status.0 as i32, "cudaLaunchKernelExC").into())
}

fn main() -> Result<()> {
    let stream = Stream::new()?;
    let config = LaunchConfig::new(1, 1);
    let pdl_stub = bench_pdl_empty().function()?;
    let plain_stub = bench_empty().function()?;
    let programmatic = LaunchAttributes::programmatic();
    let none = LaunchAttributes::default();
    let mut ways = vec![
        Way {
            name: "cudaLaunchKernelExC, programmatic (raw)",
            launch: Box::new(move |s| raw_launch_ex(pdl_stub, s, true)),
            samples: Vec::new(),
        },
        Way {
            name: "Kernel::launch_with, programmatic",
            launch: Box::new(move |s| Ok(bench_pdl_empty().launch_with(s, config, &programmatic, ())?)),
            samples: Vec::new(),
        },
        Way {
            name: "cudaLaunchKernelExC, no attribute (raw)",
            launch: Box::new(move |s| raw_launch_ex(plain_stub, s, false)),
            samples: Vec::new(),
        },
        Way {
            name: "Kernel::launch_with, no attribute",
            launch: Box::new(move |s| Ok(bench_empty().launch_with(s, config, &none, ())?)),
            samples: Vec::new(),
        },
        Way {
            name: "Kernel::launch",
            launch: Box::new(move |s| Ok(bench_empty().launch(s, config, ())?)),
            samples: Vec::new(),
        },
    ];
    for sample in 0..WARMUP + SAMPLES {
        for way in &mut ways {
            let start = Instant::now();
            for _ in 0..CALLS {
                (way.launch)(&stream)?;
            }
            let ns = start.elapsed().as_nanos() as f64 / f64::from(CALLS);
            stream.synchronize()?;
            if sample >= WARMUP {
                way.samples.push(ns);
            }
        }
    }
    println!("host time per launch call, ns (median of {SAMPLES} samples of {CALLS} calls; min-max):");
    for way in &mut ways {
        way.samples.sort_by(f64::total_cmp);
        let (low, high) = (way.samples[0], way.samples[SAMPLES - 1]);
        println!("  {:<42} {:>7.0}   ({low:.0}-{high:.0})", way.name, way.samples[SAMPLES / 2]);
    }
    Ok(())
}
