//! `allreduce_bench [--quick] [--out DIR]`: an all-reduce (f32 sum, in place) across every
//! GPU of the host, by message size (4 KiB to 64 MiB), launched from the host (one NCCL group
//! per all-reduce) and inside graphs (one captured all-reduce per graph, one exec per GPU,
//! every exec launched per all-reduce). Prints the table and writes `DIR/allreduce.csv`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use cuda_graph::graph::{CaptureMode, GraphExec, HostLaunch};
use cuda_graph::{CudaError, DeviceBuffer, Stream};
use cuda_graph_nccl::{Communicator, Group, ReduceOp};

/// Message sizes in bytes: 4 KiB to 64 MiB, by 4x.
const SIZES: [usize; 8] = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20];

fn main() -> ExitCode {
    // NVLink multicast off (see cuda-graph-nccl's docs), set before any thread or NCCL call.
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
    }
    let mut quick = false;
    let mut out = PathBuf::from("results");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), if arg == "--out" { args.next() } else { None }) {
            ("--quick", _) => quick = true,
            ("--out", Some(dir)) => out = PathBuf::from(dir),
            _ => {
                eprintln!("usage: allreduce_bench [--quick] [--out DIR]");
                return ExitCode::from(2);
            }
        }
    }
    match run(quick, &out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("allreduce_bench: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Per rank: its stream and its buffer.
struct Rank {
    comm: Communicator,
    stream: Stream,
    data: DeviceBuffer<f32>,
}

/// A failure of the benchmark: a CUDA or NCCL error, a wrong sum, a file not written.
type Failure = Box<dyn std::error::Error>;

fn run(quick: bool, out: &std::path::Path) -> Result<(), Failure> {
    let comms = Communicator::init_all()?;
    let n = comms.len();
    let (major, minor, patch) = cuda_graph_nccl::version()?;
    let names: Vec<String> =
        comms.iter().map(|c| c.device().properties().map(|p| p.name)).collect::<Result<_, _>>()?;
    let (iters, samples) = if quick { (20, 3) } else { (200, 11) };
    let mut csv = format!(
        "# {n} GPU(s): {}; NCCL {major}.{minor}.{patch}; NCCL_NVLS_ENABLE={}; f32 sum in place; {iters} all-reduces per sample, median of {samples} samples\n",
        names.join(", "),
        std::env::var("NCCL_NVLS_ENABLE").unwrap_or_default()
    );
    csv.push_str("bytes,host_us,graph_us,host_over_graph,host_busbw_gbs,graph_busbw_gbs\n");
    println!("{}", csv.lines().next().unwrap_or_default());
    println!(
        "{:>10} {:>10} {:>10} {:>8} {:>12} {:>12}",
        "bytes", "host us", "graph us", "host/gr", "host GB/s", "graph GB/s"
    );
    let mut ranks: Vec<Rank> = comms
        .into_iter()
        .map(|comm| {
            let device = comm.device();
            Ok(Rank { stream: Stream::new_on(device)?, data: DeviceBuffer::zeroed_on(device, 1)?, comm })
        })
        .collect::<Result<_, CudaError>>()?;
    let mut first = true;
    for bytes in SIZES {
        let len = bytes / 4;
        for rank in &mut ranks {
            rank.data =
                DeviceBuffer::from_slice_on(rank.comm.device(), &vec![rank.comm.rank() as f32 + 1.0; len])?;
        }
        // Check one all-reduce (this also connects NCCL's ranks before any capture).
        all_reduce(&mut ranks)?;
        sync(&ranks)?;
        check_sums(&ranks, bytes, "host")?;
        if first {
            first = false;
            all_reduce(&mut ranks)?; // warm-up beyond the first connection
            sync(&ranks)?;
        }
        let execs = capture(&mut ranks)?;
        let host = median_us(samples, iters, || {
            for _ in 0..iters {
                all_reduce(&mut ranks)?;
            }
            sync(&ranks)
        })?;
        let graph = median_us(samples, iters, || {
            for _ in 0..iters {
                for (rank, exec) in ranks.iter().zip(&execs) {
                    exec.launch(&rank.stream)?;
                }
            }
            sync(&ranks)
        })?;
        // Check the graphs' all-reduce too, from fresh inputs (the timed runs summed sums).
        for rank in &mut ranks {
            rank.data.copy_from_host(&vec![rank.comm.rank() as f32 + 1.0; len])?;
        }
        for (rank, exec) in ranks.iter().zip(&execs) {
            exec.launch(&rank.stream)?;
        }
        sync(&ranks)?;
        check_sums(&ranks, bytes, "graph")?;
        let bus = |us: f64| bytes as f64 * 2.0 * (n as f64 - 1.0) / n as f64 / (us * 1e-6) / 1e9;
        println!(
            "{bytes:>10} {host:>10.2} {graph:>10.2} {:>8.3} {:>12.2} {:>12.2}",
            host / graph,
            bus(host),
            bus(graph)
        );
        let _ = writeln!(
            csv,
            "{bytes},{host:.3},{graph:.3},{:.4},{:.3},{:.3}",
            host / graph,
            bus(host),
            bus(graph)
        );
    }
    std::fs::create_dir_all(out)
        .and_then(|()| std::fs::write(out.join("allreduce.csv"), csv))
        .map_err(|err| format!("writing {}: {err}", out.display()))?;
    println!("wrote {}", out.join("allreduce.csv").display());
    Ok(())
}

/// Checks that every rank holds the all-reduce of inputs `rank + 1`: n(n+1)/2 everywhere.
fn check_sums(ranks: &[Rank], bytes: usize, path: &str) -> Result<(), Failure> {
    let n = ranks.len();
    let want = (n * (n + 1) / 2) as f32;
    for rank in ranks {
        let got = rank.data.to_vec()?;
        if let Some(i) = got.iter().position(|&v| v != want) {
            return Err(format!(
                "{bytes} bytes, {path} path, rank {}: element {i} is {}, expected {want}",
                rank.comm.rank(),
                got[i]
            )
            .into());
        }
    }
    Ok(())
}

/// One all-reduce of every rank's buffer, as one NCCL group.
fn all_reduce(ranks: &mut [Rank]) -> Result<(), CudaError> {
    let mut group = Group::new();
    for rank in ranks.iter_mut() {
        group.all_reduce_in_place(&rank.comm, &mut rank.data, ReduceOp::Sum, &rank.stream)?;
    }
    group.launch()
}

/// One graph per rank holding one all-reduce of its buffer, captured on its stream.
fn capture(ranks: &mut [Rank]) -> Result<Vec<GraphExec<HostLaunch>>, CudaError> {
    let streams: Vec<Stream> =
        ranks.iter().map(|r| Stream::new_on(r.comm.device())).collect::<Result<_, _>>()?;
    let captures =
        streams.iter().map(|s| s.begin_capture(CaptureMode::ThreadLocal)).collect::<Result<Vec<_>, _>>()?;
    let mut group = Group::new();
    for (rank, stream) in ranks.iter_mut().zip(&streams) {
        group.all_reduce_in_place(&rank.comm, &mut rank.data, ReduceOp::Sum, stream)?;
    }
    group.launch()?;
    let graphs = captures.into_iter().map(|c| c.end()).collect::<Result<Vec<_>, _>>()?;
    graphs.iter().map(|g| g.instantiate::<HostLaunch>(Default::default())).collect()
}

fn sync(ranks: &[Rank]) -> Result<(), CudaError> {
    ranks.iter().try_for_each(|rank| rank.stream.synchronize())
}

/// The median over `samples` runs of `f` (one warm-up run first), in µs per all-reduce.
fn median_us(
    samples: usize, iters: usize, mut f: impl FnMut() -> Result<(), CudaError>,
) -> Result<f64, CudaError> {
    f()?;
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let start = Instant::now();
        f()?;
        times.push(start.elapsed().as_secs_f64() * 1e6 / iters as f64);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[samples / 2])
}
