//! One rank of a world that spans processes (and hosts): NCCL's unique id, handed from rank 0
//! to the others by the [`bootstrap`](crate::bootstrap) rendezvous, and a nonblocking
//! `ncclCommInitRankConfig` polled up to a deadline, so that a rank that never arrives makes
//! the others fail in time instead of hanging in NCCL's initialization.

use std::fmt;
use std::ptr;
use std::sync::Arc;
use std::time::Duration;

use cuda_graph::{CudaError, Device, Result};
use cudarc::nccl::sys;

use crate::agreement::{CliqueLog, DEFAULT_AGREEMENT_TIMEOUT};
use crate::bootstrap::{BootstrapError, Launch};
use crate::comm::{next_clique, restore_current, CommHandle, Communicator};
use crate::library::{check, loaded};
use crate::nonblocking::wait_ready;

/// NCCL's name for a world (`ncclUniqueId`, 128 bytes): made by one rank
/// ([`UniqueId::new`]), handed to every other rank (the [`bootstrap`](crate::bootstrap)
/// rendezvous does, or any channel of the program's), and given to
/// [`Communicator::init_rank`] by each. It holds the address where NCCL's own bootstrap, on
/// the rank that made it, listens for the ranks (see the README, "Across hosts").
///
/// ```no_run
/// use cuda_graph_nccl::UniqueId;
/// let id = UniqueId::new()?;
/// assert_eq!(UniqueId::from_bytes(&id.to_bytes()), Some(id));
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct UniqueId(sys::ncclUniqueId);

impl UniqueId {
    /// The number of bytes of an id.
    pub const LEN: usize = 128;

    /// A new id (`ncclGetUniqueId`); NCCL starts listening for the ranks in this process.
    pub fn new() -> Result<UniqueId> {
        loaded("UniqueId::new")?;
        let mut id = sys::ncclUniqueId { internal: [0; 128] };
        // SAFETY: NCCL is loaded; `id` is a valid, writable ncclUniqueId.
        check(unsafe { sys::ncclGetUniqueId(&mut id) }, "ncclGetUniqueId", None)?;
        Ok(UniqueId(id))
    }

    /// Its bytes, to send to the other ranks.
    pub fn to_bytes(&self) -> [u8; 128] {
        self.0.internal.map(|byte| byte as u8)
    }

    /// The id whose bytes these are; `None` unless there are exactly [`LEN`](Self::LEN).
    pub fn from_bytes(bytes: &[u8]) -> Option<UniqueId> {
        let bytes: [u8; 128] = bytes.try_into().ok()?;
        Some(UniqueId(sys::ncclUniqueId { internal: bytes.map(|byte| byte as std::ffi::c_char) }))
    }
}

impl fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let head: String = self.to_bytes()[..8].iter().map(|b| format!("{b:02x}")).collect();
        write!(f, "UniqueId({head}…)")
    }
}

/// Why one rank of a world that spans processes could not join it.
#[derive(Debug)]
#[non_exhaustive]
pub enum RankError {
    /// The processes could not find each other (the rank's variables, or the rendezvous).
    Bootstrap(BootstrapError),
    /// NCCL's initialization did not finish in time (a rank missing, or gone): the
    /// communicator was aborted.
    InitTimeout {
        /// This rank.
        rank: usize,
        /// The world size.
        world_size: usize,
        /// How long it waited.
        waited: Duration,
    },
    /// CUDA or NCCL refused (NCCL missing, a device not there, NCCL's own error).
    Cuda(CudaError),
}

impl fmt::Display for RankError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RankError::Bootstrap(err) => write!(f, "bootstrap: {err}"),
            RankError::InitTimeout { rank, world_size, waited } => write!(
                f,
                "ncclCommInitRankConfig: rank {rank} of {world_size} waited {:.1} s for the other ranks to \
                 initialize (one missing or gone?); the communicator was aborted",
                waited.as_secs_f64()
            ),
            RankError::Cuda(err) => write!(f, "{err}"),
        }
    }
}

impl std::error::Error for RankError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RankError::Bootstrap(err) => Some(err),
            RankError::Cuda(err) => Some(err),
            RankError::InitTimeout { .. } => None,
        }
    }
}

impl From<BootstrapError> for RankError {
    fn from(err: BootstrapError) -> RankError {
        RankError::Bootstrap(err)
    }
}

impl From<CudaError> for RankError {
    fn from(err: CudaError) -> RankError {
        RankError::Cuda(err)
    }
}

impl Communicator {
    /// This process's rank of the world its launcher started (`torchrun`, `mpirun`, `srun`:
    /// see [`Launch`]), on the GPU its local rank names (`Device::get(local_rank)`): reads
    /// the environment, meets the other ranks through the TCP rendezvous at
    /// `MASTER_ADDR:MASTER_PORT` (rank 0 makes NCCL's [`UniqueId`] and hands it on), and
    /// initializes NCCL ([`init_rank`](Self::init_rank)), all within the launch's timeout
    /// each ([`BOOTSTRAP_TIMEOUT_VAR`](crate::bootstrap::BOOTSTRAP_TIMEOUT_VAR)).
    ///
    /// Without any launcher's variables this process is a world of one: rank 0 on device 0,
    /// made as [`init_on`](Self::init_on) makes it.
    ///
    /// ```no_run
    /// // torchrun --nproc-per-node 2 ./my-program
    /// let comm = cuda_graph_nccl::Communicator::from_env()?;
    /// println!("rank {} of {} on GPU {}", comm.rank(), comm.size(), comm.device().ordinal());
    /// # Ok::<(), cuda_graph_nccl::RankError>(())
    /// ```
    pub fn from_env() -> std::result::Result<Communicator, RankError> {
        match Launch::from_env() {
            Err(BootstrapError::NotLaunched) => Ok(Communicator::init_on(&[Device::get(0)?])?.remove(0)),
            Err(err) => Err(err.into()),
            Ok(launch) => {
                let device = Device::get(i32::try_from(launch.rank.local_rank).unwrap_or(i32::MAX))?;
                Communicator::join(&launch, device)
            }
        }
    }

    /// [`from_env`](Self::from_env) on `device` rather than the GPU the local rank names.
    pub fn from_env_on(device: Device) -> std::result::Result<Communicator, RankError> {
        match Launch::from_env() {
            Err(BootstrapError::NotLaunched) => Ok(Communicator::init_on(&[device])?.remove(0)),
            Err(err) => Err(err.into()),
            Ok(launch) => Communicator::join(&launch, device),
        }
    }

    /// The rank `launch` names, on `device`: the rendezvous, then NCCL's initialization.
    pub fn join(launch: &Launch, device: Device) -> std::result::Result<Communicator, RankError> {
        // Before the rendezvous: a rank without NCCL then never says hello, and rank 0's
        // error names it.
        loaded("Communicator::join")?;
        let meeting = launch.rendezvous();
        let id = if meeting.rank == 0 {
            let id = UniqueId::new()?;
            meeting.serve(&id.to_bytes())?;
            id
        } else {
            let bytes = meeting.join()?;
            UniqueId::from_bytes(&bytes).ok_or_else(|| BootstrapError::Io {
                address: meeting.address.clone(),
                what: "reading NCCL's unique id",
                error: format!("{} bytes, not {}", bytes.len(), UniqueId::LEN),
            })?
        };
        Communicator::init_rank(device, &id, launch.rank.rank, launch.rank.world_size, launch.timeout)
    }

    /// Rank `rank` of a world of `world_size` ranks named by `id`, on `device`: every rank
    /// calls this, each in its own process (or thread), with the same `id` and `world_size`.
    ///
    /// NCCL's initialization runs nonblocking (`ncclCommInitRankConfig` with `blocking = 0`,
    /// polled through `ncclCommGetAsyncError`): when the other ranks have not all joined
    /// within `timeout`, the communicator is aborted (`ncclCommAbort`) and the result is
    /// [`RankError::InitTimeout`]. The communicator stays nonblocking: a launch whose
    /// collectives NCCL still has in progress after `timeout` aborts it too.
    ///
    /// With `world_size` above 1 the communicator [spans processes](Self::spans_processes):
    /// its collectives are queued by the `unsafe`
    /// [`Group::launch_unchecked`](crate::Group::launch_unchecked), whose contract is that
    /// every rank queues the same collectives in the same order. A world of one rank is
    /// checked as [`init_on`](Self::init_on)'s are.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use cuda_graph::Device;
    /// use cuda_graph_nccl::{Communicator, UniqueId};
    /// let id = UniqueId::new()?; // rank 0; the others receive its bytes
    /// let comm = Communicator::init_rank(Device::get(0)?, &id, 0, 1, Duration::from_secs(60))?;
    /// assert_eq!((comm.rank(), comm.size(), comm.spans_processes()), (0, 1, false));
    /// # Ok::<(), cuda_graph_nccl::RankError>(())
    /// ```
    pub fn init_rank(
        device: Device, id: &UniqueId, rank: usize, world_size: usize, timeout: Duration,
    ) -> std::result::Result<Communicator, RankError> {
        const CALL: &str = "Communicator::init_rank";
        let version = loaded(CALL)?;
        if rank >= world_size {
            return Err(BootstrapError::RankOutOfRange { name: "rank", value: rank, world_size }.into());
        }
        let (nranks, my_rank) = match (i32::try_from(world_size), i32::try_from(rank)) {
            (Ok(nranks), Ok(my_rank)) => (nranks, my_rank),
            _ => {
                return Err(BootstrapError::RankOutOfRange {
                    name: "world size",
                    value: world_size,
                    world_size: i32::MAX as usize,
                }
                .into())
            }
        };
        let before = Device::current()?;
        device.set_current()?;
        let mut config = nonblocking_config(version);
        let mut raw: sys::ncclComm_t = ptr::null_mut();
        // SAFETY: NCCL is loaded; `raw` and `config` are valid and writable for the call,
        // `config` set up as NCCL_CONFIG_INITIALIZER does (size, magic, version, every other
        // field "undefined") with `blocking = 0`; the device to use is current.
        let status = unsafe { sys::ncclCommInitRankConfig(&mut raw, nranks, id.0, my_rank, &mut config) };
        let result =
            if status == sys::ncclResult_t::ncclInProgress || status == sys::ncclResult_t::ncclSuccess {
                match wait_ready(raw, "ncclCommInitRankConfig", timeout) {
                    Ok(None) => Ok(()),
                    Ok(Some(waited)) => Err(RankError::InitTimeout { rank, world_size, waited }),
                    Err(err) => Err(err.into()),
                }
            } else {
                check(status, "ncclCommInitRankConfig", None).map_err(RankError::from)
            };
        let restored = restore_current(before);
        if let Err(err) = result {
            if !raw.is_null() {
                // SAFETY: `raw` is the communicator NCCL made for this call, used by nothing
                // else and aborted once; abort is how NCCL ends one whose init failed or hangs.
                let _ = unsafe { sys::ncclCommAbort(raw) };
            }
            return Err(err);
        }
        restored?;
        let log =
            (world_size == 1).then(|| Arc::new(CliqueLog::new(next_clique(), 1, DEFAULT_AGREEMENT_TIMEOUT)));
        Ok(Communicator::from_parts(CommHandle::new(raw, device, Some(timeout)), rank, world_size, log))
    }
}

/// NCCL_CONFIG_INITIALIZER with `blocking = 0`: the size of the bindings' struct, NCCL's
/// magic, the version of the bindings' header (or of the library, if older: NCCL reads only
/// the fields the version and size say are there), every other field undefined.
fn nonblocking_config(library: (i32, i32, i32)) -> sys::ncclConfig_t {
    const UNDEF: i32 = i32::MIN;
    let library = library.0 * 10000 + library.1 * 100 + library.2;
    sys::ncclConfig_t {
        size: std::mem::size_of::<sys::ncclConfig_t>(),
        magic: 0xcafe_beef,
        version: library.min(2 * 10000 + 30 * 100) as u32,
        blocking: 0,
        cgaClusterSize: UNDEF,
        minCTAs: UNDEF,
        maxCTAs: UNDEF,
        netName: ptr::null(),
        splitShare: UNDEF,
        trafficClass: UNDEF,
        commName: ptr::null(),
        collnetEnable: UNDEF,
        CTAPolicy: UNDEF,
        shrinkShare: UNDEF,
        nvlsCTAs: UNDEF,
        nChannelsPerNetPeer: UNDEF,
        nvlinkCentricSched: UNDEF,
        graphUsageMode: UNDEF,
        numRmaCtx: UNDEF,
        maxP2pPeers: UNDEF,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_ids_round_trip_through_bytes() {
        let bytes: Vec<u8> = (0..128u8).map(|i| i.wrapping_mul(37)).collect();
        let id = UniqueId::from_bytes(&bytes).unwrap();
        assert_eq!(id.to_bytes().to_vec(), bytes);
        assert_eq!(UniqueId::from_bytes(&bytes[..127]), None);
        assert!(format!("{id:?}").starts_with("UniqueId(00254a6f"), "{id:?}");
    }

    #[test]
    fn the_config_is_nccls_initializer_made_nonblocking() {
        let config = nonblocking_config((2, 28, 9));
        assert_eq!((config.magic, config.version, config.blocking), (0xcafe_beef, 22809, 0));
        assert_eq!(config.size, std::mem::size_of::<sys::ncclConfig_t>());
        assert_eq!((config.cgaClusterSize, config.maxP2pPeers), (i32::MIN, i32::MIN));
        assert_eq!(nonblocking_config((2, 31, 0)).version, 23000);
    }

    #[test]
    fn without_nccl_a_rank_is_a_clean_error() {
        if crate::version().is_ok() {
            return; // NCCL is there: the GPU tests cover initialization.
        }
        let err = UniqueId::new().unwrap_err();
        assert!(matches!(&err, CudaError::Library { library: "NCCL", .. }), "{err}");
        assert!(err.to_string().contains("libnccl.so"), "{err}");
        let err = RankError::from(err);
        assert!(err.to_string().contains("libnccl.so"), "{err}");
    }
}
