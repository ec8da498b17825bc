//! Host-side overhead of the safe API that can be measured without a GPU (criterion):
//!
//! - argument packing for a 6-argument kernel: `KernelArgs::pack` + `KernelArgs::pointers`
//!   (what every `Kernel::launch` and kernel node does before calling CUDA), and collecting
//!   what the arguments keep alive;
//! - `KernelArgs::layout` (the declared side of the first-use parameter check);
//! - `LaunchConfig::validate` (every launch);
//! - `DevicePtr::offset` (bounds-checked pointer arithmetic).
//!
//! Building graph nodes (10k nodes) goes through `cudaGraphAddNode` for every node, so it needs
//! CUDA and a device: it is not measured here (see bench/README.md). Pointers are made with
//! `DevicePtr::from_raw` and never reach a device.
//!
//! Run: `cargo bench -p cuda-graph-bench --bench host_overhead`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DevicePtr, KernelArgs};

/// A 6-parameter kernel's arguments: `(const float* x, float* y, uint32_t n, float a,
/// uint64_t seed, int32_t flags)`.
type SixArgs = (DevicePtr<f32>, DevicePtr<f32>, u32, f32, u64, i32);

fn six_args() -> SixArgs {
    // SAFETY: these addresses are never dereferenced or given to CUDA; only packed.
    let (x, y) = unsafe {
        (DevicePtr::from_raw(0x7f00_0000_0000, 1 << 20), DevicePtr::from_raw(0x7f00_0040_0000, 1 << 20))
    };
    (x, y, 1 << 20, 2.5, 0x5eed, -1)
}

fn packing(c: &mut Criterion) {
    let args = six_args();
    c.bench_function("pack + pointers, 6 arguments", |b| {
        b.iter(|| {
            let mut packed = black_box(&args).pack();
            let mut pointers = SixArgs::pointers(&mut packed);
            black_box(pointers.as_mut().as_mut_ptr());
            black_box(&packed);
        })
    });
    c.bench_function("keep_alive, 6 arguments (pointers from_raw)", |b| {
        b.iter(|| {
            let mut owners = Vec::new();
            black_box(&args).keep_alive(&mut owners);
            black_box(owners.len())
        })
    });
    c.bench_function("layout, 6 arguments", |b| b.iter(|| black_box(SixArgs::layout())));
}

fn launch_config(c: &mut Criterion) {
    let config = LaunchConfig::new((1024, 4), (256, 2));
    c.bench_function("LaunchConfig::validate", |b| b.iter(|| black_box(&config).validate().is_ok()));
    c.bench_function("LaunchConfig::for_elements + validate", |b| {
        b.iter(|| LaunchConfig::for_elements(black_box(1_000_000), 256).validate().is_ok())
    });
}

fn pointer_offset(c: &mut Criterion) {
    let (x, ..) = six_args();
    c.bench_function("DevicePtr::offset", |b| {
        b.iter(|| black_box(&x).offset(black_box(4096)).map(|p| p.addr()))
    });
}

criterion_group!(host_overhead, packing, launch_config, pointer_offset);
criterion_main!(host_overhead);
