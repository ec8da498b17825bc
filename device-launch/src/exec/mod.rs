//! The upload typestate: [`DeviceExec<S>`](DeviceExec), an exec instantiated for device
//! launch, is [`NotUploaded`] until [`upload`](DeviceExec::upload) makes it [`Uploaded`], and
//! only an uploaded exec hands out [`DeviceExecHandle`]s, the handles kernels launch.
//!
//! ```text
//! Graph ──instantiate_for_device──▶ DeviceExec<NotUploaded> ──upload──▶ DeviceExec<Uploaded> ──handle──▶ DeviceExecHandle<'_>
//!                                          ▲                                  │                               │ arg()
//!                                          └──────────── update / edit ───────┘                               ▼
//!                                                  (refused while args live)                            DeviceExecArg
//! ```
//!
//! Compile-time rules (borrow rules, proven by the `compile_fail` tests):
//! - no handle before upload: [`handle`](DeviceExec::handle) needs the [`Uploaded`] state
//!   (the compiler says to call `upload` first);
//! - no handle after update: [`DeviceExec::<Uploaded>::update`] takes the exec by value, which a
//!   live `DeviceExecHandle<'_>` (a borrow of it) forbids, and handles taken before cannot be
//!   used after;
//! - no exec dropped while a `DeviceExecHandle<'_>` lives;
//! - no handle from a host-launch exec: only this module makes `DeviceExecHandle`s, and only
//!   from execs instantiated with the device-launch flag (launching a host exec from the device
//!   is `cudaErrorIllegalAddress` on CUDA 13.0, which kills the context);
//! - no exec moved out of its owner: no `&mut GraphExec` leaves this module (the per-node
//!   setters are forwarded, see `edit.rs`), so `mem::replace` cannot leave kernels the handle
//!   of an exec parked for reuse or destroyed;
//! - no raw handle from safe code: [`DeviceExecHandle::as_raw`] (like `GraphExec::as_raw`) is
//!   `unsafe`, its contract the rules above, which a plain number cannot enforce.
//!
//! The one rule checked at run time: a [`DeviceExecArg`] (what a kernel receives) is `'static`
//! and shares ownership of the exec, so graph nodes can hold it. While any exists (or a
//! [`DeviceExecTable`](crate::DeviceExecTable) holding the exec), `update` and `edit` refuse
//! with [`Error::HandlesOutstanding`]: a kernel could otherwise launch the exec from the device
//! after the update and before the next upload.

use std::marker::PhantomData;
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
/// The exec is not uploaded yet (a `DeviceExec<NotUploaded>`): [`upload`](DeviceExec::upload)
/// it before kernels may launch it.
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
pub fn instantiate_for_device(graph: &Graph) -> Result<DeviceExec<NotUploaded>> {
    validate(graph)?;
    let exec = graph.instantiate::<DeviceLaunch>(InstantiateOptions::default())?;
    Ok(DeviceExec::from(exec))
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
    /// Set once a [`DeviceExecArg`] was made: kernels may have launched it since.
    given_to_kernels: AtomicBool,
}

impl ExecOwner {
    fn new(exec: GraphExec<DeviceLaunch>) -> ExecOwner {
        // SAFETY: the owner keeps the exec for its whole life and never moves it out (no
        // `&mut GraphExec` leaves this module); the value reaches kernels only through
        // `DeviceExecArg`s and tables, which hold the owner (so update and edit refuse) and
        // mark it given to kernels (so edit and drop wait for the device first), or through
        // `DeviceExecHandle::as_raw`, whose caller promises the same.
        let raw = unsafe { exec.as_raw() } as u64;
        let device = exec.device();
        ExecOwner { exec: Some(Mutex::new(exec)), raw, device, given_to_kernels: AtomicBool::new(false) }
    }

    fn exec(&self) -> MutexGuard<'_, GraphExec<DeviceLaunch>> {
        let exec = self.exec.as_ref().expect("the exec is taken only when its owner is dropped");
        exec.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for every device launch of this exec that kernels may still have queued: the
    /// host cannot see on which stream, so it waits for the exec's device (made current for
    /// the wait, then the caller's current device again).
    fn wait_for_device_launches(&mut self) -> cuda_graph::Result<()> {
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
                // Kept with every other destructor's error: `cuda_graph::take_unreported_errors`.
                cuda_graph::record_unreported_error(err);
                std::mem::forget(exec);
            }
        }
    }
}

mod sealed {
    /// Implemented by the two states only; `NAME` is how `Debug` spells the state.
    pub trait Sealed {
        const NAME: &'static str;
    }
}

/// The state of a [`DeviceExec`]: [`NotUploaded`] or [`Uploaded`] (sealed).
///
/// ```
/// use device_launch::{DeviceExec, NotUploaded, Uploaded};
/// fn takes_either<S: device_launch::UploadState>(_exec: &DeviceExec<S>) {}
/// # let _ = takes_either::<NotUploaded>;
/// # let _ = takes_either::<Uploaded>;
/// ```
pub trait UploadState: sealed::Sealed + Send + Sync + 'static {}

/// Not uploaded yet, so kernels may not launch it: call [`upload`](DeviceExec::upload) to get
/// the [`Uploaded`] exec, whose [`handle`](DeviceExec::handle)s kernels launch.
///
/// ```no_run
/// use device_launch::{DeviceExec, NotUploaded, Uploaded};
/// # fn f(graph: &cuda_graph::graph::Graph, stream: &cuda_graph::Stream) -> device_launch::Result<()> {
/// let exec: DeviceExec<NotUploaded> = device_launch::instantiate_for_device(graph)?;
/// let exec: DeviceExec<Uploaded> = exec.upload(stream)?;
/// let arg = exec.handle().arg(); // for a kernel
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub enum NotUploaded {}

/// Uploaded: kernels may launch it through its [`handle`](DeviceExec::handle)s, and the host
/// through [`launch`](DeviceExec::launch).
///
/// ```no_run
/// # fn f(exec: &device_launch::DeviceExec<device_launch::Uploaded>) {
/// let arg = exec.handle().arg();
/// # }
/// ```
#[derive(Debug)]
pub enum Uploaded {}

impl sealed::Sealed for NotUploaded {
    const NAME: &'static str = "NotUploaded";
}
impl sealed::Sealed for Uploaded {
    const NAME: &'static str = "Uploaded";
}
impl UploadState for NotUploaded {}
impl UploadState for Uploaded {}

/// The states whose execs may be launched, by kernels ([`DeviceExec::handle`]) or from the
/// host ([`DeviceExec::launch`]): [`Uploaded`] only. A `DeviceExec<NotUploaded>` has those
/// methods too, so that calling one fails to compile saying to call `upload` first.
///
/// ```compile_fail
/// # fn f(graph: &cuda_graph::graph::Graph) -> device_launch::Result<()> {
/// let exec = device_launch::instantiate_for_device(graph)?;
/// let handle = exec.handle(); // error: call `.upload(&stream)?` first
/// # Ok(()) }
/// ```
#[diagnostic::on_unimplemented(
    message = "only an uploaded exec is launched: call `.upload(&stream)?` on this `DeviceExec<{Self}>` first",
    label = "needs a `DeviceExec<Uploaded>`",
    note = "`upload` gives the `DeviceExec<Uploaded>` that kernels launch through its handles: \
            `let exec = device_launch::instantiate_for_device(&graph)?.upload(&stream)?;`"
)]
pub trait Launchable: UploadState {}
impl Launchable for Uploaded {}

/// An exec instantiated for device launch, in upload state `S`: kernels may launch it only
/// once uploaded, so call [`upload`](DeviceExec::upload) to get the `DeviceExec<Uploaded>`
/// whose [`handle`](DeviceExec::handle)s kernels launch.
///
/// - `DeviceExec<`[`NotUploaded`]`>`: made by [`instantiate_for_device`] (or from any
///   `GraphExec<DeviceLaunch>`), and by `update` / `edit` of an uploaded one. It can be
///   updated ([`update`](DeviceExec::<NotUploaded>::update), per-node setters such as
///   [`set_memset`](DeviceExec::set_memset)) and [`upload`](DeviceExec::upload)ed; it hands out
///   no handle.
/// - `DeviceExec<`[`Uploaded`]`>`: the only state with [`handle`](DeviceExec::handle)s, which
///   kernels launch, and with [`launch`](DeviceExec::launch) from the host (as the first launch
///   of a self-relaunching graph needs). [`update`](DeviceExec::<Uploaded>::update) and
///   [`edit`](DeviceExec::edit) take it back to not uploaded.
///
/// Dropping an exec while a [`DeviceExecHandle`] borrowed from it lives does not compile;
/// graph nodes hold [`DeviceExecArg`]s, which keep the exec alive. Dropping an exec whose
/// handle was given to kernels ([`DeviceExecHandle::arg`]) synchronizes the device first
/// (`cudaDeviceSynchronize`): a kernel may still be about to launch it.
///
/// ```no_run
/// # fn f(graph: &cuda_graph::graph::Graph, stream: &cuda_graph::Stream) -> device_launch::Result<()> {
/// let exec = device_launch::instantiate_for_device(graph)?; // DeviceExec<NotUploaded>
/// let uploaded = exec.upload(stream)?; // DeviceExec<Uploaded>
/// let arg = uploaded.handle().arg(); // a kernel argument (cudaGraphExec_t)
/// assert_eq!(uploaded.holders(), 1);
/// # Ok(()) }
/// ```
pub struct DeviceExec<S: UploadState> {
    /// Shared with the exec's [`DeviceExecArg`]s and tables in the `Uploaded` state; the only
    /// owner in the `NotUploaded` state (only an uploaded exec makes arguments, and `edit`
    /// leaves that state only when none is left).
    owner: Arc<ExecOwner>,
    state: PhantomData<S>,
}

impl<S: UploadState> std::fmt::Debug for DeviceExec<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = format!("DeviceExec<{}>", S::NAME);
        f.debug_struct(&name)
            .field("raw", &format_args!("{:#x}", self.owner.raw))
            .field("holders", &(Arc::strong_count(&self.owner) - 1))
            .finish()
    }
}

impl From<GraphExec<DeviceLaunch>> for DeviceExec<NotUploaded> {
    /// Wraps an exec that `cuda-graph` instantiated for device launch (CUDA checked its nodes;
    /// [`instantiate_for_device`] names a refused node instead of CUDA's generic error).
    fn from(exec: GraphExec<DeviceLaunch>) -> DeviceExec<NotUploaded> {
        DeviceExec::with_owner(Arc::new(ExecOwner::new(exec)))
    }
}

impl<S: UploadState> DeviceExec<S> {
    fn with_owner(owner: Arc<ExecOwner>) -> DeviceExec<S> {
        DeviceExec { owner, state: PhantomData }
    }

    /// The handle kernels launch, borrowed from this exec: it cannot outlive it, nor be used
    /// after [`update`](DeviceExec::<Uploaded>::update). Only a `DeviceExec<Uploaded>` has
    /// one: on a `DeviceExec<NotUploaded>` this does not compile, and the compiler says to
    /// call [`upload`](DeviceExec::upload) first.
    ///
    /// ```no_run
    /// # fn f(uploaded: &device_launch::DeviceExec<device_launch::Uploaded>) {
    /// let handle = uploaded.handle();
    /// let arg = handle.arg();
    /// # }
    /// ```
    pub fn handle(&self) -> DeviceExecHandle<'_>
    where
        S: Launchable,
    {
        DeviceExecHandle { owner: &self.owner }
    }

    /// Launches the exec from the host on `stream` (`cudaGraphLaunch`). CUDA allows one
    /// pending launch of an exec at a time: a kernel's device launch of it while this launch
    /// is pending is refused (`cudaErrorInvalidValue`, recorded in the error slot). Only a
    /// `DeviceExec<Uploaded>` launches: [`upload`](DeviceExec::upload) first.
    ///
    /// ```no_run
    /// # fn f(uploaded: &device_launch::DeviceExec<device_launch::Uploaded>, stream: &cuda_graph::Stream) -> device_launch::Result<()> {
    /// uploaded.launch(stream)?;
    /// stream.synchronize()?;
    /// # Ok(()) }
    /// ```
    pub fn launch(&self, stream: &Stream) -> Result<()>
    where
        S: Launchable,
    {
        self.owner.exec().launch(stream)?;
        Ok(())
    }
}

impl DeviceExec<NotUploaded> {
    /// Uploads the exec to the device on `stream` (`cudaGraphUpload`) and returns the
    /// `DeviceExec<Uploaded>` that hands out [`handle`](DeviceExec::handle)s. Kernels queued on
    /// `stream` after this call may launch it (other streams: order them after `stream`).
    ///
    /// ```no_run
    /// # fn f(exec: device_launch::DeviceExec<device_launch::NotUploaded>) -> device_launch::Result<()> {
    /// let stream = cuda_graph::Stream::new()?;
    /// let uploaded = exec.upload(&stream)?;
    /// let handle = uploaded.handle();
    /// # Ok(()) }
    /// ```
    pub fn upload(self, stream: &Stream) -> Result<DeviceExec<Uploaded>> {
        self.owner.exec().upload(stream)?;
        Ok(DeviceExec::with_owner(self.owner))
    }

    /// Updates the exec from `graph` (validated first, then `cudaGraphExecUpdate`), staying
    /// not uploaded.
    ///
    /// ```no_run
    /// # fn f(exec: &mut device_launch::DeviceExec<device_launch::NotUploaded>, graph: &cuda_graph::graph::Graph) -> device_launch::Result<()> {
    /// exec.update(graph)?;
    /// # Ok(()) }
    /// ```
    pub fn update(&mut self, graph: &Graph) -> Result<()> {
        validate(graph)?;
        self.owner.exec().update(graph)?;
        Ok(())
    }
}

impl DeviceExec<Uploaded> {
    /// How many owners besides this exec hold it: live [`DeviceExecArg`]s (in graph nodes,
    /// launches or your variables) and [`DeviceExecTable`](crate::DeviceExecTable)s.
    /// `update` and `edit` need 0.
    ///
    /// ```no_run
    /// # fn f(uploaded: &device_launch::DeviceExec<device_launch::Uploaded>) {
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
    /// fails validation or while [`holders`](DeviceExec::holders) is not 0
    /// ([`Error::HandlesOutstanding`]: the run-time rule). If the exec's handle was ever
    /// given to kernels, the device is synchronized first (a graph holding it may have been
    /// dropped while its launch still runs). When CUDA refuses the update, the exec comes
    /// back not uploaded (CUDA may have changed some nodes).
    ///
    /// ```no_run
    /// # fn f(uploaded: device_launch::DeviceExec<device_launch::Uploaded>, graph: &cuda_graph::graph::Graph, stream: &cuda_graph::Stream) -> device_launch::Result<()> {
    /// let uploaded = uploaded.update(graph)?.upload(stream)?;
    /// # Ok(()) }
    /// ```
    pub fn update(self, graph: &Graph) -> Result<DeviceExec<NotUploaded>, UpdateError> {
        if let Err(error) = validate(graph) {
            return Err(UpdateError { error, exec: ExecState::Uploaded(self) });
        }
        let exec = self.edit()?;
        let updated = exec.owner.exec().update(graph);
        match updated {
            Ok(()) => Ok(exec),
            Err(err) => Err(UpdateError { error: err.into(), exec: ExecState::NotUploaded(exec) }),
        }
    }

    /// Returns to the not-uploaded state without changing the exec, for per-node updates
    /// ([`DeviceExec::set_memset`] and its siblings). Refused like
    /// [`update`](DeviceExec::<Uploaded>::update) while holders remain; synchronizes the
    /// device when the handle was given to kernels.
    ///
    /// ```no_run
    /// # fn f(uploaded: device_launch::DeviceExec<device_launch::Uploaded>, node: cuda_graph::graph::MemsetNode, data: &cuda_graph::DeviceBuffer<u32>, stream: &cuda_graph::Stream) -> device_launch::Result<()> {
    /// let mut exec = uploaded.edit()?;
    /// exec.set_memset(&node, &data.ptr(), 1u32, data.len())?;
    /// let uploaded = exec.upload(stream)?;
    /// # Ok(()) }
    /// ```
    pub fn edit(mut self) -> Result<DeviceExec<NotUploaded>, UpdateError> {
        let Some(owner) = Arc::get_mut(&mut self.owner) else {
            let holders = self.holders();
            return Err(UpdateError {
                error: Error::HandlesOutstanding { holders },
                exec: ExecState::Uploaded(self),
            });
        };
        // The only owner: no argument or table of the exec is left, and none can be made
        // until it is uploaded again.
        // If the wait fails (inside a host function, say), kernels may still launch the exec:
        // it stays uploaded and unchanged, still marked as given to kernels, so the next
        // `edit` waits again.
        if let Err(error) = owner.wait_for_device_launches() {
            return Err(UpdateError { error: error.into(), exec: ExecState::Uploaded(self) });
        }
        Ok(DeviceExec::with_owner(self.owner))
    }
}

/// A refused [`DeviceExec::<Uploaded>::update`] or `edit`: why, and the exec back.
///
/// It converts into [`Error`] (dropping the exec), so `?` works in functions returning
/// [`Result`](crate::Result).
///
/// ```no_run
/// use device_launch::{Error, ExecState};
/// # fn f(uploaded: device_launch::DeviceExec<device_launch::Uploaded>, graph: &cuda_graph::graph::Graph) {
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

impl std::fmt::Display for UpdateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for UpdateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl From<UpdateError> for Error {
    fn from(err: UpdateError) -> Error {
        err.error
    }
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
    /// Unchanged and still uploaded (validation failed, holders remain, or the wait for the
    /// device launches kernels may still make failed).
    Uploaded(DeviceExec<Uploaded>),
    /// Not uploaded: CUDA refused the update after perhaps changing some nodes.
    NotUploaded(DeviceExec<NotUploaded>),
}

/// The handle kernels launch, borrowed from a [`DeviceExec<Uploaded>`](DeviceExec) (its
/// [`handle`](DeviceExec::handle)): the exec's `cudaGraphExec_t`. `Copy`; to pass it to a
/// kernel, make it a [`DeviceExecArg`] with [`arg`](DeviceExecHandle::arg).
///
/// ```no_run
/// # fn f(uploaded: &device_launch::DeviceExec<device_launch::Uploaded>) {
/// let handle = uploaded.handle();
/// let (a, b) = (handle, handle); // Copy
/// let (a, b) = (a.arg(), b.arg()); // two kernel arguments for the same exec
/// assert_eq!(uploaded.holders(), 2);
/// # }
/// ```
#[derive(Clone, Copy)]
pub struct DeviceExecHandle<'a> {
    owner: &'a Arc<ExecOwner>,
}

impl std::fmt::Debug for DeviceExecHandle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceExecHandle({:#x})", self.owner.raw)
    }
}

impl<'a> DeviceExecHandle<'a> {
    /// The kernel argument for this exec: `'static`, it keeps the exec alive as long as the
    /// graph node or launch holding it, and makes [`DeviceExec::<Uploaded>::update`] refuse
    /// until it is dropped.
    ///
    /// ```no_run
    /// # fn f(uploaded: &device_launch::DeviceExec<device_launch::Uploaded>) {
    /// let arg: device_launch::DeviceExecArg = uploaded.handle().arg();
    /// # }
    /// ```
    pub fn arg(self) -> DeviceExecArg {
        self.given_to_kernels();
        DeviceExecArg { owner: self.owner.clone() }
    }

    /// The raw `cudaGraphExec_t` as a number, for kernels and calls this crate does not
    /// check. Prefer [`arg`](DeviceExecHandle::arg), which keeps the exec alive and makes
    /// updates refuse while a kernel may launch it: the plain number does neither.
    ///
    /// # Safety
    /// A kernel (or anything else) that is given the value may launch the exec only while
    /// its [`DeviceExec<Uploaded>`](DeviceExec) is alive, uploaded and unchanged: the caller
    /// must ensure that every such kernel, and the device launches it made, has completed
    /// before the exec is updated, edited ([`DeviceExec::edit`]) or dropped, and that no copy
    /// of the value is used after. (Marking the exec as given to kernels makes edit and drop
    /// synchronize the device first, which covers kernels already queued, but not a copy of
    /// the number used later.) The value must not be destroyed or updated through raw calls.
    ///
    /// ```no_run
    /// # fn f(uploaded: &device_launch::DeviceExec<device_launch::Uploaded>) {
    /// // SAFETY: the value is only compared, never given to a kernel.
    /// assert_ne!(unsafe { uploaded.handle().as_raw() }, 0);
    /// # }
    /// ```
    pub unsafe fn as_raw(self) -> u64 {
        self.given_to_kernels();
        self.owner.raw
    }

    /// The shared owner, for [`DeviceExecTable`](crate::DeviceExecTable).
    pub(crate) fn owner(self) -> &'a Arc<ExecOwner> {
        self.given_to_kernels();
        self.owner
    }

    /// The raw handle, for [`DeviceExecTable`](crate::DeviceExecTable), which takes the
    /// owner too (so marks the exec given to kernels and holds it).
    pub(crate) fn raw(self) -> u64 {
        self.owner.raw
    }

    /// The device the exec belongs to (its graph's): only kernels of that device may launch
    /// it, so launches and kernel nodes of another device refuse its [`DeviceExecArg`].
    ///
    /// ```no_run
    /// # fn f(uploaded: &device_launch::DeviceExec<device_launch::Uploaded>) -> cuda_graph::Result<()> {
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

/// An uploaded exec as a kernel argument (from [`DeviceExecHandle::arg`]): the kernel
/// receives the `cudaGraphExec_t` (declare the parameter as `DeviceExecArg` in
/// `cuda_graph::kernels!`, as `cudaGraphExec_t` in C++). It shares ownership of the exec, so a
/// graph node holding it keeps the exec alive; while any exists,
/// [`DeviceExec::<Uploaded>::update`] refuses.
///
/// ```no_run
/// use cuda_graph::{graph::Graph, kernel::LaunchConfig, DevicePtr};
/// use device_launch::{DeviceExecArg, RawErrorSlot};
/// # fn f(uploaded: &device_launch::DeviceExec<device_launch::Uploaded>, slot: &device_launch::ErrorSlot) -> device_launch::Result<()> {
/// cuda_graph::kernels! {
///     unsafe fn dl_sibling_launch_one(graph: DeviceExecArg, slot: DevicePtr<RawErrorSlot>);
/// }
/// let launcher = Graph::new()?;
/// launcher.add_kernel(dl_sibling_launch_one(), LaunchConfig::new(1, 1), (uploaded.handle().arg(), slot.ptr()), &[])?;
/// assert_eq!(uploaded.holders(), 1); // the node holds it
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct DeviceExecArg {
    owner: Arc<ExecOwner>,
}

impl std::fmt::Debug for DeviceExecArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceExecArg({:#x})", self.owner.raw)
    }
}

/// The bytes a kernel receives for a [`DeviceExecArg`] (`cudaGraphExec_t`): opaque, so that
/// [`KernelParam::raw`] hands out no number that outlives the argument. Code never needs to
/// name it.
///
/// ```
/// assert_eq!(std::mem::size_of::<device_launch::RawDeviceExec>(), 8);
/// ```
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct RawDeviceExec(u64);

impl std::fmt::Debug for RawDeviceExec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RawDeviceExec(..)")
    }
}

// SAFETY: a `cudaGraphExec_t` is a pointer-sized opaque handle (8 bytes, 8-aligned on every
// CUDA platform), passed by value: exactly a transparent `u64`.
unsafe impl KernelParam for DeviceExecArg {
    type Raw = RawDeviceExec;
    fn raw(&self) -> RawDeviceExec {
        RawDeviceExec(self.owner.raw)
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
        assert_send_sync::<DeviceExec<Uploaded>>();
        assert_send_sync::<DeviceExec<NotUploaded>>();
        assert_send_sync::<DeviceExecArg>();
        assert_send_sync::<DeviceExecHandle<'static>>();
    }

    #[test]
    fn a_device_exec_argument_is_a_pointer_sized_parameter() {
        use cuda_graph::KernelArgs;
        let layout = <(DeviceExecArg, u32)>::layout();
        assert_eq!((layout[0].size, layout[0].align), (8, 8));
    }
}
