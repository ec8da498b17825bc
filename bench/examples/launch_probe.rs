//! What a stream launch costs the host thread, through the crate and through the CUDA runtime
//! directly, in one process: the bench's (a) row "stream launch, empty kernel, programmatic"
//! is GPU-paced for plain launches but host-paced with programmatic serialization, where the
//! crate's `Kernel::launch_with` took longer than the C++ twin's `cudaLaunchKernelEx`.
//!
//! Each way queues 200 one-thread launches of an empty kernel on one stream and takes the
//! host time of the 200 calls (std::time::Instant; the stream is synchronized after, untimed);
//! 41 samples a way, the ways taking turns (each sample starting one way further on), after 5
//! warm-up samples each. Medians, ns per call.
//!
//! The ways: the crate's `Kernel::launch_with` and `Kernel::launch`; the runtime's
//! `cudaLaunchKernelExC` called directly (as the C++ twin's `cudaLaunchKernelEx` does), also
//! with a non-null empty argument array, under a process-wide read lock (what the capture
//! gate takes), after 100 ns of busy work (is host time additive here?) and after reading 8
//! or 24 cold cache lines (do the crate's scattered flags cost misses after a driver call?);
//! and the driver's `cuLaunchKernelEx` called directly, with the kernel's `CUfunction` and with
//! its context-independent `CUkernel` (what the crate's launches use; see
//! `cuda_graph::kernel`'s stream launches).
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
/// with programmatic stream serialization when `programmatic`; with `empty_args`, a non-null
/// (empty) argument array, as the crate passes one, instead of null.
fn raw_launch_ex(
    function: *const c_void, stream: &Stream, programmatic: bool, empty_args: bool,
) -> Result<()> {
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
    let mut none: [*mut c_void; 0] = [];
    let args = if empty_args { none.as_mut_ptr() } else { std::ptr::null_mut() };
    // SAFETY: `function` is the host stub of a kernel without parameters (bench_pdl_empty or
    // bench_empty, checked by `Kernel::function`), so no argument pointers are read; `config`
    // and the attribute it points at live across the call; the stream is alive (borrowed).
    let status = unsafe { sys::cudaLaunchKernelExC(&config, function, args) };
    if status == sys::cudaError::cudaSuccess {
        return Ok(());
    }
    Err(CudaError::from_code(status.0 as i32, "cudaLaunchKernelExC").into())
}

/// A process-wide reader-writer lock, taken for reading around a raw launch: what the crate's
/// capture gate costs a launch.
static GATE: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Memory the cache-line ways read, one line every 4 KiB (no two lines in one page, so the
/// hardware prefetcher does not bring the next one).
static LINES: [std::sync::atomic::AtomicU64; 64 * 512] =
    [const { std::sync::atomic::AtomicU64::new(0) }; 64 * 512];

/// Reads `count` distinct cache lines, as the crate's checks read its flags and state.
#[inline(never)]
fn touch_lines(count: usize) -> u64 {
    (0..count).map(|i| LINES[i * 512].load(std::sync::atomic::Ordering::Relaxed)).sum()
}

/// Busy work of about `ns` nanoseconds.
#[inline(never)]
fn spin(ns: u64) {
    let start = Instant::now();
    while (start.elapsed().as_nanos() as u64) < ns {
        std::hint::spin_loop();
    }
}

/// `CUlaunchConfig` (cuda.h): the driver's launch configuration.
#[repr(C)]
struct DriverLaunchConfig {
    grid: [u32; 3],
    block: [u32; 3],
    shared_mem_bytes: u32,
    stream: sys::cudaStream_t,
    attrs: *mut sys::cudaLaunchAttribute,
    num_attrs: u32,
}

/// `cuLaunchKernelEx`.
type CuLaunchKernelEx =
    unsafe extern "C" fn(*const DriverLaunchConfig, *mut c_void, *mut *mut c_void, *mut *mut c_void) -> i32;

/// The driver's `cuLaunchKernelEx` and the `CUfunction` of `stub`.
fn driver_launch(stub: *const c_void) -> Result<(CuLaunchKernelEx, *mut c_void)> {
    let entry = cuda_graph_bench::driver_entry::entry_point(c"cuLaunchKernelEx", 12000)?;
    let mut function: sys::cudaFunction_t = std::ptr::null_mut();
    // SAFETY: `stub` is a kernel's host stub; `function` a valid out-pointer.
    let status = unsafe { sys::cudaGetFuncBySymbol(&mut function, stub) };
    assert!(status == sys::cudaError::cudaSuccess, "cudaGetFuncBySymbol");
    // SAFETY: the entry point is cuLaunchKernelEx, whose C signature CuLaunchKernelEx is.
    Ok((unsafe { std::mem::transmute::<*mut c_void, CuLaunchKernelEx>(entry) }, function.cast()))
}

/// The context-independent kernel handle (`cudaGetKernel`, a `CUkernel`) of `stub`.
fn kernel_handle(stub: *const c_void) -> *mut c_void {
    let mut kernel: sys::cudaKernel_t = std::ptr::null_mut();
    // SAFETY: `stub` is a kernel's host stub; `kernel` a valid out-pointer.
    let status = unsafe { sys::cudaGetKernel(&mut kernel, stub) };
    assert!(status == sys::cudaError::cudaSuccess, "cudaGetKernel");
    kernel.cast()
}

/// `cuLaunchKernelEx` of `function` (no parameters), one thread, programmatic when asked.
fn driver_launch_ex(
    launch: CuLaunchKernelEx, function: *mut c_void, stream: &Stream, programmatic: bool,
) -> Result<()> {
    let mut attribute = sys::cudaLaunchAttribute {
        id: sys::cudaLaunchAttributeID::cudaLaunchAttributeProgrammaticStreamSerialization,
        pad: [0; 4],
        val: sys::cudaLaunchAttributeValue { pad: [0; 64] },
    };
    attribute.val.programmaticStreamSerializationAllowed = 1;
    let config = DriverLaunchConfig {
        grid: [1, 1, 1],
        block: [1, 1, 1],
        shared_mem_bytes: 0,
        stream: stream.as_raw(),
        attrs: &mut attribute,
        num_attrs: u32::from(programmatic),
    };
    let mut none: [*mut c_void; 0] = [];
    // SAFETY: `function` is a kernel without parameters; config and attribute live across
    // the call (CUlaunchAttribute has cudaLaunchAttribute's layout).
    let status = unsafe { launch(&config, function, none.as_mut_ptr(), std::ptr::null_mut()) };
    if status == 0 {
        return Ok(());
    }
    Err(CudaError::from_code(status, "cuLaunchKernelEx").into())
}

fn main() -> Result<()> {
    let only: Option<usize> = std::env::args().nth(1).map(|a| a.parse().expect("way index"));
    let stream = Stream::new()?;
    let config = LaunchConfig::new(1, 1);
    let pdl_stub = bench_pdl_empty().function()?;
    let plain_stub = bench_empty().function()?;
    let programmatic = LaunchAttributes::programmatic();
    let none = LaunchAttributes::default();
    let (cu_launch, pdl_function) = driver_launch(pdl_stub)?;
    let (_, plain_function) = driver_launch(plain_stub)?;
    let (pdl_function, plain_function) = (pdl_function as usize, plain_function as usize);
    let pdl_kernel = kernel_handle(pdl_stub) as usize;
    let way = |name, launch: Launch| Way { name, launch, samples: Vec::new() };
    let mut ways = vec![
        way(
            "cudaLaunchKernelExC, programmatic (raw)",
            Box::new(move |s| raw_launch_ex(pdl_stub, s, true, false)),
        ),
        way(
            "cudaLaunchKernelExC, programmatic, args (raw)",
            Box::new(move |s| raw_launch_ex(pdl_stub, s, true, true)),
        ),
        way(
            "cudaLaunchKernelExC, programmatic, rwlock (raw)",
            Box::new(move |s| {
                let _read = GATE.read().unwrap_or_else(std::sync::PoisonError::into_inner);
                raw_launch_ex(pdl_stub, s, true, true)
            }),
        ),
        way(
            "raw programmatic + 100 ns busy",
            Box::new(move |s| {
                spin(100);
                raw_launch_ex(pdl_stub, s, true, false)
            }),
        ),
        way(
            "raw programmatic + 8 cache lines",
            Box::new(move |s| {
                std::hint::black_box(touch_lines(8));
                raw_launch_ex(pdl_stub, s, true, false)
            }),
        ),
        way(
            "raw programmatic + 24 cache lines",
            Box::new(move |s| {
                std::hint::black_box(touch_lines(24));
                raw_launch_ex(pdl_stub, s, true, false)
            }),
        ),
        way(
            "Kernel::launch_with, programmatic",
            Box::new(move |s| Ok(bench_pdl_empty().launch_with(s, config, &programmatic, ())?)),
        ),
        way(
            "cuLaunchKernelEx, programmatic (driver)",
            Box::new(move |s| driver_launch_ex(cu_launch, pdl_function as *mut c_void, s, true)),
        ),
        way(
            "cuLaunchKernelEx, programmatic (driver, CUkernel)",
            Box::new(move |s| driver_launch_ex(cu_launch, pdl_kernel as *mut c_void, s, true)),
        ),
        way(
            "cuLaunchKernelEx, no attribute (driver)",
            Box::new(move |s| driver_launch_ex(cu_launch, plain_function as *mut c_void, s, false)),
        ),
        way(
            "cudaLaunchKernelExC, no attribute (raw)",
            Box::new(move |s| raw_launch_ex(plain_stub, s, false, false)),
        ),
        way(
            "Kernel::launch_with, no attribute",
            Box::new(move |s| Ok(bench_empty().launch_with(s, config, &none, ())?)),
        ),
        way("Kernel::launch", Box::new(move |s| Ok(bench_empty().launch(s, config, ())?))),
    ];
    if let Some(index) = only {
        // One way for 20 s, for a sampling profiler.
        let started = Instant::now();
        while started.elapsed().as_secs() < 20 {
            for _ in 0..CALLS {
                (ways[index].launch)(&stream)?;
            }
            stream.synchronize()?;
        }
        return Ok(());
    }
    let count = ways.len();
    for sample in 0..WARMUP + SAMPLES {
        // The ways take turns, each sample starting one further on, so that no way always
        // follows the same one.
        for turn in 0..count {
            let way = &mut ways[(sample + turn) % count];
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
        println!("  {:<48} {:>7.0}   ({low:.0}-{high:.0})", way.name, way.samples[SAMPLES / 2]);
    }
    Ok(())
}
