//! Communicators: one per device, made together for the GPUs of this host
//! (`ncclCommInitAll`), destroyed once nothing uses them.

use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cuda_graph::refusal::Empty;
use cuda_graph::{CudaError, Device, Refusal, Result};
use cudarc::nccl::sys;

use crate::agreement::{parse_timeout, CliqueLog, AGREEMENT_TIMEOUT_VAR, DEFAULT_AGREEMENT_TIMEOUT};
use crate::library::{check, loaded};

/// The NCCL handle, destroyed when the last [`Communicator`] and the last graph or exec whose
/// captured collectives use it are gone.
pub(crate) struct CommHandle {
    pub(crate) raw: sys::ncclComm_t,
    device: Device,
    /// For a nonblocking communicator (a rank of a world that spans processes): how long its
    /// calls may stay in progress (`ncclInProgress`) before it is aborted.
    pub(crate) nonblocking: Option<Duration>,
    /// Set when a call of a nonblocking communicator did not finish in time: the
    /// communicator refuses work and is aborted (`ncclCommAbort`) rather than destroyed.
    broken: AtomicBool,
}

impl CommHandle {
    pub(crate) fn new(raw: sys::ncclComm_t, device: Device, nonblocking: Option<Duration>) -> CommHandle {
        CommHandle { raw, device, nonblocking, broken: AtomicBool::new(false) }
    }

    /// Marks the communicator as one to abort: a call of it did not finish in time.
    pub(crate) fn set_broken(&self) {
        self.broken.store(true, Ordering::SeqCst);
    }

    /// True once a call of it did not finish in time.
    pub(crate) fn is_broken(&self) -> bool {
        self.broken.load(Ordering::SeqCst)
    }
}

// SAFETY: the handle is only passed to NCCL by the `Communicator` that owns it (which is not
// `Sync`: one thread at a time, as NCCL requires) and destroyed once, by the last owner.
unsafe impl Send for CommHandle {}
// SAFETY: shared references are only kept alive by graphs (never used through them).
unsafe impl Sync for CommHandle {}

impl Drop for CommHandle {
    fn drop(&mut self) {
        let raw = std::mem::replace(&mut self.raw, ptr::null_mut());
        if raw.is_null() {
            return;
        }
        // Inside a host function no CUDA (or NCCL) call is allowed: this runs again on
        // another thread once it returns.
        let moved = CommHandle::new(raw, self.device, self.nonblocking);
        if self.is_broken() {
            moved.set_broken();
        }
        let Some(mut handle) = cuda_graph::drop_outside_host_fn(moved) else { return };
        let raw = std::mem::replace(&mut handle.raw, ptr::null_mut());
        let result = if handle.is_broken() {
            // A call of it never finished (a peer process gone): abort it, which ends its
            // kernels, rather than wait for work that waits for the peer.
            // SAFETY: the communicator is alive, owned by this handle alone and aborted once
            // (taken out of it above); NCCL's abort is meant for a communicator whose work
            // may never finish.
            check(unsafe { sys::ncclCommAbort(raw) }, "ncclCommAbort", None).and(handle.device.synchronize())
        } else {
            // Work queued with the communicator (on streams, or by launches of execs whose
            // captured collectives used it) must be over before NCCL frees what it uses.
            handle.device.synchronize().and_then(|()| crate::nonblocking::destroy(raw, handle.nonblocking))
        };
        if let Err(err) = result {
            // Kept with every other destructor's error: `cuda_graph::take_unreported_errors`.
            cuda_graph::record_unreported_error(err);
        }
    }
}

/// One rank of a group of NCCL communicators made together (a clique), bound to one device.
///
/// Collectives are queued through a [`Group`](crate::Group) (or the one-call shorthands
/// here), on streams of the communicator's device, with buffers of that device. `Send`, not
/// `Sync`: NCCL allows one thread at a time per communicator. The ranks of one clique may be
/// driven from one thread (one [`Group`](crate::Group) holding them all) or from a thread
/// each; either way every collective is compared across the clique before NCCL sees it (see
/// [`Group`](crate::Group), "Ranks must agree").
///
/// ```no_run
/// use cuda_graph_nccl::Communicator;
/// let comms = Communicator::init_all()?; // one per GPU of the host
/// for comm in &comms {
///     println!("rank {} of {} on device {}", comm.rank(), comm.size(), comm.device().ordinal());
/// }
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct Communicator {
    pub(crate) handle: Arc<CommHandle>,
    rank: usize,
    size: usize,
    /// The agreement log of the `init_on` call that made it, shared by its clique: ranks of
    /// one clique must issue matching collectives. `None` for a rank of a world that spans
    /// processes, whose peers this process cannot see.
    log: Option<Arc<CliqueLog>>,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Communicator")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("device", &self.handle.device.ordinal())
            .finish()
    }
}

impl Communicator {
    /// One communicator per GPU of this host, rank `i` on device `i`
    /// ([`init_on`](Self::init_on) of [`Device::all`]). Without a GPU or driver, CUDA's reason
    /// (`cudaErrorNoDevice`, `cudaErrorInsufficientDriver`: [`CudaError::is_no_device`]).
    ///
    /// ```no_run
    /// let comms = cuda_graph_nccl::Communicator::init_all()?;
    /// assert_eq!(comms.len() as i32, cuda_graph::Device::count()?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn init_all() -> Result<Vec<Communicator>> {
        let devices = Device::all()?;
        if devices.is_empty() {
            // `Device::count` is 0 without a driver; `get` returns why.
            Device::get(0)?;
        }
        Communicator::init_on(&devices)
    }

    /// One communicator per device of `devices`, rank `i` on `devices[i]`, made together by
    /// `ncclCommInitAll` from this thread. Devices must be distinct. The thread's current
    /// device is the same afterwards. The clique's agreement timeout is
    /// [`DEFAULT_AGREEMENT_TIMEOUT`](crate::DEFAULT_AGREEMENT_TIMEOUT), or the seconds that the
    /// environment variable [`AGREEMENT_TIMEOUT_VAR`](crate::AGREEMENT_TIMEOUT_VAR) names.
    ///
    /// ```no_run
    /// use cuda_graph::Device;
    /// let pair = cuda_graph_nccl::Communicator::init_on(&[Device::get(0)?, Device::get(1)?])?;
    /// assert_eq!(pair[1].rank(), 1);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn init_on(devices: &[Device]) -> Result<Vec<Communicator>> {
        const CALL: &str = "Communicator::init_on";
        loaded(CALL)?;
        if devices.is_empty() {
            return Err(CudaError::InvalidArgument { call: CALL, reason: Refusal::Empty(Empty::Devices) });
        }
        for (i, device) in devices.iter().enumerate() {
            if devices[..i].contains(device) {
                return Err(CudaError::InvalidArgument {
                    call: CALL,
                    reason: Refusal::DuplicateDevice { ordinal: device.ordinal() },
                });
            }
        }
        let timeout = match std::env::var(AGREEMENT_TIMEOUT_VAR) {
            Err(_) => DEFAULT_AGREEMENT_TIMEOUT,
            Ok(text) => parse_timeout(&text).ok_or_else(|| CudaError::InvalidArgument {
                call: CALL,
                reason: Refusal::BadEnvironmentVariable {
                    name: AGREEMENT_TIMEOUT_VAR,
                    value: text.clone(),
                    expected: "a number of seconds (e.g. 60, 2.5, inf)",
                },
            })?,
        };
        let ordinals: Vec<i32> = devices.iter().map(|device| device.ordinal()).collect();
        let count = i32::try_from(devices.len()).map_err(|_| CudaError::InvalidArgument {
            call: CALL,
            reason: Refusal::TooManyDevices { count: devices.len() },
        })?;
        let mut raw = vec![ptr::null_mut(); devices.len()];
        let before = Device::current()?;
        // SAFETY: NCCL is loaded; `raw` has room for `count` handles and `ordinals` holds
        // `count` device ordinals, both alive for the call.
        let status = unsafe { sys::ncclCommInitAll(raw.as_mut_ptr(), count, ordinals.as_ptr()) };
        restore_current(before)?;
        check(status, "ncclCommInitAll", None)?;
        let log = Arc::new(CliqueLog::new(next_clique(), devices.len(), timeout));
        Ok(raw
            .into_iter()
            .zip(devices)
            .enumerate()
            .map(|(rank, (raw, &device))| Communicator {
                handle: Arc::new(CommHandle::new(raw, device, None)),
                rank,
                size: devices.len(),
                log: Some(log.clone()),
                _not_sync: PhantomData,
            })
            .collect())
    }

    /// The device this rank's collectives run on.
    pub fn device(&self) -> Device {
        self.handle.device
    }

    /// This communicator's rank, 0-based.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// How many ranks the clique has.
    pub fn size(&self) -> usize {
        self.size
    }

    /// How long a launch holding this rank waits for the other ranks of the clique to launch
    /// their matching collectives (see [`set_agreement_timeout`](Self::set_agreement_timeout)).
    /// A rank of a world that spans processes has no agreement log (its launches compare
    /// nothing): [`DEFAULT_AGREEMENT_TIMEOUT`](crate::DEFAULT_AGREEMENT_TIMEOUT), unused.
    ///
    /// ```no_run
    /// let comms = cuda_graph_nccl::Communicator::init_all()?;
    /// assert_eq!(comms[0].agreement_timeout(), cuda_graph_nccl::DEFAULT_AGREEMENT_TIMEOUT);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn agreement_timeout(&self) -> Duration {
        self.log.as_ref().map_or(DEFAULT_AGREEMENT_TIMEOUT, |log| log.timeout())
    }

    /// Sets, for every rank of this clique, how long a [`Group::launch`](crate::Group::launch)
    /// waits for the other ranks to launch their matching collectives; launches that begin
    /// afterwards use it. When it passes, the launch returns `Err` naming the ranks that did
    /// not come and the time waited, and the clique refuses every later collective (its ranks
    /// are out of step). `Duration::MAX` waits without limit. A group holding every rank of
    /// the clique never waits. Does nothing for a rank of a world that spans processes.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// let comms = cuda_graph_nccl::Communicator::init_all()?;
    /// comms[0].set_agreement_timeout(Duration::from_secs(5));
    /// assert_eq!(comms.last().unwrap().agreement_timeout(), Duration::from_secs(5));
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn set_agreement_timeout(&self, timeout: Duration) {
        if let Some(log) = &self.log {
            log.set_timeout(timeout);
        }
    }

    /// True for a rank of a world that spans processes ([`init_rank`](Self::init_rank) or
    /// [`from_env`](Self::from_env) with more than one rank): its collectives are queued with
    /// the `unsafe` [`Group::launch_unchecked`](crate::Group::launch_unchecked), since this
    /// process cannot compare them with its peers'.
    ///
    /// ```no_run
    /// let comms = cuda_graph_nccl::Communicator::init_all()?;
    /// assert!(!comms[0].spans_processes());
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn spans_processes(&self) -> bool {
        self.log.is_none()
    }

    /// A communicator made of its parts (by [`init_rank`](Self::init_rank)).
    pub(crate) fn from_parts(
        handle: CommHandle, rank: usize, size: usize, log: Option<Arc<CliqueLog>>,
    ) -> Communicator {
        Communicator { handle: Arc::new(handle), rank, size, log, _not_sync: PhantomData }
    }

    pub(crate) fn log(&self) -> Option<&CliqueLog> {
        self.log.as_deref()
    }
}

/// A number no other clique of this process has.
pub(crate) fn next_clique() -> u64 {
    static NEXT_CLIQUE: AtomicU64 = AtomicU64::new(1);
    NEXT_CLIQUE.fetch_add(1, Ordering::Relaxed)
}

/// Makes `before` current again if NCCL left another device current, and has the crate
/// read the current device anew (NCCL switches devices with raw calls).
pub(crate) fn restore_current(before: Device) -> Result<()> {
    if Device::current()? != before {
        before.set_current()?;
    }
    Ok(())
}
