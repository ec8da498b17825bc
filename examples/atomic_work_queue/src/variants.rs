//! The kernels, and launching and timing each variant on one stream with events.

use cuda_graph::kernel::{Kernel, LaunchConfig};
use cuda_graph::{DeviceBuffer, DevicePtr, Event, Result, Stream};

use crate::workload::{SinCosTable, Workload};
use crate::Arithmetic;

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu: every index is compared with `n` before use, in 64-bit arithmetic, and the
// claim counters are one-element buffers); the declarations are private to this crate, whose
// only launches (`Bench::run_once`, `Bench::sincos_table`) pass `n` = the length of `costs`,
// `out`, `sines` and `cosines` and `next` = the one-element counter, whatever the grid.
cuda_graph::kernels! {
    /// Static split: block b processes the b-th contiguous tile of `ceil(n / gridDim.x)` items.
    pub unsafe fn awq_static_tiles(costs: DevicePtr<u32>, out: DevicePtr<u32>, n: u32, salt: u32);
    /// Static, the chapter's kernel: thread `blockIdx.x * blockDim.x + threadIdx.x` does that item
    /// (if below `n`), over a full grid of `ceil(n / blockDim.x)` blocks.
    pub unsafe fn awq_static_per_item(costs: DevicePtr<u32>, out: DevicePtr<u32>, n: u32, salt: u32);
    /// Static grid-stride split: thread t of T does items t, t + T, ... below `n`.
    pub unsafe fn awq_static_grid_stride(costs: DevicePtr<u32>, out: DevicePtr<u32>, n: u32, salt: u32);
    /// Dynamic: each thread claims one item at a time with `atomicAdd(next, 1)`.
    pub unsafe fn awq_dynamic_per_thread(costs: DevicePtr<u32>, out: DevicePtr<u32>, n: u32, salt: u32, next: DevicePtr<u32>);
    /// Warp-leader batching: a leader claims `batch` items per atomic, `__shfl_sync` shares it.
    pub unsafe fn awq_warp_batched(
        costs: DevicePtr<u32>,
        out: DevicePtr<u32>,
        n: u32,
        salt: u32,
        next: DevicePtr<u32>,
        batch: u32,
    );
    /// Hierarchical: a block claims `chunk` items globally, its warps claim 32 at a time from
    /// that chunk through a shared-memory counter.
    pub unsafe fn awq_hierarchical(
        costs: DevicePtr<u32>,
        out: DevicePtr<u32>,
        n: u32,
        salt: u32,
        next: DevicePtr<u32>,
        chunk: u32,
    );
    /// [`awq_static_tiles`] with the listing's work (`sinf`/`cosf` rounds, float bits out).
    pub unsafe fn awq_static_tiles_sincos(costs: DevicePtr<u32>, out: DevicePtr<u32>, n: u32, salt: u32);
    /// [`awq_static_per_item`] with the listing's work.
    pub unsafe fn awq_static_per_item_sincos(costs: DevicePtr<u32>, out: DevicePtr<u32>, n: u32, salt: u32);
    /// [`awq_static_grid_stride`] with the listing's work.
    pub unsafe fn awq_static_grid_stride_sincos(costs: DevicePtr<u32>, out: DevicePtr<u32>, n: u32, salt: u32);
    /// [`awq_dynamic_per_thread`] with the listing's work.
    pub unsafe fn awq_dynamic_per_thread_sincos(
        costs: DevicePtr<u32>,
        out: DevicePtr<u32>,
        n: u32,
        salt: u32,
        next: DevicePtr<u32>,
    );
    /// [`awq_warp_batched`] with the listing's work.
    pub unsafe fn awq_warp_batched_sincos(
        costs: DevicePtr<u32>,
        out: DevicePtr<u32>,
        n: u32,
        salt: u32,
        next: DevicePtr<u32>,
        batch: u32,
    );
    /// [`awq_hierarchical`] with the listing's work.
    pub unsafe fn awq_hierarchical_sincos(
        costs: DevicePtr<u32>,
        out: DevicePtr<u32>,
        n: u32,
        salt: u32,
        next: DevicePtr<u32>,
        chunk: u32,
    );
    /// The GPU's `sinf(x)` and `cosf(x)` (bits) of every item's `x = i / n`, for `i < n`.
    pub unsafe fn awq_sincos_table(sines: DevicePtr<u32>, cosines: DevicePtr<u32>, n: u32);
}

/// A static kernel: `costs`, `out`, `n`, `salt`.
type PlainKernel = Kernel<(DevicePtr<u32>, DevicePtr<u32>, u32, u32)>;
/// A kernel that claims from a counter: the same, then `next`.
type ClaimKernel = Kernel<(DevicePtr<u32>, DevicePtr<u32>, u32, u32, DevicePtr<u32>)>;
/// A kernel that claims several items at a time: the same, then the batch or chunk.
type BatchKernel = Kernel<(DevicePtr<u32>, DevicePtr<u32>, u32, u32, DevicePtr<u32>, u32)>;

/// The six kernels that do one kind of work (one [`Arithmetic`]).
struct Kernels {
    static_tiles: &'static PlainKernel,
    static_per_item: &'static PlainKernel,
    static_grid_stride: &'static PlainKernel,
    dynamic_per_thread: &'static ClaimKernel,
    warp_batched: &'static BatchKernel,
    hierarchical: &'static BatchKernel,
}

impl Kernels {
    /// The kernels of `arithmetic`: `awq_X` or `awq_X_sincos`.
    fn of(arithmetic: Arithmetic) -> Kernels {
        match arithmetic {
            Arithmetic::Port => Kernels {
                static_tiles: awq_static_tiles(),
                static_per_item: awq_static_per_item(),
                static_grid_stride: awq_static_grid_stride(),
                dynamic_per_thread: awq_dynamic_per_thread(),
                warp_batched: awq_warp_batched(),
                hierarchical: awq_hierarchical(),
            },
            Arithmetic::Listing => Kernels {
                static_tiles: awq_static_tiles_sincos(),
                static_per_item: awq_static_per_item_sincos(),
                static_grid_stride: awq_static_grid_stride_sincos(),
                dynamic_per_thread: awq_dynamic_per_thread_sincos(),
                warp_batched: awq_warp_batched_sincos(),
                hierarchical: awq_hierarchical_sincos(),
            },
        }
    }
}

/// Which kernels run, and on which grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lineup {
    /// The port's: every variant and the batch sweep (and the uniform-cost control), all but
    /// `static_per_item` on the persistent grid of `SMs x blocks_per_sm` blocks.
    Port,
    /// The chapter listing's two kernels, `static_per_item` and the warp-batched `dynamic_warp`,
    /// both over a full grid of one thread per item (`ceil(items / threads_per_block)` blocks);
    /// no other variant, no sweep, no control.
    Listing,
}

/// One way of handing the items to the grid's threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// A fixed contiguous tile per block of the persistent grid.
    Static,
    /// A fixed item per thread over a full grid (one thread per item, the chapter's kernel).
    StaticPerItem,
    /// A fixed grid-stride set of items per thread of the persistent grid.
    StaticGridStride,
    /// One global atomic per item, per thread.
    DynamicPerThread,
    /// One global atomic per `batch` items, claimed by a warp (or group) leader.
    WarpBatched(u32),
    /// One global atomic per `chunk` items per block, then shared-memory claims per warp.
    Hierarchical(u32),
}

impl Variant {
    /// A short name, used in figure names (`<name>_ms`).
    pub fn name(self) -> String {
        match self {
            Variant::Static => "static".into(),
            Variant::StaticPerItem => "static_per_item".into(),
            Variant::StaticGridStride => "static_grid_stride".into(),
            Variant::DynamicPerThread => "dynamic_per_thread".into(),
            Variant::WarpBatched(batch) => format!("warp_batch_{batch}"),
            Variant::Hierarchical(chunk) => format!("hierarchical_chunk_{chunk}"),
        }
    }

    /// Global (L2) atomics per item this variant issues.
    pub fn global_atomics_per_item(self) -> f64 {
        match self {
            Variant::Static | Variant::StaticPerItem | Variant::StaticGridStride => 0.0,
            Variant::DynamicPerThread => 1.0,
            Variant::WarpBatched(batch) => 1.0 / f64::from(batch),
            Variant::Hierarchical(chunk) => 1.0 / f64::from(chunk),
        }
    }
}

/// The device side of a run: the inputs, the output, the claim counter, the stream, two
/// events, the persistent grid every variant launches with and the kernels of one kind of work.
pub struct Bench {
    stream: Stream,
    costs: DeviceBuffer<u32>,
    out: DeviceBuffer<u32>,
    next: DeviceBuffer<u32>,
    start: Event,
    end: Event,
    config: LaunchConfig,
    items: u32,
    salt: u32,
    kernels: Kernels,
    /// What the output is filled with before each run: a value no item can produce where
    /// there is one (a NaN for the listing's float results), so an item never written shows.
    fill: u8,
}

impl Bench {
    /// Uploads `workload` and prepares launches of `config` (on the current device) of the
    /// kernels that do `arithmetic`.
    pub fn new(workload: &Workload, config: LaunchConfig, arithmetic: Arithmetic) -> Result<Bench> {
        let items = workload.costs.len() as u32;
        Ok(Bench {
            stream: Stream::new()?,
            costs: DeviceBuffer::from_slice(&workload.costs)?,
            out: DeviceBuffer::zeroed(workload.costs.len())?,
            next: DeviceBuffer::zeroed(1)?,
            start: Event::new()?,
            end: Event::new()?,
            config,
            items,
            salt: workload.salt,
            kernels: Kernels::of(arithmetic),
            fill: match arithmetic {
                Arithmetic::Port => 0,
                Arithmetic::Listing => 0xff,
            },
        })
    }

    /// The GPU's `sinf` and `cosf` of every item's `x` (the listing's work), computed once by a
    /// kernel of their own, untimed.
    pub fn sincos_table(&self) -> Result<SinCosTable> {
        let n = self.items as usize;
        let sines = DeviceBuffer::<u32>::zeroed(n)?;
        let cosines = DeviceBuffer::<u32>::zeroed(n)?;
        let config = LaunchConfig::for_elements(self.items, 256);
        awq_sincos_table().launch(&self.stream, config, (sines.ptr(), cosines.ptr(), self.items))?;
        self.stream.synchronize()?;
        let bits = |buffer: &DeviceBuffer<u32>| -> Result<Vec<f32>> {
            Ok(buffer.to_vec()?.into_iter().map(f32::from_bits).collect())
        };
        Ok(SinCosTable { sines: bits(&sines)?, cosines: bits(&cosines)? })
    }

    /// Clears the output and the counter, then runs `variant` once and returns its GPU time in
    /// milliseconds (between events around the launch alone). Waits for it to finish.
    pub fn run_once(&mut self, variant: Variant) -> Result<f64> {
        self.out.memset_async(self.fill, &self.stream)?;
        self.next.memset_async(0, &self.stream)?;
        let (costs, out, next) = (self.costs.ptr(), self.out.ptr(), self.next.ptr());
        let (n, salt, config, stream) = (self.items, self.salt, self.config, &self.stream);
        let kernels = &self.kernels;
        self.start.record(stream)?;
        match variant {
            Variant::Static => kernels.static_tiles.launch(stream, config, (costs, out, n, salt))?,
            Variant::StaticPerItem => {
                // A full grid: one thread per item (n <= 2^30, so the block count fits).
                let threads = config.block.x;
                let full = LaunchConfig::new(n.div_ceil(threads), threads);
                kernels.static_per_item.launch(stream, full, (costs, out, n, salt))?
            }
            Variant::StaticGridStride => {
                kernels.static_grid_stride.launch(stream, config, (costs, out, n, salt))?
            }
            Variant::DynamicPerThread => {
                kernels.dynamic_per_thread.launch(stream, config, (costs, out, n, salt, next))?
            }
            Variant::WarpBatched(batch) => {
                kernels.warp_batched.launch(stream, config, (costs, out, n, salt, next, batch))?
            }
            Variant::Hierarchical(chunk) => {
                kernels.hierarchical.launch(stream, config, (costs, out, n, salt, next, chunk))?
            }
        }
        self.end.record(stream)?;
        self.end.synchronize()?;
        Ok(f64::from(Event::elapsed_ms(&self.start, &self.end)?))
    }

    /// The output of the last run.
    pub fn output(&self) -> Result<Vec<u32>> {
        self.out.to_vec()
    }
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! {
            awq_static_tiles, awq_static_per_item, awq_static_grid_stride, awq_dynamic_per_thread,
            awq_warp_batched, awq_hierarchical, awq_static_tiles_sincos, awq_static_per_item_sincos,
            awq_static_grid_stride_sincos, awq_dynamic_per_thread_sincos, awq_warp_batched_sincos,
            awq_hierarchical_sincos, awq_sincos_table
        }
    }
}
