//! How the processes of a world find each other (pure Rust: no CUDA, no NCCL): which rank
//! this process is ([`Launch`], from the variables of `torchrun`, Open MPI's `mpirun` or
//! Slurm's `srun`), and a TCP [`Rendezvous`] through which rank 0 hands every other rank
//! NCCL's unique id (any bytes: the rendezvous does not look at them).
//!
//! Nothing here waits without limit: rank 0 waits for the others up to the launch's timeout
//! ([`BOOTSTRAP_TIMEOUT_VAR`], default [`DEFAULT_BOOTSTRAP_TIMEOUT`]) and then fails naming
//! the ranks that did not come; a rank that cannot reach rank 0, or hears nothing back, fails
//! naming the address and the time waited. [`Communicator::from_env`](crate::Communicator::from_env)
//! puts this together with NCCL's initialization.
//!
//! ```no_run
//! use cuda_graph_nccl::bootstrap::Launch;
//! let launch = Launch::from_env()?; // torchrun, mpirun or srun set the variables
//! let id = launch.rendezvous().share(|| vec![42; 128])?; // rank 0's bytes, on every rank
//! assert_eq!(id.len(), 128);
//! # Ok::<(), cuda_graph_nccl::bootstrap::BootstrapError>(())
//! ```

mod env;
mod rendezvous;

use std::fmt;
use std::time::Duration;

pub use env::{
    Launch, Launcher, RankInfo, BOOTSTRAP_TIMEOUT_VAR, DEFAULT_BOOTSTRAP_TIMEOUT, RENDEZVOUS_PORT_VAR,
};
pub use rendezvous::{Rendezvous, MAGIC, MAX_PAYLOAD, PROTOCOL_VERSION};

/// Why the processes of a world could not find each other.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BootstrapError {
    /// No launcher's rank variable is set (`RANK`, `OMPI_COMM_WORLD_RANK`, `SLURM_PROCID`).
    NotLaunched,
    /// A variable the launch needs is not set.
    MissingVariable {
        /// The variable.
        name: &'static str,
        /// The launcher whose variables were being read.
        launcher: Option<Launcher>,
    },
    /// A variable's value is not what it must be.
    BadVariable {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A rank (or local rank) not below the world size.
    RankOutOfRange {
        /// Where it came from (a variable's name, or `rank`).
        name: &'static str,
        /// The rank.
        value: usize,
        /// The world size.
        world_size: usize,
    },
    /// Rank 0 could not listen on its address.
    Bind {
        /// `host:port`.
        address: String,
        /// The system's reason.
        error: String,
    },
    /// Rank 0 waited for the whole timeout and these ranks never said hello.
    MissingRanks {
        /// Where rank 0 listened.
        address: String,
        /// The ranks that did not come.
        missing: Vec<usize>,
        /// The world size.
        world_size: usize,
        /// How long rank 0 waited.
        waited: Duration,
    },
    /// A rank could not connect to rank 0 before the timeout.
    Unreachable {
        /// Rank 0's `host:port`.
        address: String,
        /// How long it tried.
        waited: Duration,
        /// The last attempt's error.
        error: String,
    },
    /// A rank connected to rank 0 but heard nothing back before the timeout.
    Silent {
        /// Rank 0's `host:port`.
        address: String,
        /// How long it waited, in all.
        waited: Duration,
    },
    /// Rank 0 closed the connection without an answer (it failed, or is not this world's).
    RankZeroClosed {
        /// Rank 0's `host:port`.
        address: String,
    },
    /// Rank 0 refused this rank, or failed, and said why.
    Refused {
        /// Rank 0's `host:port`.
        address: String,
        /// Rank 0's reason.
        why: String,
    },
    /// Two connections said they were the same rank.
    DuplicateRank {
        /// The rank.
        rank: usize,
        /// The second one's address.
        from: String,
    },
    /// A rank was told another world size than rank 0.
    WorldSizeMismatch {
        /// The rank.
        rank: usize,
        /// Its world size.
        theirs: usize,
        /// Rank 0's.
        ours: usize,
    },
    /// A connection's hello was not a rank's of this protocol.
    BadHello {
        /// Its address.
        from: String,
        /// What was wrong.
        why: String,
    },
    /// A payload larger than [`MAX_PAYLOAD`].
    PayloadTooLarge {
        /// Its length in bytes.
        len: usize,
    },
    /// Another socket error.
    Io {
        /// Rank 0's `host:port`.
        address: String,
        /// What was being done.
        what: &'static str,
        /// The system's reason.
        error: String,
    },
}

impl fmt::Display for BootstrapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BootstrapError::NotLaunched => write!(
                f,
                "no launcher's variables: set RANK, WORLD_SIZE, LOCAL_RANK (torchrun), or run under mpirun \
                 (OMPI_COMM_WORLD_*) or srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID), with MASTER_ADDR and \
                 MASTER_PORT"
            ),
            BootstrapError::MissingVariable { name, launcher } => {
                write!(f, "{name} is not set")?;
                if let Some(launcher) = launcher {
                    write!(f, " (reading the variables of {launcher:?}: {})", launcher.variables().join(", "))?;
                }
                if name.starts_with("MASTER_") {
                    write!(f, "; every rank needs MASTER_ADDR and MASTER_PORT, rank 0's host and a free TCP port")?;
                }
                Ok(())
            }
            BootstrapError::BadVariable { name, value, expected } => {
                write!(f, "{name}={value:?} is not {expected}")
            }
            BootstrapError::RankOutOfRange { name, value, world_size } => {
                write!(f, "{name} {value} is not below the world size {world_size}")
            }
            BootstrapError::Bind { address, error } => {
                write!(
                    f,
                    "rank 0 could not listen on {address}: {error} (is the port free, MASTER_ADDR this host? \
                     {RENDEZVOUS_PORT_VAR} names another port)"
                )
            }
            BootstrapError::MissingRanks { address, missing, world_size, waited } => {
                let list: Vec<String> = missing.iter().map(usize::to_string).collect();
                write!(
                    f,
                    "rank 0 waited {:.1} s on {address} and rank(s) {} of {world_size} never came",
                    waited.as_secs_f64(),
                    list.join(", ")
                )
            }
            BootstrapError::Unreachable { address, waited, error } => write!(
                f,
                "could not reach rank 0 at {address} in {:.1} s (last attempt: {error})",
                waited.as_secs_f64()
            ),
            BootstrapError::Silent { address, waited } => write!(
                f,
                "connected to rank 0 at {address} but it sent nothing in {:.1} s (other ranks missing?)",
                waited.as_secs_f64()
            ),
            BootstrapError::RankZeroClosed { address } => {
                write!(f, "rank 0 at {address} closed the connection without an answer")
            }
            BootstrapError::Refused { address, why } => write!(f, "rank 0 at {address} refused: {why}"),
            BootstrapError::DuplicateRank { rank, from } => {
                write!(f, "rank {rank} said hello twice (the second from {from}): two processes have one rank")
            }
            BootstrapError::WorldSizeMismatch { rank, theirs, ours } => {
                write!(f, "rank {rank} was told the world has {theirs} ranks, rank 0 was told {ours}")
            }
            BootstrapError::BadHello { from, why } => write!(f, "a connection from {from} is refused: {why}"),
            BootstrapError::PayloadTooLarge { len } => {
                write!(f, "a payload of {len} bytes is larger than the rendezvous carries ({MAX_PAYLOAD})")
            }
            BootstrapError::Io { address, what, error } => write!(f, "{what} ({address}): {error}"),
        }
    }
}

impl std::error::Error for BootstrapError {}

#[cfg(test)]
mod tests;
