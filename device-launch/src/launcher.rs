//! Running a launcher kernel (one that launches graphs from the device) the only way CUDA
//! allows: inside a graph.
//!
//! On CUDA 13.0 a kernel that calls device-side `cudaGraphLaunch`, launched on a plain stream,
//! never runs: the launch fails with `cudaErrorNotSupported` (801). [`Launcher`] wraps the
//! kernel in a one-node graph instead, instantiated for device launch (so the kernel may also
//! tail-launch its own graph with `DL_RELAUNCH_SELF`) and launched from the host.
//! [`run_on_plain_stream`] exists to explain the failure, not to work around it.

use cuda_graph::graph::{DeviceLaunch, Graph, GraphExec, KernelNode};
use cuda_graph::kernel::{Kernel, KernelArgs, LaunchConfig};
use cuda_graph::{CudaError, Stream};

use crate::error::{Error, Result};
use crate::error_slot::ErrorSlot;

/// `cudaErrorNotSupported`.
const NOT_SUPPORTED: i32 = 801;

/// A launcher kernel in its own one-kernel graph, ready to launch from the host.
///
/// The graph is instantiated with the device-launch flag: a kernel node is device-launchable,
/// and the flag lets the kernel relaunch its own graph (`DL_RELAUNCH_SELF`). The graph owns
/// its arguments (including [`DeviceExecArg`](crate::DeviceExecArg)s), so the graphs the
/// kernel launches stay alive with the launcher.
///
/// ```no_run
/// use cuda_graph::{kernel::LaunchConfig, DeviceBuffer, Stream};
/// use device_launch::{ErrorSlot, Launcher};
/// let stream = Stream::new()?;
/// let slot = ErrorSlot::new()?;
/// let steps = DeviceBuffer::<u32>::zeroed(1)?;
/// // dl_relaunch_until(steps, limit, slot): counts a step, relaunches itself until `limit`.
/// let launcher = Launcher::new(
///     device_launch_kernels::dl_relaunch_until(),
///     LaunchConfig::new(1, 1),
///     (steps.ptr(), 1000, slot.ptr()),
/// )?;
/// launcher.run(&stream, &slot)?; // launch, synchronize, then Err if a device launch failed
/// assert_eq!(steps.to_vec()?, [1000]);
/// # Ok::<(), device_launch::Error>(())
/// ```
pub struct Launcher<A: KernelArgs> {
    kernel: &'static Kernel<A>,
    node: KernelNode,
    exec: GraphExec<DeviceLaunch>,
}

impl<A: KernelArgs> std::fmt::Debug for Launcher<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launcher").field("kernel", &self.kernel.name()).finish()
    }
}

impl<A: KernelArgs> Launcher<A> {
    /// Builds the one-kernel graph around `kernel` with `config` and `args`, and instantiates it.
    ///
    /// ```no_run
    /// # fn f(table: &device_launch::DeviceExecTable, slot: &device_launch::ErrorSlot) -> device_launch::Result<()> {
    /// let accepted = cuda_graph::DeviceBuffer::<u32>::zeroed(1)?;
    /// let launcher = device_launch::Launcher::new(
    ///     device_launch_kernels::dl_fire_and_forget_all(),
    ///     cuda_graph::kernel::LaunchConfig::new(1, 1),
    ///     (table.arg(), table.len() as u32, accepted.ptr(), slot.ptr()),
    /// )?;
    /// # Ok(()) }
    /// ```
    pub fn new(kernel: &'static Kernel<A>, config: LaunchConfig, args: A) -> Result<Launcher<A>> {
        let graph = Graph::new()?;
        let node = graph.add_kernel(kernel, config, args, &[])?;
        let exec = graph.instantiate::<DeviceLaunch>(Default::default())?;
        Ok(Launcher { kernel, node, exec })
    }

    /// Uploads the launcher's graph on `stream` (`cudaGraphUpload`), so that the first launch
    /// does not pay for it (a launch uploads it otherwise).
    ///
    /// ```no_run
    /// # fn f(launcher: &device_launch::Launcher<()>, stream: &cuda_graph::Stream) -> device_launch::Result<()> {
    /// launcher.upload(stream)?;
    /// launcher.launch(stream)?;
    /// # Ok(()) }
    /// ```
    pub fn upload(&self, stream: &Stream) -> Result<()> {
        self.exec.upload(stream)?;
        Ok(())
    }

    /// Queues the launcher's graph on `stream` (which also uploads it). Launches of one
    /// launcher run one after another.
    ///
    /// ```no_run
    /// # fn f(launcher: &device_launch::Launcher<()>, stream: &cuda_graph::Stream) -> device_launch::Result<()> {
    /// launcher.launch(stream)?;
    /// stream.synchronize()?;
    /// # Ok(()) }
    /// ```
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        self.exec.launch(stream)?;
        Ok(())
    }

    /// Launches, synchronizes `stream`, then reads `slot` (the kernels' error slot):
    /// [`Error::Device`] when a device-side launch failed. Fire-and-forget and tail launches
    /// belong to the launching graph, so the stream's synchronization waits for them.
    ///
    /// ```no_run
    /// # fn f(launcher: &device_launch::Launcher<()>, stream: &cuda_graph::Stream, slot: &device_launch::ErrorSlot) {
    /// if let Err(err) = launcher.run(stream, slot) {
    ///     eprintln!("{err}"); // e.g. past limits::FIRE_AND_FORGET_LIMIT fire-and-forget launches
    /// }
    /// # }
    /// ```
    pub fn run(&self, stream: &Stream, slot: &ErrorSlot) -> Result<()> {
        self.launch(stream)?;
        stream.synchronize()?;
        slot.check()??;
        Ok(())
    }

    /// Changes the kernel's configuration and arguments for later launches
    /// (`cudaGraphExecKernelNodeSetParams`). Waits first for the last launch, and with it for
    /// every relaunch of itself the kernel made (`DL_RELAUNCH_SELF`): CUDA leaves changing an
    /// exec the device may still be launching undefined.
    ///
    /// ```no_run
    /// # fn f(launcher: &mut device_launch::Launcher<()>) -> device_launch::Result<()> {
    /// launcher.set_args(cuda_graph::kernel::LaunchConfig::new(1, 32), ())?;
    /// # Ok(()) }
    /// ```
    pub fn set_args(&mut self, config: LaunchConfig, args: A) -> Result<()> {
        self.exec.set_kernel_params(&self.node, self.kernel, config, args)?;
        Ok(())
    }

    /// The launcher's exec (launchable from the host, and from the device by the kernel
    /// itself through `cudaGetCurrentGraphExec`).
    pub fn exec(&self) -> &GraphExec<DeviceLaunch> {
        &self.exec
    }
}

/// Builds a [`Launcher`] around `kernel` and launches it on `stream`; the returned launcher
/// keeps the graph (and what it launches) alive and can be launched again.
///
/// ```no_run
/// use cuda_graph::{kernel::LaunchConfig, DeviceBuffer, Stream};
/// # fn f(uploaded: &device_launch::DeviceExec<device_launch::Uploaded>) -> device_launch::Result<()> {
/// let (stream, slot) = (Stream::new()?, device_launch::ErrorSlot::new()?);
/// let launcher = device_launch::launch_from_graph(
///     device_launch_kernels::dl_sibling_launch_one(),
///     LaunchConfig::new(1, 1),
///     (uploaded.handle().arg(), slot.ptr()),
///     &stream,
/// )?;
/// stream.synchronize()?;
/// slot.check()??;
/// # Ok(()) }
/// ```
pub fn launch_from_graph<A: KernelArgs>(
    kernel: &'static Kernel<A>, config: LaunchConfig, args: A, stream: &Stream,
) -> Result<Launcher<A>> {
    let launcher = Launcher::new(kernel, config, args)?;
    launcher.launch(stream)?;
    Ok(launcher)
}

/// Launches `kernel` on `stream` as a plain stream launch and synchronizes. For a kernel
/// that launches graphs from the device, CUDA 13.0 refuses this launch with
/// `cudaErrorNotSupported` (801) and the kernel never runs: that comes back as
/// [`Error::LauncherNotInGraph`], which explains the rule, instead of a bare 801. Use
/// [`launch_from_graph`] instead; this exists for diagnosis and for kernels that launch none.
///
/// ```no_run
/// use device_launch::Error;
/// # fn f(args: (device_launch::DeviceExecArg, cuda_graph::DevicePtr<device_launch::RawErrorSlot>), stream: &cuda_graph::Stream) {
/// let kernel = device_launch_kernels::dl_sibling_launch_one();
/// match device_launch::run_on_plain_stream(kernel, cuda_graph::kernel::LaunchConfig::new(1, 1), args, stream) {
///     Err(Error::LauncherNotInGraph { .. }) => {} // "… must itself run inside a graph …"
///     other => println!("{other:?}"),
/// }
/// # }
/// ```
pub fn run_on_plain_stream<A: KernelArgs>(
    kernel: &'static Kernel<A>, config: LaunchConfig, args: A, stream: &Stream,
) -> Result<()> {
    let explain = |err: CudaError| explain_not_in_graph(kernel.name(), err);
    kernel.launch(stream, config, args).map_err(explain)?;
    stream.synchronize().map_err(explain)
}

/// Maps CUDA's 801 for `kernel` to [`Error::LauncherNotInGraph`]; other errors pass through.
pub(crate) fn explain_not_in_graph(kernel: &'static str, err: CudaError) -> Error {
    if err.code() == Some(NOT_SUPPORTED) {
        Error::LauncherNotInGraph { kernel, source: err }
    } else {
        Error::Cuda(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_not_supported_launch_is_explained_and_others_pass_through() {
        let err = explain_not_in_graph("scheduler", CudaError::from_code(801, "cudaLaunchKernel"));
        let text = err.to_string();
        assert!(
            text.contains("kernel `scheduler`") && text.contains("must itself run inside a graph"),
            "{text}"
        );
        assert!(text.contains("launch_from_graph") && text.contains("cudaErrorNotSupported (801)"), "{text}");
        assert_eq!(err.code(), Some(801));
        let other = explain_not_in_graph("scheduler", CudaError::from_code(2, "cudaLaunchKernel"));
        assert!(matches!(other, Error::Cuda(_)));
    }
}
