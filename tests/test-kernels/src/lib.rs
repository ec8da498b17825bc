//! CUDA kernels shared by the tests of `cuda-graph` (and of the crates above it), compiled
//! from `kernels/*.cu` by `cuda-build` and declared once here with `cuda_graph::kernels!`.
//!
//! Each function returns the typed [`Kernel`](cuda_graph::Kernel); launch it on a stream or
//! put it in a graph node. Host-side reference functions ([`pattern`]) give what the kernels
//! compute, for checking results.
//!
//! ```no_run
//! use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};
//! let stream = Stream::new()?;
//! let out = DeviceBuffer::<u32>::zeroed(1024)?;
//! test_kernels::fill_pattern().launch(&stream, LaunchConfig::for_elements(1024, 256), (out.ptr(), 1024, 9))?;
//! stream.synchronize()?;
//! assert_eq!(out.to_vec()?[5], test_kernels::pattern(5, 9));
//! # Ok::<(), cuda_graph::CudaError>(())
//! ```
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

use cuda_graph::graph::ConditionalHandle;
use cuda_graph::{DeviceConstPtr, DevicePtr, DeviceSlice};

/// What [`fill_pattern`] writes at index `i`: `(i * 2654435761) ^ seed`, wrapping.
///
/// ```
/// assert_eq!(test_kernels::pattern(0, 7), 7);
/// assert_eq!(test_kernels::pattern(1, 0), 2_654_435_761);
/// ```
pub fn pattern(i: u32, seed: u32) -> u32 {
    i.wrapping_mul(2_654_435_761) ^ seed
}

// kernels/fill.cu
// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu). They trust those counts: this unpublished crate serves the workspace's
// tests, which pass counts no larger than the buffers.
cuda_graph::kernels! {
    /// `fill_pattern(uint32_t* out, uint32_t n, uint32_t seed)`: `out[i] = pattern(i, seed)`
    /// for `i < n` (see [`pattern`]); one thread per element.
    ///
    /// ```no_run
    /// # use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};
    /// # let stream = Stream::new()?;
    /// let out = DeviceBuffer::<u32>::zeroed(100)?;
    /// test_kernels::fill_pattern().launch(&stream, LaunchConfig::for_elements(100, 64), (out.ptr(), 100, 1))?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn fill_pattern(out: DevicePtr<u32>, n: u32, seed: u32);

    /// `add_scalar(uint32_t* data, uint32_t n, uint32_t value)`: `data[i] += value` for
    /// `i < n` (wrapping); one thread per element.
    ///
    /// ```no_run
    /// # use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};
    /// # let stream = Stream::new()?;
    /// let data = DeviceBuffer::from_slice(&[1u32, 2])?;
    /// test_kernels::add_scalar().launch(&stream, LaunchConfig::for_elements(2, 64), (data.ptr(), 2, 5))?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn add_scalar(data: DevicePtr<u32>, n: u32, value: u32);

    /// `scale_add_index(uint32_t* data, uint32_t n, uint32_t scale)`:
    /// `data[i] = data[i] * scale + i` for `i < n` (wrapping); one thread per element.
    ///
    /// ```no_run
    /// # use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};
    /// # let stream = Stream::new()?;
    /// let data = DeviceBuffer::from_slice(&[1u32, 1])?;
    /// test_kernels::scale_add_index().launch(&stream, LaunchConfig::for_elements(2, 64), (data.ptr(), 2, 3))?;
    /// // data becomes [3, 4]
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn scale_add_index(data: DevicePtr<u32>, n: u32, scale: u32);

    /// `fill_pattern_after_spin(uint32_t* out, uint32_t n, uint32_t seed, uint64_t spin_cycles)`:
    /// each thread spins for `spin_cycles` clock cycles (about `spin_cycles / 1.5e9` seconds),
    /// then writes `out[i] = pattern(i, seed)` like [`fill_pattern`]: a kernel still writing
    /// its buffer long after the launch, for tests of what must wait for it.
    ///
    /// ```no_run
    /// # use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};
    /// # let stream = Stream::new()?;
    /// let out = DeviceBuffer::<u32>::zeroed(100)?;
    /// test_kernels::fill_pattern_after_spin().launch(&stream, LaunchConfig::for_elements(100, 64), (out.ptr(), 100, 1, 1 << 28))?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn fill_pattern_after_spin(out: DevicePtr<u32>, n: u32, seed: u32, spin_cycles: u64);
}

// kernels/math.cu
// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu). They trust those counts: this unpublished crate serves the workspace's
// tests, which pass counts no larger than the buffers.
cuda_graph::kernels! {
    /// `saxpy(float a, const float* x, float* y, uint32_t n)`: `y[i] = a * x[i] + y[i]` for
    /// `i < n`; one thread per element.
    ///
    /// ```no_run
    /// # use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};
    /// # let stream = Stream::new()?;
    /// let x = DeviceBuffer::from_slice(&[1.0f32, 2.0])?;
    /// let y = DeviceBuffer::from_slice(&[0.5f32, 0.5])?;
    /// test_kernels::saxpy().launch(&stream, LaunchConfig::for_elements(2, 64), (2.0, x.ptr(), y.ptr(), 2))?;
    /// // y becomes [2.5, 4.5]
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn saxpy(a: f32, x: DevicePtr<f32>, y: DevicePtr<f32>, n: u32);

    /// `scale_f64(double* p, unsigned n)`: `p[i] *= 2` for `i < n`; one thread per element.
    /// Declaring it with `DevicePtr<f32>` is refused at first use (its C++ parameter is
    /// `*mut f64`), which cuda-graph's `kernel_types` tests check.
    ///
    /// ```no_run
    /// # use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};
    /// # let stream = Stream::new()?;
    /// let p = DeviceBuffer::from_slice(&[1.5f64, -2.0])?;
    /// test_kernels::scale_f64().launch(&stream, LaunchConfig::for_elements(2, 64), (p.ptr(), 2))?;
    /// // p becomes [3.0, -4.0]
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn scale_f64(p: DevicePtr<f64>, n: u32);

    /// `fill_slice(cuda_graph::slice<uint32_t> out, uint32_t value)`: `out[i] = value` for
    /// every `i < out.size()` (grid-stride): it keeps the `kernels!` promise by construction,
    /// whatever the geometry.
    ///
    /// ```no_run
    /// # use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};
    /// # let stream = Stream::new()?;
    /// let out = DeviceBuffer::<u32>::zeroed(100)?;
    /// test_kernels::fill_slice().launch(&stream, LaunchConfig::new(4, 64), (out.slice().first(10)?, 5))?;
    /// // out becomes [5; 10] then 90 zeros
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn fill_slice(out: DeviceSlice<u32>, value: u32);

    /// `sum_slice(cuda_graph::slice<const float> in, float* out)`: `*out = in[0] + … +
    /// in[in.size() - 1]` (thread 0 of block 0).
    ///
    /// ```no_run
    /// # use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};
    /// # let stream = Stream::new()?;
    /// let input = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.5])?;
    /// let out = DeviceBuffer::<f32>::zeroed(1)?;
    /// test_kernels::sum_slice().launch(&stream, LaunchConfig::new(1, 1), (input.slice(), out.ptr()))?;
    /// // out becomes [6.5]
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn sum_slice(input: DeviceSlice<f32>, out: DevicePtr<f32>);
}

// kernels/counters.cu
// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu). They trust those counts: this unpublished crate serves the workspace's
// tests, which pass counts no larger than the buffers.
cuda_graph::kernels! {
    /// `increment_counter(uint32_t* counters, uint32_t index)`: `counters[index] += 1`
    /// (atomically), once per launch whatever the geometry (thread 0 of block 0 does it).
    /// For counting how often a graph node ran.
    ///
    /// ```no_run
    /// # use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};
    /// # let stream = Stream::new()?;
    /// let counters = DeviceBuffer::<u32>::zeroed(4)?;
    /// test_kernels::increment_counter().launch(&stream, LaunchConfig::new(1, 1), (counters.ptr(), 2))?;
    /// // counters becomes [0, 0, 1, 0]
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn increment_counter(counters: DevicePtr<u32>, index: u32);
}

// kernels/abi.cu
// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu). They trust those counts: this unpublished crate serves the workspace's
// tests, which pass counts no larger than the buffers.
cuda_graph::kernels! {
    /// `abi_probe(float* p, uint32_t a, double b, uint8_t c, int32_t d)`: parameters at
    /// offsets 0, 8, 16, 24, 28 (padding after `a` and `c`), for tests of the parameter check.
    /// Thread 0 of block 0 writes `p[0..4] = [a, b, c, d]` as floats, so a test sees every
    /// value arrive.
    ///
    /// ```no_run
    /// # use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};
    /// # let stream = Stream::new()?;
    /// let p = DeviceBuffer::<f32>::zeroed(4)?;
    /// test_kernels::abi_probe().launch(&stream, LaunchConfig::new(1, 1), (p.ptr(), 1, 2.5, 3, -4))?;
    /// // p becomes [1.0, 2.5, 3.0, -4.0]
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn abi_probe(p: DevicePtr<f32>, a: u32, b: f64, c: u8, d: i32);

    /// `noop()`: does nothing. For launch overhead, and a kernel node that does no work.
    ///
    /// ```no_run
    /// # use cuda_graph::{LaunchConfig, Stream};
    /// # let stream = Stream::new()?;
    /// test_kernels::noop().launch(&stream, LaunchConfig::new(1, 1), ())?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn noop();
}

// kernels/conditional.cu. `ConditionalHandle` passes as the kernel's
// `cudaGraphConditionalHandle` (an `unsigned long long`).
// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu). They trust those counts: this unpublished crate serves the workspace's
// tests, which pass counts no larger than the buffers.
cuda_graph::kernels! {
    /// `set_condition_from(cudaGraphConditionalHandle handle, const uint32_t* value)`: sets
    /// the condition of `handle` to `*value` (IF: nonzero runs the body; SWITCH: the body
    /// index). Launch with one thread, as a node of the graph that owns `handle`.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), cuda_graph::CudaError> {
    /// // in a graph whose conditional node uses `handle`, a node running:
    /// let kernel = test_kernels::set_condition_from();
    /// kernel.function()?;
    /// # Ok(()) }
    /// ```
    pub unsafe fn set_condition_from(handle: ConditionalHandle, value: DevicePtr<u32>);

    /// `while_step(cudaGraphConditionalHandle handle, uint32_t* counter, uint32_t limit)`:
    /// `*counter += 1`, then sets the condition of `handle` to `*counter < limit`. As the
    /// last node of a WHILE body (with one thread), the body runs until the counter reaches
    /// `limit`.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), cuda_graph::CudaError> {
    /// let kernel = test_kernels::while_step();
    /// kernel.function()?;
    /// # Ok(()) }
    /// ```
    pub unsafe fn while_step(handle: ConditionalHandle, counter: DevicePtr<u32>, limit: u32);
}

// kernels/faults.cu: kernels that fail on purpose.
// SAFETY: trap_if and spin_then_fill read and write their pointers only below the counts they
// are given, which the workspace's tests keep within the buffers. write_past_end breaks the
// promise on purpose: only the sanitizer-setup tests launch it, to see memcheck report it.
cuda_graph::kernels! {
    /// `trap_if(const uint32_t* flag)`: executes `__trap()` when `*flag` is nonzero, which
    /// fails the launch with `cudaErrorLaunchFailure` and loses the context (sticky).
    ///
    /// ```no_run
    /// test_kernels::trap_if().function()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn trap_if(flag: DevicePtr<u32>);

    /// `spin_then_fill(uint32_t* out, uint32_t n, unsigned long long cycles, uint32_t value)`:
    /// spins about `cycles` clock cycles, then writes `value` to `out[0..n)`.
    ///
    /// ```no_run
    /// test_kernels::spin_then_fill().function()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn spin_then_fill(out: DevicePtr<u32>, n: u32, cycles: u64, value: u32);

    /// `write_past_end(uint32_t* data, uint32_t n, uint32_t past)`: one thread writes
    /// `data[n + past]`, out of bounds on purpose (for memcheck). This declaration breaks the
    /// `kernels!` promise deliberately; only memcheck tests of the sanitizer setup launch it.
    ///
    /// ```no_run
    /// test_kernels::write_past_end().function()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn write_past_end(data: DevicePtr<u32>, n: u32, past: u32);
}

// kernels/mapped.cu
// SAFETY: the kernel below touches only flags[0..3], and only when the slice holds them.
cuda_graph::kernels! {
    /// `mapped_handshake(cuda_graph::slice<uint32_t> flags, uint64_t timeout_cycles)`, for
    /// mapped host memory ([`MappedBuffer`](cuda_graph::MappedBuffer)): sets `flags[0] = 1`,
    /// waits up to `timeout_cycles` clock cycles for the host to make `flags[1]` non-zero
    /// (volatile reads), then sets `flags[2]` to 2 if it saw that, 3 if it timed out. One
    /// thread; nothing happens for a slice of fewer than 3 elements.
    ///
    /// ```no_run
    /// # use cuda_graph::{LaunchConfig, MappedBuffer, Stream};
    /// # let stream = Stream::new()?;
    /// let flags = MappedBuffer::<u32>::zeroed(3)?;
    /// test_kernels::mapped_handshake().launch(&stream, LaunchConfig::new(1, 1), (flags.ptr().into_slice(), 1 << 30))?;
    /// while flags.load(0) == 0 {} // the kernel runs
    /// flags.store(1, 1);
    /// stream.synchronize()?;
    /// assert_eq!(flags.load(2), 2);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn mapped_handshake(flags: DeviceSlice<u32>, timeout_cycles: u64);
}

// kernels/pdl.cu
// SAFETY: each kernel below writes only inside the slice it is given (`cuda_graph::slice`
// bounds every index; see kernels/pdl.cu).
cuda_graph::kernels! {
    /// `pdl_append(cuda_graph::slice<uint32_t> log, uint32_t value)`: lets its dependents
    /// launch, waits for the kernels before it (`cuda_graph::pdl`), then appends `value`
    /// without atomics: `log[0]` counts entries, entry `k` is `log[1 + k]`. A chain joined by
    /// programmatic edges fills the log in chain order only if every wait holds.
    ///
    /// ```no_run
    /// test_kernels::pdl_append().function()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn pdl_append(log: DeviceSlice<u32>, value: u32);

    /// `cluster_blocks(cuda_graph::slice<uint32_t> out)`: `out[b]` = the blocks in block `b`'s
    /// thread-block cluster (1 without clusters).
    ///
    /// ```no_run
    /// test_kernels::cluster_blocks().function()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn cluster_blocks(out: DeviceSlice<u32>);

    /// `grid_sync_sum(cuda_graph::slice<uint32_t> out)`: block `b` writes `out[b] = b + 1`,
    /// the grid meets at a grid-wide barrier, then `out[gridDim.x]` = their sum. Launch it only
    /// as a cooperative grid (`KernelAttributes::cooperative`): the barrier needs every block
    /// resident, and without that it may never return.
    ///
    /// ```no_run
    /// test_kernels::grid_sync_sum().function()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn grid_sync_sum(out: DeviceSlice<u32>);
}

// kernels/symbols.cu
cuda_graph::device_symbols! {
    /// `__device__ uint32_t symbol_offset`: what [`add_symbol_table`] adds,
    /// [`bump_symbol_offset`] increments.
    ///
    /// ```no_run
    /// test_kernels::symbol_offset().write(0, &[3])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub static symbol_offset: u32;

    /// `__device__ uint32_t symbol_table[16]`: what [`add_symbol_table`] reads.
    ///
    /// ```no_run
    /// test_kernels::symbol_table().write(0, &[1; 16])?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub static symbol_table: [u32; 16];
}

// SAFETY: add_symbol_table writes out[i] only for i < n and reads symbol_table only at
// i % 16, inside the array; bump_symbol_offset writes only the variable symbol_offset. The
// tests pass n <= out.len().
cuda_graph::kernels! {
    /// `add_symbol_table(uint32_t* out, uint32_t n)`: `out[i] = symbol_table[i % 16] +
    /// symbol_offset` for `i < n` (see [`symbol_table`], [`symbol_offset`]).
    ///
    /// ```no_run
    /// # use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};
    /// # let stream = Stream::new()?;
    /// let out = DeviceBuffer::<u32>::zeroed(32)?;
    /// test_kernels::add_symbol_table().launch(&stream, LaunchConfig::for_elements(32, 32), (out.ptr(), 32))?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn add_symbol_table(out: DevicePtr<u32>, n: u32);

    /// `bump_symbol_offset(uint32_t by)`: `symbol_offset += by`, once per launch.
    ///
    /// ```no_run
    /// # use cuda_graph::{LaunchConfig, Stream};
    /// # let stream = Stream::new()?;
    /// test_kernels::bump_symbol_offset().launch(&stream, LaunchConfig::new(1, 1), (2,))?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn bump_symbol_offset(by: u32);
}

// kernels/shared.cu
// SAFETY: reverse_through_shared reads in[i] and writes out[i] only for i < n, and uses no more
// shared memory than the launch gives it (it reads how much). The tests pass n <= both lengths.
cuda_graph::kernels! {
    /// `reverse_through_shared(const uint32_t* in, uint32_t* out, uint32_t n)`, one block:
    /// `out[i] = in[n - 1 - i]` for `i < n` through `n` words of dynamic shared memory (with
    /// fewer words given, only that many take part).
    ///
    /// ```no_run
    /// # use cuda_graph::{DeviceBuffer, LaunchConfig, Stream};
    /// # let stream = Stream::new()?;
    /// let data = DeviceBuffer::from_slice(&[1u32, 2, 3])?;
    /// let out = DeviceBuffer::<u32>::zeroed(3)?;
    /// let config = LaunchConfig::new(1, 32).with_shared_mem(12);
    /// test_kernels::reverse_through_shared().launch(&stream, config, (data.const_ptr(), out.ptr(), 3))?;
    /// // out becomes [3, 2, 1]
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn reverse_through_shared(input: DeviceConstPtr<u32>, out: DevicePtr<u32>, n: u32);
}
