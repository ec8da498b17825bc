//! Which rank this process is, read from the environment that launchers set.

use std::time::Duration;

use super::BootstrapError;
use crate::agreement::parse_timeout;

/// The environment variable giving the rendezvous timeout, in seconds (`2.5`, `120`, `inf`);
/// unset: [`DEFAULT_BOOTSTRAP_TIMEOUT`].
///
/// ```
/// assert_eq!(cuda_graph_nccl::bootstrap::BOOTSTRAP_TIMEOUT_VAR, "CUDA_GRAPH_NCCL_BOOTSTRAP_TIMEOUT");
/// ```
pub const BOOTSTRAP_TIMEOUT_VAR: &str = "CUDA_GRAPH_NCCL_BOOTSTRAP_TIMEOUT";

/// How long the rendezvous, and then NCCL's initialization, wait for every rank by default
/// (120 s).
///
/// ```
/// assert_eq!(cuda_graph_nccl::bootstrap::DEFAULT_BOOTSTRAP_TIMEOUT.as_secs(), 120);
/// ```
pub const DEFAULT_BOOTSTRAP_TIMEOUT: Duration = Duration::from_secs(120);

/// The environment variable naming the TCP port of the rendezvous when it must not be
/// `MASTER_PORT` (see [`Launch`]).
///
/// ```
/// assert_eq!(cuda_graph_nccl::bootstrap::RENDEZVOUS_PORT_VAR, "CUDA_GRAPH_NCCL_RENDEZVOUS_PORT");
/// ```
pub const RENDEZVOUS_PORT_VAR: &str = "CUDA_GRAPH_NCCL_RENDEZVOUS_PORT";

/// The launcher whose variables gave the rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launcher {
    /// `torchrun` (and anything setting `RANK`, `WORLD_SIZE`, `LOCAL_RANK` by hand).
    Torchrun,
    /// Open MPI's `mpirun` (`OMPI_COMM_WORLD_RANK`, `_SIZE`, `_LOCAL_RANK`).
    OpenMpi,
    /// Slurm's `srun` (`SLURM_PROCID`, `SLURM_NTASKS`, `SLURM_LOCALID`).
    Slurm,
}

impl Launcher {
    /// The variables of this launcher for the rank, the world size and the local rank.
    pub fn variables(self) -> [&'static str; 3] {
        match self {
            Launcher::Torchrun => ["RANK", "WORLD_SIZE", "LOCAL_RANK"],
            Launcher::OpenMpi => {
                ["OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"]
            }
            Launcher::Slurm => ["SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"],
        }
    }
}

/// One rank's place in its world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankInfo {
    /// This rank, 0-based, below `world_size`.
    pub rank: usize,
    /// How many ranks the world has, across every process and host.
    pub world_size: usize,
    /// This rank's index among the ranks of its host: the GPU it uses, by convention.
    pub local_rank: usize,
}

/// What a launcher told this process: its rank, and where rank 0 listens for the others.
///
/// Read by [`Launch::from_env`]. The rank comes from the first of these sets of variables
/// whose rank variable is set:
///
/// | launcher | rank | world size | local rank |
/// |---|---|---|---|
/// | `torchrun` | `RANK` | `WORLD_SIZE` | `LOCAL_RANK` |
/// | Open MPI `mpirun` | `OMPI_COMM_WORLD_RANK` | `OMPI_COMM_WORLD_SIZE` | `OMPI_COMM_WORLD_LOCAL_RANK` |
/// | Slurm `srun` | `SLURM_PROCID` | `SLURM_NTASKS` | `SLURM_LOCALID` |
///
/// Rank 0's address is always `MASTER_ADDR` and `MASTER_PORT` (host name or IP, and a TCP
/// port): `torchrun` sets them; under `mpirun` or `srun` export them yourself (e.g.
/// `MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1)`), for every rank.
/// The rendezvous listens on that port, with two exceptions: [`RENDEZVOUS_PORT_VAR`], when
/// set, names the port to use instead; and under `torchrun`, whose agent keeps its own store
/// listening on `MASTER_PORT` (it tells its workers so with
/// `TORCHELASTIC_USE_AGENT_STORE=True`), the rendezvous uses `MASTER_PORT + 1`.
///
/// ```
/// use cuda_graph_nccl::bootstrap::{Launch, Launcher};
/// let vars = [("RANK", "1"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "1"), ("MASTER_ADDR", "10.0.0.1"), ("MASTER_PORT", "29500")];
/// let launch = Launch::from_vars(|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()))?;
/// assert_eq!((launch.launcher, launch.rank.rank, launch.rank.world_size), (Launcher::Torchrun, 1, 2));
/// assert_eq!(launch.address(), "10.0.0.1:29500");
/// # Ok::<(), cuda_graph_nccl::bootstrap::BootstrapError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// Which launcher's variables gave the rank.
    pub launcher: Launcher,
    /// This rank's place.
    pub rank: RankInfo,
    /// Rank 0's host (`MASTER_ADDR`).
    pub master_addr: String,
    /// The TCP port rank 0 listens on for the rendezvous (`MASTER_PORT`, but see [`Launch`]).
    pub master_port: u16,
    /// How long to wait for the other ranks ([`BOOTSTRAP_TIMEOUT_VAR`]).
    pub timeout: Duration,
}

impl Launch {
    /// Reads the launch from this process's environment (see [`Launch`]). `Err` names the
    /// variable missing or wrong; [`BootstrapError::NotLaunched`] when no launcher's rank
    /// variable is set at all.
    pub fn from_env() -> Result<Launch, BootstrapError> {
        Launch::from_vars(|name| std::env::var(name).ok())
    }

    /// Reads the launch from `var` (a variable's value by name), as [`from_env`](Self::from_env)
    /// does from the environment.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Launch, BootstrapError> {
        let launcher = [Launcher::Torchrun, Launcher::OpenMpi, Launcher::Slurm]
            .into_iter()
            .find(|launcher| var(launcher.variables()[0]).is_some())
            .ok_or(BootstrapError::NotLaunched)?;
        let [rank_var, size_var, local_var] = launcher.variables();
        let number = |name: &'static str| -> Result<usize, BootstrapError> {
            let value =
                var(name).ok_or(BootstrapError::MissingVariable { name, launcher: Some(launcher) })?;
            value.trim().parse().map_err(|_| BootstrapError::BadVariable {
                name,
                value,
                expected: "a whole number, not negative",
            })
        };
        let rank = number(rank_var)?;
        let world_size = number(size_var)?;
        let local_rank = number(local_var)?;
        if world_size == 0 {
            return Err(BootstrapError::BadVariable {
                name: size_var,
                value: "0".into(),
                expected: "at least 1 rank",
            });
        }
        for (name, value) in [(rank_var, rank), (local_var, local_rank)] {
            if value >= world_size {
                return Err(BootstrapError::RankOutOfRange { name, value, world_size });
            }
        }
        let master_addr = var("MASTER_ADDR")
            .filter(|addr| !addr.trim().is_empty())
            .ok_or(BootstrapError::MissingVariable { name: "MASTER_ADDR", launcher: Some(launcher) })?
            .trim()
            .to_owned();
        let port = |name: &'static str, value: String| match value.trim().parse::<u16>() {
            Ok(port) if port != 0 => Ok(port),
            _ => Err(BootstrapError::BadVariable { name, value, expected: "a TCP port, 1 to 65535" }),
        };
        let master_port = match var(RENDEZVOUS_PORT_VAR) {
            Some(value) => port(RENDEZVOUS_PORT_VAR, value)?,
            None => {
                let value = var("MASTER_PORT").ok_or(BootstrapError::MissingVariable {
                    name: "MASTER_PORT",
                    launcher: Some(launcher),
                })?;
                let master = port("MASTER_PORT", value.clone())?;
                if var("TORCHELASTIC_USE_AGENT_STORE").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
                {
                    // torchrun's agent listens on MASTER_PORT itself.
                    master.checked_add(1).ok_or(BootstrapError::BadVariable {
                        name: "MASTER_PORT",
                        value,
                        expected: "below 65535 under torchrun (the rendezvous uses MASTER_PORT + 1)",
                    })?
                } else {
                    master
                }
            }
        };
        let timeout = match var(BOOTSTRAP_TIMEOUT_VAR) {
            None => DEFAULT_BOOTSTRAP_TIMEOUT,
            Some(value) => parse_timeout(&value).ok_or(BootstrapError::BadVariable {
                name: BOOTSTRAP_TIMEOUT_VAR,
                value,
                expected: "a number of seconds (e.g. 120, 2.5, inf)",
            })?,
        };
        Ok(Launch {
            launcher,
            rank: RankInfo { rank, world_size, local_rank },
            master_addr,
            master_port,
            timeout,
        })
    }

    /// Rank 0's address, `host:port` (an IPv6 host in brackets).
    pub fn address(&self) -> String {
        if self.master_addr.contains(':') && !self.master_addr.starts_with('[') {
            format!("[{}]:{}", self.master_addr, self.master_port)
        } else {
            format!("{}:{}", self.master_addr, self.master_port)
        }
    }

    /// The rendezvous of this launch: rank 0 serves, the others join.
    pub fn rendezvous(&self) -> super::Rendezvous {
        super::Rendezvous {
            address: self.address(),
            rank: self.rank.rank,
            world_size: self.rank.world_size,
            timeout: self.timeout,
        }
    }
}
