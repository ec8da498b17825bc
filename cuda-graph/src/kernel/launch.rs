//! Launching a typed kernel on a stream.

use cudart_graph_sys as sys;

use super::check_launch_handles;
use super::{Kernel, KernelArgs, LaunchConfig};
use crate::capture_gate::{any_capture_active, enter_queue, with_capture_sink, QueueGuard, Sink};
use crate::error::{check, Result};
use crate::stream::Stream;

impl<A: KernelArgs> Kernel<A> {
    /// Queues this kernel on `stream` with `config` and `args` (`cudaLaunchKernel`), after
    /// checking the geometry ([`LaunchConfig::validate`], before any CUDA call) and the
    /// kernel's parameters (at first use, see [`Kernel::function`]).
    ///
    /// The call returns once the launch is queued; errors the kernel meets while running
    /// surface at the next synchronization (`stream.synchronize()`). A launch CUDA refuses
    /// (too much shared memory, say) is returned here, and the thread's last-error slot is
    /// cleared of it, so it cannot be reported again by an unrelated later call.
    ///
    /// A [`ConditionalHandle`](crate::graph::ConditionalHandle) argument is refused
    /// (`InvalidArgument`, nothing queued) unless `stream` is capturing into the graph that
    /// created the handle, or a body inside it
    /// ([`Stream::begin_capture_to_graph`](crate::Stream::begin_capture_to_graph)): setting a
    /// condition from outside its graph is undefined in CUDA.
    ///
    /// Memory: the arguments are copied into the launch, so `args` is dropped when this call
    /// returns. The buffers its pointers point into may be dropped right after, too: a
    /// [`DeviceBuffer`](crate::DeviceBuffer) is freed only after the work queued before its
    /// drop, this kernel included, so a kernel never runs on freed memory. (`cudaMalloc`
    /// memory: the drop waits for the device, then calls `cudaFree`. Stream-ordered memory:
    /// the free is queued on the legacy default stream, which runs after blocking streams;
    /// a launch on a non-blocking stream marks the stream-ordered buffers among its
    /// arguments, and their drop waits for the device first. See `memory::pool`, "Freeing".)
    ///
    /// ```no_run
    /// use cuda_graph::{kernel::LaunchConfig, DeviceBuffer, DevicePtr, Stream};
    /// cuda_graph::kernels! {
    ///     // SAFETY: add_scalar writes data[i] only for i < n; private, launched with n = 3.
    ///     unsafe fn add_scalar(data: DevicePtr<u32>, n: u32, value: u32);
    /// }
    /// let stream = Stream::new()?;
    /// let data = DeviceBuffer::from_slice(&[1u32, 2, 3])?;
    /// add_scalar().launch(&stream, LaunchConfig::for_elements(3, 128), (data.ptr(), 3, 10))?;
    /// stream.synchronize()?;
    /// assert_eq!(data.to_vec()?, [11, 12, 13]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    ///
    /// Several devices: the launch runs on `stream`'s device, made current for the call when
    /// another one is (a thread-local read when it is current already). While streams or
    /// memory of more than one device exist, buffers among `args` on another device than the
    /// stream's are refused, naming both devices, unless that device was given peer access
    /// to theirs ([`Device::enable_peer_access`](crate::Device::enable_peer_access)).
    pub fn launch(&self, stream: &Stream, config: LaunchConfig, args: A) -> Result<()> {
        let device = stream.device();
        if !device.is_current() {
            return device.with_current(|| self.launch(stream, config, args));
        }
        config.validate()?;
        let function = self.function()?;
        // From the capture check until CUDA has the launch, no capture begins, ends or joins
        // this stream (see `capture_gate`): what the check sees is what the launch meets.
        let gate = enter_queue("Kernel::launch")?;
        // A launch recorded by stream capture runs whenever the graph runs, long after this
        // call: the captured graph must then own the buffers the arguments point into. A
        // conditional handle is allowed only when captured into its own graph. Both are
        // compile-time or one-atomic-load checks while no capture runs.
        if A::HAS_CONDITIONAL_HANDLE || any_capture_active() {
            prepare_kernel_launch(&gate, stream, &args)?;
        }
        // A free queued on the legacy stream is not ordered after this launch on a
        // non-blocking stream: mark the stream-ordered buffers it uses, whose drop then waits
        // for the device. One branch (and a relaxed load on non-blocking streams) when no
        // such buffer exists.
        // Buffers of another device: one relaxed load while all are on one device.
        if crate::device::several_in_use() {
            check_argument_devices(stream, &args)?;
        }
        if crate::memory::unordered_use_possible(stream) {
            let mut owners = Vec::new();
            args.keep_alive(&mut owners);
            crate::memory::note_unordered_uses(&owners, stream);
        }
        let mut packed = args.pack();
        let mut pointers = A::pointers(&mut packed);
        let pointers = pointers.as_mut();
        // SAFETY: `function` is the host stub of a kernel whose parameter list was checked
        // against `A` (count, sizes, offsets) by `function()`. `pointers` holds one pointer
        // per parameter, each to a raw value of that parameter's size inside `packed`, which
        // lives, unmoved, to the end of this function (CUDA copies the values before returning).
        // The stream is alive for the call (borrowed). Pointer arguments are device addresses
        // of live allocations (or promised valid by `DevicePtr::from_raw`'s caller), which
        // are freed only after this kernel: `cudaMalloc` memory after the device is idle,
        // stream-ordered memory behind it on the legacy stream or, for this launch on a
        // non-blocking stream, after the device is idle (marked just above: the parameters'
        // `keep_alive` hand out the allocations' own owners, as `DevicePtr`'s does).
        let status = unsafe {
            sys::cudaLaunchKernel(
                function,
                config.grid.into(),
                config.block.into(),
                pointers.as_mut_ptr(),
                config.shared_mem_bytes as usize,
                stream.as_raw(),
            )
        };
        if status != sys::cudaError::cudaSuccess {
            // The runtime also stored this error as the thread's last error. Take it out
            // (non-sticky launch errors clear; sticky ones stay, as CUDA intends) so that no
            // later `cudaGetLastError` reports this launch again. What it returns is this
            // launch's error (or an older one); the launch's own status is the one returned.
            // SAFETY: no arguments; reads and resets this thread's last-error slot.
            let _previous = unsafe { sys::cudaGetLastError() };
        }
        drop(gate);
        check(status, "cudaLaunchKernel")
    }
}

/// Refuses arguments in memory that `stream`'s device cannot reach (another device's, without
/// peer access), naming both devices; notes the uses of other devices' memory, whose drop
/// then waits for `stream`'s device too.
#[cold]
#[inline(never)]
fn check_argument_devices<A: KernelArgs>(stream: &Stream, args: &A) -> Result<()> {
    let mut owners = Vec::new();
    args.keep_alive(&mut owners);
    crate::memory::check_owners_on(&owners, stream.device(), "Kernel::launch")?;
    if crate::memory::any_foreign(&owners, stream.device()) {
        crate::memory::note_unordered_uses(&owners, stream);
    }
    Ok(())
}

/// The checks and bookkeeping of a kernel launched on `stream` while a capture of this crate
/// may run, or with a conditional handle among its arguments (under the capture gate, until
/// the launch is queued):
/// - a conditional handle is allowed only when the launch is captured into the graph that
///   created it or a body inside that graph (`begin_capture_to_graph`); anywhere else
///   (a plain stream launch, a capture into a new graph or another graph) it is refused;
/// - when captured, the captured graph keeps what the arguments point into.
#[cold]
#[inline(never)]
fn prepare_kernel_launch<A: KernelArgs>(_gate: &QueueGuard, stream: &Stream, args: &A) -> Result<()> {
    with_capture_sink(stream.as_raw(), |sink| {
        if A::HAS_CONDITIONAL_HANDLE {
            let lineage = match &sink {
                Some(Sink::Into { lineage, .. }) => Some(&**lineage),
                _ => None,
            };
            check_launch_handles(lineage, args)?;
        }
        if let Some(sink) = sink {
            let mut owners = Vec::new();
            args.keep_alive(&mut owners);
            sink.retain(owners, false);
        }
        Ok(())
    })
}
