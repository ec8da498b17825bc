//! `graph_bandwidth`: copies and memsets as graph nodes vs the same operations on a stream.
//!
//! For every size (4 KiB .. 256 MiB), four variants move the same bytes:
//! 1. **copy, stream**: `chain` (16) device-to-device copies queued one by one
//!    (`cudaMemcpyAsync` each, through `DeviceBuffer::copy_from_device_async`);
//! 2. **copy, graph**: one launch of a graph of `chain` memcpy nodes in a chain;
//! 3. **memset, stream**: `chain` byte memsets (`cudaMemsetAsync`, `DeviceBuffer::memset_async`);
//! 4. **memset, graph**: one launch of a graph of `chain` memset nodes (1-byte elements).
//!
//! Each timed run repeats its variant until about `bytes_per_run` have moved (at least one
//! chain, at most `max_ops` operations), between two CUDA events. The figures are medians of
//! `runs` timed runs after one warm-up, as GB/s (10^9 bytes written per second) by size. The
//! copies' destination must equal the seeded source and the memsets' the value set, checked
//! after the warm-up and after the last run of every variant.
//!
//! A copy or memset leaves the same bytes however often it runs, so the data alone shows only
//! that the last operation ran. Every group (one graph launch, or `chain` stream calls) therefore
//! ends with a one-thread kernel that adds 1 to a counter (`gb_count`: the graph's last node,
//! or a launch after the group on the stream), and every run of every variant must leave the
//! counter at exactly its number of groups: a graph that skipped replays fails. That kernel is
//! part of every variant's timed work, stream and graph alike (one per `chain` operations).
//!
//! The chapter's point: a graph does not make a copy faster, it only makes it cheaper to
//! issue. Large copies reach the same bandwidth both ways; small ones are launch-bound, and
//! there the graph's lower per-operation cost shows.

#![warn(missing_docs)]

mod program;

pub use program::Program;

mod graphs;
mod sizes;

use chapter_common::{Book, ExampleError, OptionCheck, Report, Rng, Samples};
use cuda_graph::graph::{GraphExec, HostLaunch, NodeKind};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DeviceBuffer, Event, Stream};
use serde_json::json;

use graphs::{copy_graph, count_config, graph_nodes_are, memset_graph};
use graphs::{gb_count, gb_fill};
pub use sizes::human;
use sizes::{parse_size, KIB, MIB};

/// The largest size accepted (1 GiB: a 1-D memcpy node is a 3-D copy whose pitch is its size,
/// and CUDA caps pitches at `cudaDevAttrMaxPitch`, 2 GiB - 1 on current GPUs).
pub const MAX_BYTES: u64 = 1 << 30;

/// What to run; the fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Options {
    /// Timed runs after one warm-up run; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the source pattern and the memset values.
    #[arg(skip)]
    pub seed: u64,
    /// Sizes of one copy or memset, comma-separated, in bytes or with a K, M or G suffix (KiB, MiB,
    /// GiB); multiples of 4 (default: 4K,16K,..,256M, or 4K,64K,1M with --quick).
    #[arg(long, value_name = "SIZES", value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Vec<u64>,
    /// Operations per graph, and per group queued on the stream (default: 16, or 8 with --quick).
    #[arg(long, value_name = "N")]
    pub chain: u32,
    /// Bytes each timed run aims to move (sets how many operations a run has).
    #[arg(skip)]
    pub bytes_per_run: u64,
    /// The most operations in one timed run.
    #[arg(skip)]
    pub max_ops: u32,
}

impl Default for Options {
    /// Chapter scale: 4 KiB, 16 KiB, .. 256 MiB (powers of 4); chains of 16 operations; about
    /// 1 GiB moved per run (at most 2048 operations); 5 runs.
    fn default() -> Options {
        Options {
            sizes: (0..9).map(|k| (4 * KIB) << (2 * k)).collect(),
            chain: 16,
            bytes_per_run: 1 << 30,
            max_ops: 2048,
            runs: 5,
            seed: 0x5eed,
        }
    }
}

impl Options {
    /// Small and fast (for tests and `--quick`): 4 KiB, 64 KiB and 1 MiB, chains of 8, about
    /// 16 MiB per run, two runs.
    pub fn quick() -> Options {
        Options {
            sizes: vec![4 * KIB, 64 * KIB, MIB],
            chain: 8,
            bytes_per_run: 16 * MIB,
            max_ops: 64,
            runs: 2,
            ..Options::default()
        }
    }

    /// Refuses what cannot run, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        let bad_size = self.sizes.iter().find(|&&s| s == 0 || s % 4 != 0 || s > MAX_BYTES);
        OptionCheck::new("graph_bandwidth")
            .rule("sizes", !self.sizes.is_empty(), || "at least one size is needed".to_string())
            .rule("sizes", bad_size.is_none(), || {
                format!(
                    "sizes must be multiples of 4 bytes from 4 to {MAX_BYTES}, not {}",
                    bad_size.unwrap_or(&0)
                )
            })
            .within("chain", self.chain, 1..=1024)
            .rule("max_ops", self.max_ops >= self.chain, || {
                format!("max_ops ({}) must be at least chain ({})", self.max_ops, self.chain)
            })
            .at_least("runs", self.runs, 1)
            .done()
    }

    /// Operations in one timed run of `size`-byte operations: enough for `bytes_per_run`,
    /// whole chains, at least one chain and at most `max_ops` (rounded down to whole chains).
    ///
    /// ```
    /// let options = graph_bandwidth::Options::default();
    /// assert_eq!(options.ops_for(4096), 2048);
    /// assert_eq!(options.ops_for(1 << 20), 1024);
    /// assert_eq!(options.ops_for(256 << 20), 16);
    /// ```
    pub fn ops_for(&self, size: u64) -> u32 {
        let chain = u64::from(self.chain.max(1));
        let wanted = self.bytes_per_run.div_ceil(size.max(1)).div_ceil(chain) * chain;
        let most = u64::from(self.max_ops) / chain * chain;
        wanted.clamp(chain, most.max(chain)) as u32
    }
}

/// The chapter's own listing for this program: what `--book` runs, or why it runs nothing
/// (see [`Book`]).
pub fn book() -> Book<Options> {
    Book::NoListing {
        note: "The chapter gives no program for this: it says in text that a graph can overlap \
               independent copies and compute but won't make any single op faster. The copies, \
               memsets and sizes are the port's.",
    }
}

/// Word `i` of the copy source; `gb_pattern` in `kernels/fill.cu` computes the same.
///
/// ```
/// assert_ne!(graph_bandwidth::pattern(0, 1), graph_bandwidth::pattern(1, 1));
/// assert_ne!(graph_bandwidth::pattern(0, 1), graph_bandwidth::pattern(0, 2));
/// ```
pub fn pattern(i: u32, seed: u32) -> u32 {
    let mut x = i.wrapping_mul(0x9e37_79b9) ^ seed;
    x ^= x >> 16;
    x = x.wrapping_mul(0x85eb_ca6b);
    x ^= x >> 13;
    x = x.wrapping_mul(0xc2b2_ae35);
    x ^ (x >> 16)
}

/// The four variants, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    CopyStream,
    CopyGraph,
    MemsetStream,
    MemsetGraph,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::CopyStream, Kind::CopyGraph, Kind::MemsetStream, Kind::MemsetGraph];

    fn name(self) -> &'static str {
        match self {
            Kind::CopyStream => "copy_stream",
            Kind::CopyGraph => "copy_graph",
            Kind::MemsetStream => "memset_stream",
            Kind::MemsetGraph => "memset_graph",
        }
    }
}

/// The first wrong word or byte of `got`, if any: the copy source's pattern, or `byte` in
/// every byte for a memset.
fn first_wrong(got: &[u8], expect: Expect) -> Option<String> {
    match expect {
        Expect::Pattern(seed) => got.chunks_exact(4).enumerate().find_map(|(i, word)| {
            let value = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
            let want = pattern(i as u32, seed);
            (value != want).then(|| format!("word {i} is {value:#010x}, want {want:#010x}"))
        }),
        Expect::Byte(byte) => got
            .iter()
            .position(|&b| b != byte)
            .map(|i| format!("byte {i} is {:#04x}, want {byte:#04x}", got[i])),
    }
}

/// What a variant must leave in the destination.
#[derive(Debug, Clone, Copy)]
enum Expect {
    Pattern(u32),
    Byte(u8),
}

/// The buffers, execs and values of one size.
struct SizeBench {
    bytes: u64,
    src: DeviceBuffer<u8>,
    dst: DeviceBuffer<u8>,
    /// Groups that ran (`gb_count` adds 1 at the end of each).
    counter: DeviceBuffer<u32>,
    copy_exec: GraphExec<HostLaunch>,
    memset_exec: GraphExec<HostLaunch>,
    stream_byte: u8,
    graph_byte: u8,
    /// Whether both graphs hold only nodes of their kind, and what they hold.
    node_kinds_ok: bool,
    node_kinds: String,
}

impl SizeBench {
    /// Allocates and fills the buffers of `bytes`, and builds and instantiates both graphs.
    fn new(
        bytes: u64, options: &Options, rng: &mut Rng, seed: u32, stream: &Stream,
    ) -> cuda_graph::Result<Self> {
        let len = bytes as usize;
        let src = DeviceBuffer::<u8>::zeroed(len)?;
        let dst = DeviceBuffer::<u8>::zeroed(len)?;
        let counter = DeviceBuffer::<u32>::zeroed(1)?;
        let words = (bytes / 4) as u32;
        let blocks = words.div_ceil(256).clamp(1, 4096);
        gb_fill().launch(stream, LaunchConfig::new(blocks, 256), (src.ptr(), words, seed))?;
        // Two different non-zero bytes, so a memset that did not run is seen after another.
        let stream_byte = (rng.below(255) + 1) as u8;
        let graph_byte = if stream_byte == 0xff { 1 } else { stream_byte + 1 };
        let copy = copy_graph(&dst, &src, &counter, options.chain)?;
        let memset = memset_graph(&dst, graph_byte, &counter, options.chain)?;
        let (copy_ok, copy_kinds) = graph_nodes_are(&copy, NodeKind::Memcpy, options.chain)?;
        let (memset_ok, memset_kinds) = graph_nodes_are(&memset, NodeKind::Memset, options.chain)?;
        let copy_exec = copy.instantiate::<HostLaunch>(Default::default())?;
        let memset_exec = memset.instantiate::<HostLaunch>(Default::default())?;
        copy_exec.upload(stream)?;
        memset_exec.upload(stream)?;
        stream.synchronize()?;
        Ok(SizeBench {
            bytes,
            src,
            dst,
            counter,
            copy_exec,
            memset_exec,
            stream_byte,
            graph_byte,
            node_kinds_ok: copy_ok && memset_ok,
            node_kinds: format!("copy graph: {copy_kinds}; memset graph: {memset_kinds}"),
        })
    }

    /// Queues `groups` groups of `chain` operations of `kind`, each ending with the counting
    /// kernel (a launch on the stream, or the graph's last node).
    fn enqueue(&mut self, kind: Kind, groups: u32, chain: u32, stream: &Stream) -> cuda_graph::Result<()> {
        for _ in 0..groups {
            match kind {
                Kind::CopyStream => {
                    for _ in 0..chain {
                        self.dst.copy_from_device_async(&self.src, stream)?;
                    }
                    gb_count().launch(stream, count_config(), (self.counter.ptr(),))?;
                }
                Kind::MemsetStream => {
                    for _ in 0..chain {
                        self.dst.memset_async(self.stream_byte, stream)?;
                    }
                    gb_count().launch(stream, count_config(), (self.counter.ptr(),))?;
                }
                Kind::CopyGraph => self.copy_exec.launch(stream)?,
                Kind::MemsetGraph => self.memset_exec.launch(stream)?,
            }
        }
        Ok(())
    }

    fn expect(&self, kind: Kind, seed: u32) -> Expect {
        match kind {
            Kind::CopyStream | Kind::CopyGraph => Expect::Pattern(seed),
            Kind::MemsetStream => Expect::Byte(self.stream_byte),
            Kind::MemsetGraph => Expect::Byte(self.graph_byte),
        }
    }
}

/// The timings and checks of one size.
struct SizeResult {
    bytes: u64,
    ops: u32,
    ms: [Samples; 4],
    mismatches: Vec<String>,
    checked: usize,
    /// Runs whose counter was not their number of groups, as "<variant> run <r>: <n> of <g>".
    miscounts: Vec<String>,
    /// Runs whose counter was read (every run of every variant).
    counted: usize,
    node_kinds_ok: bool,
    node_kinds: String,
}

impl SizeResult {
    /// Median GB/s of variant `k` (10^9 bytes written per second).
    fn gbps(&self, k: usize) -> f64 {
        self.bytes as f64 * f64::from(self.ops) / (self.ms[k].median() * 1e-3) / 1e9
    }

    /// Median µs per operation of variant `k`.
    fn us_per_op(&self, k: usize) -> f64 {
        self.ms[k].median() * 1e3 / f64::from(self.ops)
    }
}

/// Times the four variants at one size.
fn measure_size(
    bytes: u64, options: &Options, rng: &mut Rng, stream: &Stream, events: (&Event, &Event),
) -> cuda_graph::Result<SizeResult> {
    let seed = rng.next_u64() as u32;
    let mut bench = SizeBench::new(bytes, options, rng, seed, stream)?;
    let ops = options.ops_for(bytes);
    let groups = ops / options.chain;
    let mut ms: [Samples; 4] = Default::default();
    let mut mismatches = Vec::new();
    let mut checked = 0;
    let mut miscounts = Vec::new();
    let mut counted = 0;
    let (start, end) = events;
    for run in 0..=options.runs {
        for (k, kind) in Kind::ALL.into_iter().enumerate() {
            bench.dst.memset_async(0, stream)?; // untimed: before the start event
            bench.counter.memset_async(0, stream)?;
            start.record(stream)?;
            bench.enqueue(kind, groups, options.chain, stream)?;
            end.record(stream)?;
            end.synchronize()?;
            if run > 0 {
                ms[k].push(f64::from(Event::elapsed_ms(start, end)?));
            }
            counted += 1;
            let ran = bench.counter.to_vec()?[0];
            if ran != groups {
                miscounts.push(format!(
                    "{} {} run {run}: {ran} of {groups} groups",
                    human(bytes),
                    kind.name()
                ));
            }
            if run == 0 || run == options.runs {
                checked += 1;
                if let Some(wrong) = first_wrong(&bench.dst.to_vec()?, bench.expect(kind, seed)) {
                    mismatches.push(format!("{} {} run {run}: {wrong}", human(bytes), kind.name()));
                }
            }
        }
    }
    Ok(SizeResult {
        bytes: bench.bytes,
        ops,
        ms,
        mismatches,
        checked,
        miscounts,
        counted,
        node_kinds_ok: bench.node_kinds_ok,
        node_kinds: bench.node_kinds,
    })
}

/// Runs every size on device 0 and reports GB/s by size, each way, and the checks.
///
/// Errors are CUDA's (no device, out of memory, a failed copy) or invalid options; wrong data
/// is not an error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    let (_, properties) = chapter_common::device_zero()?;
    gb_fill().function()?;
    gb_count().function()?;
    let mut rng = Rng::new(options.seed);
    let stream = Stream::new()?;
    let (start, end) = (Event::new()?, Event::new()?);
    let mut results = Vec::new();
    for &bytes in &options.sizes {
        results.push(measure_size(bytes, options, &mut rng, &stream, (&start, &end))?);
    }
    let mut report = Report::new("graph_bandwidth");
    report_figures(&results, &mut report);
    report_checks(&results, &mut report);
    report_notes(&results, options, &mut report, &properties);
    Ok(report)
}

/// The largest size's bandwidths, the smallest's per-operation times, the peaks.
fn report_figures(results: &[SizeResult], report: &mut Report) {
    let smallest = results.iter().min_by_key(|r| r.bytes).expect("at least one size");
    let largest = results.iter().max_by_key(|r| r.bytes).expect("at least one size");
    report.figure("largest_bytes", largest.bytes as f64, "B");
    report.figure("largest_copy_stream_gbps", largest.gbps(0), "GB/s");
    report.figure("largest_copy_graph_gbps", largest.gbps(1), "GB/s");
    report.figure("largest_memset_stream_gbps", largest.gbps(2), "GB/s");
    report.figure("largest_memset_graph_gbps", largest.gbps(3), "GB/s");
    report.figure("smallest_bytes", smallest.bytes as f64, "B");
    report.figure("smallest_copy_stream_us_per_op", smallest.us_per_op(0), "us");
    report.figure("smallest_copy_graph_us_per_op", smallest.us_per_op(1), "us");
    report.figure("smallest_memset_stream_us_per_op", smallest.us_per_op(2), "us");
    report.figure("smallest_memset_graph_us_per_op", smallest.us_per_op(3), "us");
    report.figure("smallest_copy_graph_speedup", smallest.gbps(1) / smallest.gbps(0), "x");
    report.figure("smallest_memset_graph_speedup", smallest.gbps(3) / smallest.gbps(2), "x");
    let peak = |k: usize| results.iter().map(|r| r.gbps(k)).fold(0.0, f64::max);
    report.figure("peak_copy_stream_gbps", peak(0), "GB/s");
    report.figure("peak_copy_graph_gbps", peak(1), "GB/s");
}

/// Every destination against what was written, every group run once, every graph's nodes.
fn report_checks(results: &[SizeResult], report: &mut Report) {
    let copies: Vec<&String> =
        results.iter().flat_map(|r| &r.mismatches).filter(|m| m.contains(" copy_")).collect();
    let memsets: Vec<&String> =
        results.iter().flat_map(|r| &r.mismatches).filter(|m| m.contains(" memset_")).collect();
    let checked: usize = results.iter().map(|r| r.checked).sum::<usize>() / 2;
    for (name, wrong, ok) in [
        ("copies match the source", copies, "destinations equal the seeded source"),
        ("memsets wrote the value", memsets, "destinations hold the value set"),
    ] {
        let first_wrong = wrong.first().map(|first| format!("{} wrong; first: {first}", wrong.len()));
        report
            .check_no_problem(name, first_wrong, || format!("{checked} {ok}, every size, stream and graph"));
    }
    let miscounts: Vec<&String> = results.iter().flat_map(|r| &r.miscounts).collect();
    let counted: usize = results.iter().map(|r| r.counted).sum();
    report.check(
        "every group ran exactly once",
        miscounts.is_empty(),
        match miscounts.first() {
            None => format!(
                "{counted} runs (every run of every variant and size): the counter ended at the number \
                 of graph launches or stream groups queued"
            ),
            Some(first) => format!("{} runs miscounted; first: {first}", miscounts.len()),
        },
    );
    let bad_graph = results.iter().find(|r| !r.node_kinds_ok);
    report.check(
        "graphs hold the chain of memcpy or memset nodes and the counter",
        bad_graph.is_none(),
        bad_graph.map_or_else(
            || format!("every size; {}", results[0].node_kinds),
            |r| format!("{}: {}", human(r.bytes), r.node_kinds),
        ),
    );
}

/// Per size: both ways' bandwidth and time per operation, in words and as data.
fn report_notes(
    results: &[SizeResult], options: &Options, report: &mut Report, properties: &cuda_graph::DeviceProperties,
) {
    report.note(format!(
        "{}: per size, {} operations per group (one graph, or {} stream calls), each group ending \
         with a one-thread counting kernel; GB/s = bytes written / time (a copy also reads as many)",
        properties.name, options.chain, options.chain
    ));
    for r in results {
        report.note(format!(
            "{:>8} x {:>4} ops: copy stream {:>8.1} / graph {:>8.1} GB/s ({:.2} / {:.2} µs per op); \
             memset stream {:>8.1} / graph {:>8.1} GB/s",
            human(r.bytes),
            r.ops,
            r.gbps(0),
            r.gbps(1),
            r.us_per_op(0),
            r.us_per_op(1),
            r.gbps(2),
            r.gbps(3),
        ));
    }
    report.data(
        "sizes",
        json!(results
            .iter()
            .map(|r| {
                let mut row = json!({ "bytes": r.bytes, "label": human(r.bytes), "ops": r.ops });
                for (k, kind) in Kind::ALL.into_iter().enumerate() {
                    row[format!("{}_gbps", kind.name())] = json!(r.gbps(k));
                    row[format!("{}_us_per_op", kind.name())] = json!(r.us_per_op(k));
                }
                row
            })
            .collect::<Vec<_>>()),
    );
}

/// The one-line summary for the chapter table, e.g.
/// `256 MiB copy: graph 1480 vs stream 1479 GB/s; 4 KiB: graph 1.45x`.
///
/// ```
/// let mut report = chapter_common::Report::new("graph_bandwidth");
/// report.figure("largest_bytes", (256u64 << 20) as f64, "B");
/// report.figure("largest_copy_graph_gbps", 1480.2, "GB/s");
/// report.figure("largest_copy_stream_gbps", 1479.4, "GB/s");
/// report.figure("smallest_bytes", 4096.0, "B");
/// report.figure("smallest_copy_graph_speedup", 1.45, "x");
/// assert_eq!(
///     graph_bandwidth::headline(&report),
///     "256 MiB copy: graph 1480 vs stream 1479 GB/s; 4 KiB: graph 1.45x"
/// );
/// ```
pub fn headline(report: &Report) -> String {
    format!(
        "{} copy: graph {:.0} vs stream {:.0} GB/s; {}: graph {:.2}x",
        human(report.figure_or_nan("largest_bytes") as u64),
        report.figure_or_nan("largest_copy_graph_gbps"),
        report.figure_or_nan("largest_copy_stream_gbps"),
        human(report.figure_or_nan("smallest_bytes") as u64),
        report.figure_or_nan("smallest_copy_graph_speedup")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_quick_are_valid_and_bad_options_are_refused_by_name() {
        let options = Options::default();
        assert!(options.validate().is_ok());
        assert_eq!(options.sizes.first(), Some(&(4 * KIB)));
        assert_eq!(options.sizes.last(), Some(&(256 * MIB)));
        chapter_common::assert_options_checked::<Program>(&[
            ("sizes", Options { sizes: vec![], ..Options::quick() }),
            ("max_ops", Options { max_ops: 4, ..Options::quick() }),
        ]);
        chapter_common::assert_flags_refused::<Program>(&["--sizes=6", "--sizes=0", "--chain=0"]);
    }

    #[test]
    fn runs_are_whole_chains_within_the_bounds() {
        let options = Options::quick();
        for size in [4, 4096, 1 << 20, 1 << 30] {
            let ops = options.ops_for(size);
            assert_eq!(ops % options.chain, 0, "{size}");
            assert!((options.chain..=options.max_ops).contains(&ops), "{size}: {ops}");
        }
    }

    #[test]
    fn wrong_data_is_found() {
        let seed = 7;
        let mut good: Vec<u8> = (0..16).flat_map(|i| pattern(i, seed).to_le_bytes()).collect();
        assert_eq!(first_wrong(&good, Expect::Pattern(seed)), None);
        good[9] ^= 1;
        assert!(first_wrong(&good, Expect::Pattern(seed)).unwrap().starts_with("word 2 "));
        assert_eq!(first_wrong(&[5, 5, 5], Expect::Byte(5)), None);
        assert!(first_wrong(&[5, 0, 5], Expect::Byte(5)).unwrap().starts_with("byte 1 "));
    }
}

/// The kernels declared in `graphs.rs` against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! { gb_fill, gb_count }
    }
}
