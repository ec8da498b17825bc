//! Launch attributes: what a kernel launch or a kernel node asks of the scheduler beyond its
//! geometry (programmatic dependent launch, clusters, cooperative grids, priority, memory
//! synchronization domains).
//!
//! Two types, so that an attribute CUDA accepts only on stream launches cannot be given to a
//! kernel node (it is a compile error, not a CUDA refusal):
//! - [`KernelAttributes`]: valid for stream launches and kernel nodes alike;
//! - [`LaunchAttributes`]: those plus the stream-launch-only ones (programmatic stream
//!   serialization, programmatic and launch-completion events, shared-memory carveout).
//!
//! Both are plain structs with public fields and `Default` (nothing set). What a device
//! cannot do, or what contradicts the launch's geometry, is refused before CUDA sees it
//! (see [`KernelAttributes`]' fields). Launches without attributes keep using
//! [`Kernel::launch`](crate::kernel::Kernel::launch) (`cudaLaunchKernel`); those with
//! attributes go through [`Kernel::launch_with`](crate::kernel::Kernel::launch_with)
//! (`cudaLaunchKernelExC`), and kernel nodes through
//! [`GraphBuilder::add_kernel_with`](crate::graph::GraphBuilder::add_kernel_with)
//! (`cudaGraphKernelNodeSetAttribute`).
//!
//! ```
//! use cuda_graph::kernel::{Dim3, KernelAttributes, LaunchAttributes, MemSyncDomain};
//! let node = KernelAttributes { cluster: Some(Dim3::from(2)), priority: Some(-1), ..Default::default() };
//! let launch = LaunchAttributes { kernel: node.clone(), ..LaunchAttributes::programmatic() };
//! assert!(launch.programmatic_serialization && launch.kernel.priority == Some(-1));
//! assert!(KernelAttributes::default().is_empty());
//! assert!(!KernelAttributes { mem_sync_domain: Some(MemSyncDomain::Remote), ..Default::default() }.is_empty());
//! ```

mod caps;
mod check;
mod raw;

use std::sync::Arc;

pub(crate) use check::{require_programmatic_launch, CheckAttributes};

use super::Dim3;
use crate::event::Event;
use crate::memory::KeepAlive;

/// Attributes CUDA accepts on stream launches and on kernel nodes: give them to
/// [`GraphBuilder::add_kernel_with`](crate::graph::GraphBuilder::add_kernel_with), or to a
/// stream launch as [`LaunchAttributes::kernel`].
///
/// Checked before CUDA is called (each a [`CudaError::InvalidArgument`](crate::CudaError)
/// naming the attribute): clusters on a device without cluster launch (below sm_90), a
/// cluster or preferred cluster that does not divide the grid, a preferred cluster without a
/// cluster or not a multiple of it, a cooperative grid on a device without cooperative
/// launch or larger than the blocks that can be resident at once (from the kernel's
/// occupancy), a priority outside the device's range, a memory synchronization domain the
/// device does not have.
///
/// ```
/// use cuda_graph::kernel::{ClusterScheduling, Dim3, KernelAttributes};
/// let attributes = KernelAttributes {
///     cluster: Some(Dim3::from((2, 1, 1))),
///     cluster_scheduling: Some(ClusterScheduling::Spread),
///     ..Default::default()
/// };
/// assert!(!attributes.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelAttributes {
    /// A cooperative grid (`cudaLaunchAttributeCooperative`): every block resident at once, so
    /// that blocks may wait for each other (`cooperative_groups::this_grid().sync()`).
    pub cooperative: bool,
    /// Thread-block cluster dimensions, in blocks (`cudaLaunchAttributeClusterDimension`):
    /// each must divide the grid's. Needs a device with cluster launch (sm_90 and later).
    pub cluster: Option<Dim3>,
    /// A preferred, larger cluster the device may use when it has room
    /// (`cudaLaunchAttributePreferredClusterDimension`): a multiple of [`cluster`](Self::cluster)
    /// in x and y, equal in z, dividing the grid.
    pub preferred_cluster: Option<Dim3>,
    /// How clusters are spread over the GPU (`cudaLaunchAttributeClusterSchedulingPolicyPreference`).
    pub cluster_scheduling: Option<ClusterScheduling>,
    /// Execution priority (`cudaLaunchAttributePriority`), as stream priorities count: lower
    /// numbers run first; within `cudaDeviceGetStreamPriorityRange`.
    pub priority: Option<i32>,
    /// The memory synchronization domain of the kernel's fences
    /// (`cudaLaunchAttributeMemSyncDomain`).
    pub mem_sync_domain: Option<MemSyncDomain>,
    /// Which domain ids the logical domains map to (`cudaLaunchAttributeMemSyncDomainMap`);
    /// each below the device's `cudaDevAttrMemSyncDomainCount`.
    pub mem_sync_domain_map: Option<MemSyncDomainMap>,
}

impl KernelAttributes {
    /// True when nothing is set.
    ///
    /// ```
    /// assert!(cuda_graph::kernel::KernelAttributes::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        *self == KernelAttributes::default()
    }
}

/// Attributes of a stream launch ([`Kernel::launch_with`](crate::kernel::Kernel::launch_with)):
/// [`KernelAttributes`] and those CUDA accepts only on launches.
///
/// Programmatic dependent launch: with [`programmatic_serialization`](Self::programmatic_serialization)
/// this kernel may start before the kernel queued before it on the stream has finished, and
/// must wait for it where it matters with `cuda_graph::pdl::wait_upstream()` (the device half,
/// `cuda_graph_pdl.cuh`, which documents what a kernel may touch before that wait). Captured
/// into a graph, such launches become programmatic edges. CUDA runs this on sm_90 and later;
/// on an older device it is refused before the launch.
///
/// ```no_run
/// use cuda_graph::kernel::{LaunchAttributes, LaunchConfig};
/// use cuda_graph::{DeviceBuffer, DevicePtr, Stream};
/// cuda_graph::kernels! {
///     // SAFETY: step writes counter[0] only, and waits for the kernel before it first.
///     unsafe fn step(counter: DevicePtr<u32>);
/// }
/// let stream = Stream::new()?;
/// let counter = DeviceBuffer::<u32>::zeroed(1)?;
/// let attributes = LaunchAttributes::programmatic();
/// for _ in 0..10 {
///     step().launch_with(&stream, LaunchConfig::new(1, 1), &attributes, (counter.ptr(),))?;
/// }
/// stream.synchronize()?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct LaunchAttributes {
    /// What a kernel node could also carry.
    pub kernel: KernelAttributes,
    /// Let this kernel start before the previous kernel on the stream has finished: once all
    /// of that kernel's blocks called `cuda_graph::pdl::launch_dependents()` or exited
    /// (`cudaLaunchAttributeProgrammaticStreamSerialization`).
    pub programmatic_serialization: bool,
    /// Record an event once every block of this kernel triggered (or exited, or at each
    /// block's start): `cudaLaunchAttributeProgrammaticEvent`. A kernel on a stream that waits
    /// for the event may start then, and must `wait_upstream()` before using this kernel's
    /// results. The event must not record timing.
    pub programmatic_event: Option<ProgrammaticEvent>,
    /// Record an event once every block of this kernel has started
    /// (`cudaLaunchAttributeLaunchCompletionEvent`; best effort, see CUDA's docs). The event
    /// must not record timing.
    pub launch_completion_event: Option<Arc<Event>>,
    /// Preferred shared-memory carveout, in percent of the unified L1/shared memory (0–100;
    /// a hint: `cudaLaunchAttributePreferredSharedMemoryCarveout`).
    pub shared_memory_carveout: Option<u8>,
}

impl LaunchAttributes {
    /// Programmatic stream serialization alone: the attribute of a PDL stream launch.
    ///
    /// ```
    /// assert!(cuda_graph::kernel::LaunchAttributes::programmatic().programmatic_serialization);
    /// ```
    pub fn programmatic() -> LaunchAttributes {
        LaunchAttributes { programmatic_serialization: true, ..Default::default() }
    }

    /// The events a launch with these attributes records (a capture keeps them with its graph).
    pub(crate) fn owners(&self) -> Vec<KeepAlive> {
        let programmatic = self.programmatic_event.iter().map(|p| p.event.clone());
        programmatic.chain(self.launch_completion_event.iter().cloned()).map(|e| e as KeepAlive).collect()
    }
}

/// The event of [`LaunchAttributes::programmatic_event`].
///
/// ```no_run
/// use std::sync::Arc;
/// use cuda_graph::kernel::ProgrammaticEvent;
/// use cuda_graph::{Event, EventOptions};
/// let event = Arc::new(Event::with_options(EventOptions { timing: false, ..Default::default() })?);
/// let programmatic = ProgrammaticEvent { event, trigger_at_block_start: false };
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ProgrammaticEvent {
    /// The event, created with `timing: false`.
    pub event: Arc<Event>,
    /// Trigger at the start of each block instead of at `launch_dependents()` or exit.
    pub trigger_at_block_start: bool,
}

/// Cluster scheduling policy (`cudaClusterSchedulingPolicy`).
///
/// ```
/// use cuda_graph::kernel::ClusterScheduling;
/// assert_ne!(ClusterScheduling::Spread, ClusterScheduling::LoadBalancing);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClusterScheduling {
    /// The device's default.
    Default,
    /// Spread clusters over the GPU's processing clusters.
    Spread,
    /// Balance load, allowing clusters on fewer processing clusters.
    LoadBalancing,
}

/// A kernel's memory synchronization domain (`cudaLaunchMemSyncDomain`): fences of kernels
/// in different domains need not wait for each other's memory traffic.
///
/// ```
/// use cuda_graph::kernel::MemSyncDomain;
/// assert_ne!(MemSyncDomain::Default, MemSyncDomain::Remote);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemSyncDomain {
    /// The default domain.
    Default,
    /// The remote domain (for kernels that talk to other GPUs, e.g. communication kernels).
    Remote,
}

/// Domain ids for the two logical domains (`cudaLaunchMemSyncDomainMap`).
///
/// ```
/// let map = cuda_graph::kernel::MemSyncDomainMap { default: 0, remote: 1 };
/// assert_eq!(map.remote, 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MemSyncDomainMap {
    /// The domain id the default domain maps to.
    pub default: u8,
    /// The domain id the remote domain maps to.
    pub remote: u8,
}
