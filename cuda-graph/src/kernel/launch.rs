//! Launching a typed kernel on a stream, with or without launch attributes.

use std::ffi::c_void;
use std::ptr;

use crate::runtime as sys;

use super::{check_launch_handles, driver_launch};
use super::{CheckAttributes, Kernel, KernelArgs, LaunchAttributes, LaunchConfig};
use crate::capture_gate::{capture_possible, enter_queue, with_capture_sink, QueueGuard, Sink};
use crate::error::{check, Result};
use crate::memory::KeepAlive;
use crate::stream::Stream;

impl<A: KernelArgs> Kernel<A> {
    /// Queues this kernel on `stream` with `config` and `args`, after checking the geometry
    /// ([`LaunchConfig::validate`], before any CUDA call) and the kernel's parameters (at
    /// first use, see [`Kernel::function`]). The launch goes through the driver
    /// (`cuLaunchKernelEx`) when the stream's context is current and no capture can record
    /// it, the cheaper call, and through the runtime (`cudaLaunchKernel`) otherwise: the same
    /// launch either way.
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
    /// to theirs ([`Device::enable_peer_access`](crate::Device::enable_peer_access); pool
    /// memory: [`MemoryPool::enable_access_from`](crate::MemoryPool::enable_access_from)).
    pub fn launch(&self, stream: &Stream, config: LaunchConfig, args: A) -> Result<()> {
        // The stream's device, current for the call (a thread-local read when it is already).
        let _on_device = stream.make_current()?;
        config.check("Kernel::launch")?;
        let function = self.function()?;
        let handle = self.launch_handle();
        self.queue("Kernel::launch", stream, &args, &[], |pointers, uncaptured| {
            if let (true, Some((kernel, handles))) = (uncaptured, handle) {
                // SAFETY: `kernel` is this kernel's handle, whose parameters `pointers` match
                // (checked by `function()`, packed by `queue`, alive until it returns), and
                // `handles` this kernel's, which holds its library; no attributes; the stream
                // is borrowed; no capture can record the launch.
                if unsafe {
                    driver_launch::launch(kernel, handles, stream, &config, &mut [], pointers.as_mut_ptr())
                } {
                    return (sys::cudaError::cudaSuccess, "cuLaunchKernelEx");
                }
            }
            // SAFETY: `function` is the host stub of a kernel whose parameter list was checked
            // against `A` (count, sizes, offsets) by `function()`. `pointers` holds one pointer
            // per parameter, each to a raw value of that parameter's size that lives, unmoved,
            // until `queue` returns (CUDA copies the values before returning). The stream is
            // alive for the call (borrowed). Pointer arguments are device addresses of live
            // allocations (or promised valid by `DevicePtr::from_raw`'s caller), freed only
            // after this kernel (see `queue`).
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
            (status, "cudaLaunchKernel")
        })
    }

    /// [`launch`](Self::launch) with launch attributes (`cuLaunchKernelEx`, or the runtime's
    /// `cudaLaunchKernelExC` where `launch` would use `cudaLaunchKernel`): programmatic
    /// dependent launch, clusters, a cooperative grid, priority, memory synchronization
    /// domains (see [`LaunchAttributes`]). What the device cannot do, or what contradicts
    /// `config` (a cluster that does not divide the grid, a cooperative grid larger than the
    /// device holds at once), is refused before CUDA is called, naming the attribute.
    ///
    /// Captured into a graph, a launch with
    /// [`programmatic_serialization`](LaunchAttributes::programmatic_serialization) becomes a
    /// kernel node joined to the kernel captured before it by a programmatic edge; the graph
    /// keeps the events of the attributes alive, as it keeps the arguments' buffers.
    ///
    /// ```no_run
    /// use cuda_graph::kernel::{LaunchAttributes, LaunchConfig};
    /// use cuda_graph::{DeviceBuffer, DevicePtr, Stream};
    /// cuda_graph::kernels! {
    ///     // SAFETY: bump adds 1 to counter[0] (one thread) after waiting for the kernel before it.
    ///     unsafe fn bump(counter: DevicePtr<u32>);
    /// }
    /// let stream = Stream::new()?;
    /// let counter = DeviceBuffer::<u32>::zeroed(1)?;
    /// let config = LaunchConfig::new(1, 1);
    /// bump().launch(&stream, config, (counter.ptr(),))?;
    /// // May start while the first one still runs; waits in `cuda_graph::pdl::wait_upstream()`.
    /// bump().launch_with(&stream, config, &LaunchAttributes::programmatic(), (counter.ptr(),))?;
    /// stream.synchronize()?;
    /// assert_eq!(counter.to_vec()?, [2]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn launch_with(
        &self, stream: &Stream, config: LaunchConfig, attributes: &LaunchAttributes, args: A,
    ) -> Result<()> {
        const CALL: &str = "Kernel::launch_with";
        // The stream's device, current for the call and for the attributes' device checks.
        let _on_device = stream.make_current()?;
        config.check(CALL)?;
        let function = self.function()?;
        attributes.check(CALL, &config, function)?;
        let mut raw = attributes.raw();
        let owners = attributes.owners();
        let handle = self.launch_handle();
        self.queue(CALL, stream, &args, &owners, |pointers, uncaptured| {
            let entries = raw.as_mut_slice();
            if let (true, Some((kernel, handles))) = (uncaptured, handle) {
                // SAFETY: as in `launch`; `entries` are initialized attributes that live until
                // this call returns, their events alive (held by `attributes`).
                if unsafe {
                    driver_launch::launch(kernel, handles, stream, &config, entries, pointers.as_mut_ptr())
                } {
                    return (sys::cudaError::cudaSuccess, "cuLaunchKernelEx");
                }
            }
            let launch = sys::cudaLaunchConfig_t {
                gridDim: config.grid.into(),
                blockDim: config.block.into(),
                dynamicSmemBytes: config.shared_mem_bytes as usize,
                stream: stream.as_raw(),
                attrs: if entries.is_empty() { ptr::null_mut() } else { entries.as_mut_ptr() },
                numAttrs: entries.len() as u32,
            };
            // SAFETY: as in `launch` for `function`, `pointers`, the stream and the memory the
            // arguments reach. `launch.attrs` points at `entries.len()` initialized attributes
            // that live until this call returns; the events among them are alive (held by
            // `attributes`, borrowed for this call; CUDA keeps a recorded event's resources
            // until it completes, even if it is destroyed after).
            let status = unsafe { sys::cudaLaunchKernelExC(&launch, function, pointers.as_mut_ptr()) };
            (status, "cudaLaunchKernelExC")
        })
    }

    /// Queues a launch of this kernel with `args` through `launch` (handed the argument
    /// pointers, and whether no capture can record the launch, when it may go through the
    /// driver (see `driver_launch`); it returns CUDA's status and the call's name), under the
    /// capture gate:
    /// - while a capture may run (or a conditional handle is among the arguments), the
    ///   capture and handle checks of [`prepare_kernel_launch`], whose captured graph then
    ///   keeps the arguments' owners and `owners`;
    /// - on a non-blocking stream while stream-ordered buffers exist, those among the
    ///   arguments are marked, so that their drop waits for the device first.
    #[inline(always)]
    fn queue(
        &self, call: &'static str, stream: &Stream, args: &A, owners: &[KeepAlive],
        launch: impl FnOnce(&mut [*mut c_void], bool) -> (sys::cudaError_t, &'static str),
    ) -> Result<()> {
        // From the capture check until CUDA has the launch, no capture begins, ends or joins
        // this stream (see `capture_gate`): what the check sees is what the launch meets.
        let gate = enter_queue(call)?;
        // A launch recorded by stream capture runs whenever the graph runs, long after this
        // call: the captured graph must then own the buffers the arguments point into. A
        // conditional handle is allowed only when captured into its own graph. Both are
        // compile-time or two-relaxed-load checks on this crate's streams while no capture
        // runs; streams other code may capture ask CUDA each time (see `capture_gate`).
        let uncaptured = !(A::HAS_CONDITIONAL_HANDLE || capture_possible(stream));
        if !uncaptured {
            prepare_kernel_launch(call, &gate, stream, self, args, owners)?;
        }
        // A free queued on the legacy stream is not ordered after this launch on a
        // non-blocking stream: mark the stream-ordered buffers it uses, whose drop then waits
        // for the device. One branch (and a relaxed load on non-blocking streams) when no
        // such buffer exists. (The parameters' `keep_alive` hand out the allocations' own
        // owners, as `DevicePtr`'s does: `cudaMalloc` memory is freed after the device is
        // idle, stream-ordered memory behind the launch on the legacy stream or, marked here,
        // after the device is idle.) Buffers of another device than the stream's: one relaxed
        // load while all streams and memory are on one device.
        if crate::device::several_in_use() {
            check_argument_devices(call, stream, args)?;
        }
        if crate::memory::unordered_use_possible(stream) {
            let mut used = Vec::new();
            args.keep_alive(&mut used);
            crate::memory::note_unordered_uses(&used, stream);
        }
        let mut packed = args.pack();
        let mut pointers = A::pointers(&mut packed);
        let (status, cuda_call) = launch(pointers.as_mut(), uncaptured);
        if status != sys::cudaError::cudaSuccess {
            // The runtime also stored this error as the thread's last error. Take it out
            // (non-sticky launch errors clear; sticky ones stay, as CUDA intends) so that no
            // later `cudaGetLastError` reports this launch again. What it returns is this
            // launch's error (or an older one); the launch's own status is the one returned.
            crate::error::forget_last_error();
        }
        drop(gate);
        check(status, cuda_call)
    }
}

/// Refuses arguments in memory that `stream`'s device cannot reach (another device's, without
/// peer access) or bound to another device, naming both devices; notes the uses of other
/// devices' memory, whose drop then waits for `stream`'s device too.
#[cold]
#[inline(never)]
fn check_argument_devices<A: KernelArgs>(call: &'static str, stream: &Stream, args: &A) -> Result<()> {
    let mut owners = Vec::new();
    args.keep_alive(&mut owners);
    super::check_placement(call, args, &owners, stream.device())?;
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
/// - when captured, the captured graph keeps what the arguments point into, `extra` (the
///   events a launch attribute records) and the module of a kernel loaded at run time
///   ([`kernel_owners`](super::kernel_owners), which checks them against the stream's device).
#[cold]
#[inline(never)]
fn prepare_kernel_launch<A: KernelArgs>(
    call: &'static str, _gate: &QueueGuard, stream: &Stream, kernel: &Kernel<A>, args: &A,
    extra: &[KeepAlive],
) -> Result<()> {
    with_capture_sink(stream, call, |sink| {
        if A::HAS_CONDITIONAL_HANDLE {
            let lineage = match &sink {
                Some(Sink::Into { lineage, .. }) => Some(&**lineage),
                _ => None,
            };
            check_launch_handles(lineage, args)?;
        }
        if let Some(sink) = sink {
            let mut owners = extra.to_vec();
            owners.extend(super::kernel_owners(call, kernel, args, stream.device())?);
            sink.retain(owners, false);
        }
        Ok(())
    })
}
