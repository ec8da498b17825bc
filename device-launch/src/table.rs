//! Several device graphs as one kernel argument: an array of `cudaGraphExec_t` in device
//! memory, for schedulers that pick which graph to launch at run time.

use std::sync::Arc;

use cuda_graph::refusal::{DevicePair, Empty};
use cuda_graph::{CudaError, Device, DeviceBuffer, KeepAlive, KernelParam, Refusal};

use crate::error::Result;
use crate::exec::{DeviceExecHandle, ExecOwner};

/// The table's memory and the execs it names.
struct TableInner {
    handles: DeviceBuffer<u64>,
    _owners: Vec<Arc<ExecOwner>>,
}

/// An array of device graph handles in device memory (`const cudaGraphExec_t*` on the
/// device). It shares ownership of every exec in it, so they stay alive while the table (or
/// a graph node holding its [`arg`](DeviceExecTable::arg)) does, and their
/// [`update`](crate::DeviceExec::update) refuses meanwhile.
///
/// The same graph may appear several times, but CUDA refuses a device launch of an exec
/// whose previous launch is still pending: a kernel must not fire-and-forget it twice.
///
/// ```no_run
/// # fn f(a: &device_launch::DeviceExec<device_launch::Uploaded>, b: &device_launch::DeviceExec<device_launch::Uploaded>) -> device_launch::Result<()> {
/// let table = device_launch::DeviceExecTable::new(&[a.handle(), b.handle()])?;
/// assert_eq!(table.len(), 2);
/// let arg = table.arg(); // for a kernel parameter `const cudaGraphExec_t* graphs`
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct DeviceExecTable {
    inner: Arc<TableInner>,
}

impl std::fmt::Debug for DeviceExecTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceExecTable").field("len", &self.len()).finish()
    }
}

impl DeviceExecTable {
    /// A table of `graphs`, in order (a synchronous copy to device memory).
    ///
    /// ```no_run
    /// # fn f(execs: &[device_launch::DeviceExec<device_launch::Uploaded>]) -> device_launch::Result<()> {
    /// let handles: Vec<_> = execs.iter().map(|exec| exec.handle()).collect();
    /// let table = device_launch::DeviceExecTable::new(&handles)?;
    /// # Ok(()) }
    /// ```
    pub fn new(graphs: &[DeviceExecHandle<'_>]) -> Result<DeviceExecTable> {
        if graphs.is_empty() {
            return Err(CudaError::InvalidArgument {
                call: "DeviceExecTable::new",
                reason: Refusal::Empty(Empty::TableGraphs),
            }
            .into());
        }
        let device = graphs[0].device();
        if let Some(other) = graphs.iter().find(|graph| graph.device() != device) {
            return Err(CudaError::InvalidArgument {
                call: "DeviceExecTable::new",
                reason: Refusal::DevicesDiffer {
                    pair: DevicePair::TableGraphs,
                    first: device.ordinal(),
                    second: other.device().ordinal(),
                },
            }
            .into());
        }
        let raw: Vec<u64> = graphs.iter().map(|graph| graph.raw()).collect();
        let handles = DeviceBuffer::from_slice_on(device, &raw)?;
        let owners = graphs.iter().map(|graph| graph.owner().clone()).collect();
        Ok(DeviceExecTable { inner: Arc::new(TableInner { handles, _owners: owners }) })
    }

    /// How many handles the table holds.
    pub fn len(&self) -> usize {
        self.inner.handles.len()
    }

    /// Always false: a table holds at least one graph.
    pub fn is_empty(&self) -> bool {
        self.inner.handles.is_empty()
    }

    /// The kernel argument: the table's device address, keeping the table alive.
    pub fn arg(&self) -> DeviceExecTableArg {
        DeviceExecTableArg { inner: self.inner.clone() }
    }
}

/// A [`DeviceExecTable`] as a kernel argument (`const cudaGraphExec_t*`); declare the
/// parameter as `DeviceExecTableArg` in `cuda_graph::kernels!`.
///
/// ```no_run
/// use cuda_graph::DevicePtr;
/// use device_launch::{DeviceExecTableArg, RawErrorSlot};
/// cuda_graph::kernels! {
///     unsafe fn dl_fire_and_forget_all(graphs: DeviceExecTableArg, n: u32, accepted: DevicePtr<u32>, slot: DevicePtr<RawErrorSlot>);
/// }
/// ```
#[derive(Clone)]
pub struct DeviceExecTableArg {
    inner: Arc<TableInner>,
}

impl std::fmt::Debug for DeviceExecTableArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceExecTableArg({:?}, len {})", self.inner.handles.as_raw(), self.inner.handles.len())
    }
}

// SAFETY: the kernel parameter is a device pointer (`const cudaGraphExec_t*`): a 64-bit
// address, passed as `u64`. It points at `len` handles of live execs, kept by `inner`; the
// handles' allocation is handed out as its own record. The execs are all of the device the
// handles live on (`DeviceExecTable::new`), which `device` reports.
unsafe impl KernelParam for DeviceExecTableArg {
    type Raw = u64;
    fn raw(&self) -> u64 {
        self.inner.handles.as_raw() as u64
    }
    fn cpp_type() -> String {
        "*const *mut CUgraphExec_st".to_string()
    }
    fn keep_alive(&self, owners: &mut Vec<KeepAlive>) {
        // The handles' memory as its own record (device checks and frees see it), and the
        // table, which holds the execs.
        owners.push(self.inner.handles.keep_alive());
        owners.push(self.inner.clone());
    }
    fn device(&self) -> Option<Device> {
        Some(self.inner.handles.device())
    }
}
