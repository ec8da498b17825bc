//! The upload typestate: an exec instantiated for device launch is not launchable from a
//! kernel until it is uploaded, and only the uploaded state hands out [`DeviceGraph`] handles.
//!
//! ```text
//! Graph ──instantiate_for_device──▶ DeviceGraphExec ──upload──▶ UploadedGraphExec ──handle──▶ DeviceGraph<'_>
//!                                          ▲                          │                             │ arg()
//!                                          └──────── update / edit ───┘                             ▼
//!                                                 (refused while args live)                   DeviceGraphArg
//! ```
//!
//! Compile-time rules (borrow rules, proven by the `compile_fail` tests):
//! - no handle before upload: [`DeviceGraphExec`] has no `handle`;
//! - no handle after update: [`UploadedGraphExec::update`] takes the exec by value, which a
//!   live `DeviceGraph<'_>` (a borrow of it) forbids, and handles taken before cannot be used
//!   after;
//! - no exec dropped while a `DeviceGraph<'_>` lives;
//! - no handle from a host-launch exec: only this module makes `DeviceGraph`s, and only from
//!   execs instantiated with the device-launch flag (launching a host exec from the device is
//!   `cudaErrorIllegalAddress` on CUDA 13.0, which kills the context);
//! - no exec moved out of its owner: no `&mut GraphExec` leaves this module (the per-node
//!   setters are forwarded, see `edit.rs`), so `mem::replace` cannot leave kernels the handle
//!   of an exec parked for reuse or destroyed;
//! - no raw handle from safe code: [`DeviceGraph::as_raw`] (like `GraphExec::as_raw`) is
//!   `unsafe`, its contract the rules above, which a plain number cannot enforce.
//!
//! The one rule checked at run time: a [`DeviceGraphArg`] (what a kernel receives) is `'static`
//! and shares ownership of the exec, so graph nodes can hold it. While any exists (or a
//! [`DeviceGraphTable`](crate::DeviceGraphTable) holding the exec), `update` and `edit` refuse
//! with [`Error::HandlesOutstanding`]: a kernel could otherwise launch the exec from the device
//! after the update and before the next upload.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cuda_graph::graph::{DeviceLaunch, Graph, GraphExec, InstantiateOptions};
use cuda_graph::{Device, KeepAlive, KernelParam, Stream};

use crate::error::{Error, Result};
use crate::validate::validate;

mod edit;

/// Instantiates `graph` for device launch after [`validate`](crate::validate) has checked
/// that every node may be launched from the device (naming the first that may not).
///
/// The exec is not uploaded yet: [`DeviceGraphExec::upload`] it before kernels may launch it.
///
/// ```no_run
/// use cuda_graph::{graph::Graph, DeviceBuffer, Stream};
/// let data = DeviceBuffer::<u32>::zeroed(256)?;
/// let graph = Graph::new()?;
/// graph.add_memset(&data.ptr(), 7u32, 256, &[])?;
/// let stream = Stream::new()?;
/// let uploaded = device_launch::instantiate_for_device(&graph)?.upload(&stream)?;
/// let handle = uploaded.handle(); // what kernels launch
/// # Ok::<(), device_launch::Error>(())
/// ```
pub fn instantiate_for_device(graph: &Graph) -> Result<DeviceGraphExec> {
    validate(graph)?;
    let exec = graph.instantiate::<DeviceLaunch>(InstantiateOptions::default())?;
    Ok(DeviceGraphExec::from(exec))
}

/// Owns the exec for every state and every kernel argument made from it.
pub(crate) struct ExecOwner {
    /// Taken only by `drop`.
    exec: Option<Mutex<GraphExec<DeviceLaunch>>>,
    /// The `cudaGraphExec_t`, as kernels receive it.
    raw: u64,
    /// The exec's device (its graph's), which drop synchronizes and whose kernels alone may
    /// receive the handle.
    device: Device,
    /// Set once a [`DeviceGraphArg`] was made: kernels may have launched it since.
    given_to_kernels: AtomicBool,
}

impl ExecOwner {
    fn new(exec: GraphExec<DeviceLaunch>) -> ExecOwner {
        // SAFETY: the owner keeps the exec for its whole life and never moves it out (no
        // `&mut GraphExec` leaves this module); the value reaches kernels only through
        // `DeviceGraphArg`s and tables, which hold the owner (so update and edit refuse) and
        // mark it given to kernels (so edit and drop wait for the device first), or through
        // `DeviceGraph::as_raw`, whose caller promises the same.
        let raw = unsafe { exec.as_raw() } as u64;
        let device = exec.device();
        ExecOwner { exec: Some(Mutex::new(exec)), raw, device, given_to_kernels: AtomicBool::new(false) }
    }

    fn exec(&self) -> MutexGuard<'_, GraphExec<DeviceLaunch>> {
        let exec = self.exec.as_ref().expect("the exec is taken only when its owner is dropped");
        exec.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn exec_mut(&mut self) -> &mut GraphExec<DeviceLaunch> {
        let exec = self.exec.as_mut().expect("the exec is taken only when its owner is dropped");
        exec.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for every device launch of this exec that kernels may still have queued: the
    /// host cannot see on which stream, so it waits for the exec's device (made current for
    /// the wait, then the caller's current device again).
    fn wait_for_device_launches(&mut self) -> Result<()> {
        if !*self.given_to_kernels.get_mut() {
            return Ok(());
        }
        let device = self.device;
        device.with_current(|| device.synchronize())?;
        *self.given_to_kernels.get_mut() = false;
        Ok(())
    }
}

impl Drop for ExecOwner {
    fn drop(&mut self) {
        let Some(exec) = self.exec.take() else { return };
        let given_to_kernels = AtomicBool::new(*self.given_to_kernels.get_mut());
        let owner = ExecOwner { exec: Some(exec), raw: self.raw, device: self.device, given_to_kernels };
        // Inside a host function no CUDA call is allowed: wait and release on another thread
        // (where `owner` is dropped, and this runs again).
        let Some(mut owner) = cuda_graph::drop_outside_host_fn(owner) else { return };
        // A launch of a graph that held an argument of this exec may still be running (CUDA
        // orders work after an exec's host launches, but cannot know of device launches a
        // kernel has yet to make). `cuda-graph` parks the exec for reuse when it is dropped,
        // which must not happen while a kernel may still launch it: if the wait failed, the
        // exec is leaked instead.
        let exec = owner.exec.take();
        match owner.wait_for_device_launches() {
            Ok(()) => drop(exec),
            Err(err) => {
                record_drop_error(err);
                std::mem::forget(exec);
            }
        }
    }
}

static DROP_ERRORS: Mutex<Vec<Error>> = Mutex::new(Vec::new());

fn record_drop_error(err: Error) {
    DROP_ERRORS.lock().unwrap_or_else(PoisonError::into_inner).push(err);
}

/// Takes the errors that this crate's destructors met since the last call (a failed
/// `cudaDeviceSynchronize` when dropping an exec whose handle was given to kernels, say).
/// Drops never panic; they record here (and `cuda_graph::take_drop_errors` has the errors of
/// `cuda-graph`'s own destructors).
///
/// ```
/// for err in device_launch::take_drop_errors() {
///     eprintln!("while releasing a device graph: {err}");
/// }
/// ```
pub fn take_drop_errors() -> Vec<Error> {
    std::mem::take(&mut *DROP_ERRORS.lock().unwrap_or_else(PoisonError::into_inner))
}

/// An exec instantiated for device launch and not uploaded: kernels may not launch it yet,
/// so it hands out no [`DeviceGraph`]. Made by [`instantiate_for_device`] (or from any
/// `GraphExec<DeviceLaunch>`), and by [`UploadedGraphExec::update`] / `edit`.
///
/// Dropping an exec whose handle was given to kernels ([`DeviceGraph::arg`]) synchronizes
/// the device first (`cudaDeviceSynchronize`): a kernel may still be about to launch it.
///
/// ```no_run
/// # fn f(graph: &cuda_graph::graph::Graph, stream: &cuda_graph::Stream) -> device_launch::Result<()> {
/// let exec = device_launch::instantiate_for_device(graph)?;
/// let uploaded = exec.upload(stream)?;
/// # Ok(()) }
/// ```
pub struct DeviceGraphExec {
    owner: Box<ExecOwner>,
}

impl std::fmt::Debug for DeviceGraphExec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceGraphExec").field("raw", &format_args!("{:#x}", self.owner.raw)).finish()
    }
}

impl From<GraphExec<DeviceLaunch>> for DeviceGraphExec {
    /// Wraps an exec that `cuda-graph` instantiated for device launch (CUDA checked its nodes;
    /// [`instantiate_for_device`] names a refused node instead of CUDA's generic error).
    fn from(exec: GraphExec<DeviceLaunch>) -> DeviceGraphExec {
        DeviceGraphExec { owner: Box::new(ExecOwner::new(exec)) }
    }
}

impl DeviceGraphExec {
    /// Uploads the exec to the device on `stream` (`cudaGraphUpload`) and returns the state
    /// that hands out [`DeviceGraph`] handles. Kernels queued on `stream` after this call may
    /// launch it (other streams: order them after `stream`).
    ///
    /// ```no_run
    /// # fn f(exec: device_launch::DeviceGraphExec) -> device_launch::Result<()> {
    /// let stream = cuda_graph::Stream::new()?;
    /// let uploaded = exec.upload(&stream)?;
    /// let handle = uploaded.handle();
    /// # Ok(()) }
    /// ```
    pub fn upload(self, stream: &Stream) -> Result<UploadedGraphExec> {
        self.owner.exec().upload(stream)?;
        Ok(UploadedGraphExec { owner: Arc::new(*self.owner) })
    }

    /// Updates the exec from `graph` (validated first, then `cudaGraphExecUpdate`), staying
    /// not uploaded.
    ///
    /// ```no_run
    /// # fn f(exec: &mut device_launch::DeviceGraphExec, graph: &cuda_graph::graph::Graph) -> device_launch::Result<()> {
    /// exec.update(graph)?;
    /// # Ok(()) }
    /// ```
    pub fn update(&mut self, graph: &Graph) -> Result<()> {
        validate(graph)?;
        self.owner.exec_mut().update(graph)?;
        Ok(())
    }
}

/// An uploaded device-launch exec: the only state that hands out [`DeviceGraph`] handles.
///
/// It can also be launched from the host ([`launch`](UploadedGraphExec::launch)), as the
/// first launch of a self-relaunching graph needs. Dropping it while a `DeviceGraph<'_>`
/// lives does not compile; graph nodes hold [`DeviceGraphArg`]s, which keep the exec alive.
///
/// ```no_run
/// # fn f(graph: &cuda_graph::graph::Graph, stream: &cuda_graph::Stream) -> device_launch::Result<()> {
/// let uploaded = device_launch::instantiate_for_device(graph)?.upload(stream)?;
/// let arg = uploaded.handle().arg(); // a kernel argument (cudaGraphExec_t)
/// assert_eq!(uploaded.holders(), 1);
/// # Ok(()) }
/// ```
pub struct UploadedGraphExec {
    owner: Arc<ExecOwner>,
}

impl std::fmt::Debug for UploadedGraphExec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UploadedGraphExec")
            .field("raw", &format_args!("{:#x}", self.owner.raw))
            .field("holders", &self.holders())
            .finish()
    }
}

impl UploadedGraphExec {
    /// The handle kernels launch, borrowed from this exec: it cannot outlive it, nor be used
    /// after [`update`](UploadedGraphExec::update).
    ///
    /// ```no_run
    /// # fn f(uploaded: &device_launch::UploadedGraphExec) {
    /// let handle = uploaded.handle();
    /// let arg = handle.arg();
    /// # }
    /// ```
    pub fn handle(&self) -> DeviceGraph<'_> {
        DeviceGraph { owner: &self.owner }
    }

    /// Launches the exec from the host on `stream` (`cudaGraphLaunch`). CUDA allows one
    /// pending launch of an exec at a time: a kernel's device launch of it while this launch
    /// is pending is refused (`cudaErrorInvalidValue`, recorded in the error slot).
    ///
    /// ```no_run
    /// # fn f(uploaded: &device_launch::UploadedGraphExec, stream: &cuda_graph::Stream) -> device_launch::Result<()> {
    /// uploaded.launch(stream)?;
    /// stream.synchronize()?;
    /// # Ok(()) }
    /// ```
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        self.owner.exec().launch(stream)?;
        Ok(())
    }

    /// How many owners besides this exec hold it: live [`DeviceGraphArg`]s (in graph nodes,
    /// launches or your variables) and [`DeviceGraphTable`](crate::DeviceGraphTable)s.
    /// `update` and `edit` need 0.
    ///
    /// ```no_run
    /// # fn f(uploaded: &device_launch::UploadedGraphExec) {
    /// let arg = uploaded.handle().arg();
    /// assert_eq!(uploaded.holders(), 1);
    /// drop(arg);
    /// assert_eq!(uploaded.holders(), 0);
    /// # }
    /// ```
    pub fn holders(&self) -> usize {
        Arc::strong_count(&self.owner) - 1
    }

    /// Updates the exec from `graph` (validated, then `cudaGraphExecUpdate`) and returns it
    /// not uploaded: upload it again before kernels launch it. Handles taken before cannot be
    /// used after (they borrow `self`).
    ///
    /// Refused, with the exec given back unchanged in [`UpdateError::exec`], when `graph`
    /// fails validation or while [`holders`](UploadedGraphExec::holders) is not 0
    /// ([`Error::HandlesOutstanding`]: the run-time rule). If the exec's handle was ever
    /// given to kernels, the device is synchronized first (a graph holding it may have been
    /// dropped while its launch still runs). When CUDA refuses the update, the exec comes
    /// back not uploaded (CUDA may have changed some nodes).
    ///
    /// ```no_run
    /// # fn f(uploaded: device_launch::UploadedGraphExec, graph: &cuda_graph::graph::Graph, stream: &cuda_graph::Stream) -> device_launch::Result<()> {
    /// let uploaded = uploaded.update(graph)?.upload(stream)?;
    /// # Ok(()) }
    /// ```
    pub fn update(self, graph: &Graph) -> Result<DeviceGraphExec, UpdateError> {
        if let Err(error) = validate(graph) {
            return Err(UpdateError { error, exec: ExecState::Uploaded(self) });
        }
        let mut exec = self.edit()?;
        match exec.owner.exec_mut().update(graph) {
            Ok(()) => Ok(exec),
            Err(err) => Err(UpdateError { error: err.into(), exec: ExecState::NotUploaded(exec) }),
        }
    }

    /// Returns to the not-uploaded state without changing the exec, for per-node updates
    /// ([`DeviceGraphExec::set_memset`] and its siblings). Refused like [`update`](UploadedGraphExec::update)
    /// while holders remain; synchronizes the device when the handle was given to kernels.
    ///
    /// ```no_run
    /// # fn f(uploaded: device_launch::UploadedGraphExec, node: cuda_graph::graph::MemsetNode, data: &cuda_graph::DeviceBuffer<u32>, stream: &cuda_graph::Stream) -> device_launch::Result<()> {
    /// let mut exec = uploaded.edit()?;
    /// exec.set_memset(&node, &data.ptr(), 1u32, data.len())?;
    /// let uploaded = exec.upload(stream)?;
    /// # Ok(()) }
    /// ```
    pub fn edit(self) -> Result<DeviceGraphExec, UpdateError> {
        let mut owner = match Arc::try_unwrap(self.owner) {
            Ok(owner) => Box::new(owner),
            Err(owner) => {
                let holders = Arc::strong_count(&owner) - 1;
                return Err(UpdateError {
                    error: Error::HandlesOutstanding { holders },
                    exec: ExecState::Uploaded(UploadedGraphExec { owner }),
                });
            }
        };
        match owner.wait_for_device_launches() {
            Ok(()) => Ok(DeviceGraphExec { owner }),
            Err(error) => Err(UpdateError { error, exec: ExecState::NotUploaded(DeviceGraphExec { owner }) }),
        }
    }
}

/// A refused [`UploadedGraphExec::update`] or `edit`: why, and the exec back.
///
/// It converts into [`Error`] (dropping the exec), so `?` works in functions returning
/// [`Result`](crate::Result).
///
/// ```no_run
/// use device_launch::{Error, ExecState};
/// # fn f(uploaded: device_launch::UploadedGraphExec, graph: &cuda_graph::graph::Graph) {
/// match uploaded.update(graph) {
///     Ok(_not_uploaded) => {}
///     Err(refused) => {
///         assert!(matches!(refused.error, Error::HandlesOutstanding { .. }));
///         let ExecState::Uploaded(still_uploaded) = refused.exec else { panic!() };
///     }
/// }
/// # }
/// ```
#[derive(Debug)]
pub struct UpdateError {
    /// Why the update was refused.
    pub error: Error,
    /// The exec, in the state it is now in.
    pub exec: ExecState,
}

/// The state of an exec given back by an [`UpdateError`].
///
/// ```no_run
/// use device_launch::{instantiate_for_device, ExecState};
/// # let (graph, next, stream) = (cuda_graph::graph::Graph::new()?, cuda_graph::graph::Graph::new()?, cuda_graph::Stream::new()?);
/// let exec = instantiate_for_device(&graph)?.upload(&stream)?;
/// match exec.update(&next) {
///     Ok(not_uploaded) => drop(not_uploaded.upload(&stream)?),
///     Err(err) => match err.exec {
///         ExecState::Uploaded(still_usable) => drop(still_usable),
///         ExecState::NotUploaded(needs_upload) => drop(needs_upload.upload(&stream)?),
///     },
/// }
/// # Ok::<(), device_launch::Error>(())
/// ```
#[derive(Debug)]
pub enum ExecState {
    /// Unchanged and still uploaded (validation failed, or holders remain).
    Uploaded(UploadedGraphExec),
    /// Not uploaded: CUDA refused the update after perhaps changing some nodes, or the
    /// synchronization before it failed.
    NotUploaded(DeviceGraphExec),
}

/// A handle to an uploaded device-launch exec, borrowed from its [`UploadedGraphExec`]:
/// the `cudaGraphExec_t` a kernel launches. `Copy`; to pass it to a kernel, make it a
/// [`DeviceGraphArg`] with [`arg`](DeviceGraph::arg).
///
/// ```no_run
/// # fn f(uploaded: &device_launch::UploadedGraphExec) {
/// let handle = uploaded.handle();
/// let (a, b) = (handle, handle); // Copy
/// let (a, b) = (a.arg(), b.arg()); // two kernel arguments for the same exec
/// assert_eq!(uploaded.holders(), 2);
/// # }
/// ```
#[derive(Clone, Copy)]
pub struct DeviceGraph<'a> {
    owner: &'a Arc<ExecOwner>,
}

impl std::fmt::Debug for DeviceGraph<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceGraph({:#x})", self.owner.raw)
    }
}

impl<'a> DeviceGraph<'a> {
    /// The kernel argument for this graph: `'static`, it keeps the exec alive as long as the
    /// graph node or launch holding it, and makes [`UploadedGraphExec::update`] refuse until
    /// it is dropped.
    ///
    /// ```no_run
    /// # fn f(uploaded: &device_launch::UploadedGraphExec) {
    /// let arg: device_launch::DeviceGraphArg = uploaded.handle().arg();
    /// # }
    /// ```
    pub fn arg(self) -> DeviceGraphArg {
        self.given_to_kernels();
        DeviceGraphArg { owner: self.owner.clone() }
    }

    /// The raw `cudaGraphExec_t` as a number, for kernels and calls this crate does not
    /// check. Prefer [`arg`](DeviceGraph::arg), which keeps the exec alive and makes updates
    /// refuse while a kernel may launch it: the plain number does neither.
    ///
    /// # Safety
    /// A kernel (or anything else) that is given the value may launch the exec only while
    /// its [`UploadedGraphExec`] is alive, uploaded and unchanged: the caller must ensure that
    /// every such kernel, and the device launches it made, has completed before the exec is
    /// updated, edited ([`UploadedGraphExec::edit`]) or dropped, and that no copy of the value
    /// is used after. (Marking the exec as given to kernels makes edit and drop synchronize
    /// the device first, which covers kernels already queued, but not a copy of the number
    /// used later.) The value must not be destroyed or updated through raw calls.
    ///
    /// ```no_run
    /// # fn f(uploaded: &device_launch::UploadedGraphExec) {
    /// // SAFETY: the value is only compared, never given to a kernel.
    /// assert_ne!(unsafe { uploaded.handle().as_raw() }, 0);
    /// # }
    /// ```
    pub unsafe fn as_raw(self) -> u64 {
        self.given_to_kernels();
        self.owner.raw
    }

    /// The shared owner, for [`DeviceGraphTable`](crate::DeviceGraphTable).
    pub(crate) fn owner(self) -> &'a Arc<ExecOwner> {
        self.given_to_kernels();
        self.owner
    }

    /// The raw handle, for [`DeviceGraphTable`](crate::DeviceGraphTable), which takes the
    /// owner too (so marks the exec given to kernels and holds it).
    pub(crate) fn raw(self) -> u64 {
        self.owner.raw
    }

    /// The device the exec belongs to (its graph's): only kernels of that device may launch
    /// it, so launches and kernel nodes of another device refuse its [`DeviceGraphArg`].
    ///
    /// ```no_run
    /// # fn f(uploaded: &device_launch::UploadedGraphExec) -> cuda_graph::Result<()> {
    /// assert_eq!(uploaded.handle().device(), cuda_graph::Device::current()?);
    /// # Ok(()) }
    /// ```
    pub fn device(self) -> Device {
        self.owner.device
    }

    fn given_to_kernels(self) {
        self.owner.given_to_kernels.store(true, Ordering::Relaxed);
    }
}

/// A [`DeviceGraph`] as a kernel argument: the kernel receives the `cudaGraphExec_t`
/// (declare the parameter as `DeviceGraphArg` in `cuda_graph::kernels!`). It shares ownership
/// of the exec, so a graph node holding it keeps the exec alive; while any exists,
/// [`UploadedGraphExec::update`] refuses.
///
/// ```no_run
/// use cuda_graph::{graph::Graph, kernel::LaunchConfig, DevicePtr};
/// use device_launch::{DeviceGraphArg, RawErrorSlot};
/// # fn f(uploaded: &device_launch::UploadedGraphExec, slot: &device_launch::ErrorSlot) -> device_launch::Result<()> {
/// cuda_graph::kernels! {
///     unsafe fn dl_sibling_launch_one(graph: DeviceGraphArg, slot: DevicePtr<RawErrorSlot>);
/// }
/// let launcher = Graph::new()?;
/// launcher.add_kernel(dl_sibling_launch_one(), LaunchConfig::new(1, 1), (uploaded.handle().arg(), slot.ptr()), &[])?;
/// assert_eq!(uploaded.holders(), 1); // the node holds it
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct DeviceGraphArg {
    owner: Arc<ExecOwner>,
}

impl std::fmt::Debug for DeviceGraphArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceGraphArg({:#x})", self.owner.raw)
    }
}

/// A [`DeviceGraphArg`] as a kernel receives it (`cudaGraphExec_t`): opaque, so that
/// [`KernelParam::raw`] hands out no number that outlives the argument.
///
/// ```
/// assert_eq!(std::mem::size_of::<device_launch::RawDeviceGraph>(), 8);
/// ```
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct RawDeviceGraph(u64);

impl std::fmt::Debug for RawDeviceGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RawDeviceGraph(..)")
    }
}

// SAFETY: a `cudaGraphExec_t` is a pointer-sized opaque handle (8 bytes, 8-aligned on every
// CUDA platform), passed by value: exactly a transparent `u64`.
unsafe impl KernelParam for DeviceGraphArg {
    type Raw = RawDeviceGraph;
    fn raw(&self) -> RawDeviceGraph {
        RawDeviceGraph(self.owner.raw)
    }
    fn cpp_type() -> String {
        // `cudaGraphExec_t` is `struct CUgraphExec_st*`.
        "*mut CUgraphExec_st".to_string()
    }
    fn keep_alive(&self, owners: &mut Vec<KeepAlive>) {
        owners.push(self.owner.clone());
    }
    fn device(&self) -> Option<Device> {
        Some(self.owner.device)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn the_states_and_arguments_can_cross_threads() {
        assert_send_sync::<UploadedGraphExec>();
        assert_send_sync::<DeviceGraphArg>();
        assert_send_sync::<DeviceGraph<'static>>();
        fn assert_send<T: Send>() {}
        assert_send::<DeviceGraphExec>();
    }

    #[test]
    fn a_device_graph_argument_is_a_pointer_sized_parameter() {
        use cuda_graph::KernelArgs;
        let layout = <(DeviceGraphArg, u32)>::layout();
        assert_eq!((layout[0].size, layout[0].align), (8, 8));
    }
}
