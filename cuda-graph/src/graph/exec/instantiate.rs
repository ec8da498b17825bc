//! Instantiating a graph: [`InstantiateOptions`], [`Graph::instantiate`], and CUDA's reason
//! when it refuses. A device-launch instantiation first looks for a parked exec of the
//! graph's shape (`exec_pool`).

use std::collections::HashMap;
use std::marker::PhantomData;
use std::ptr;

use crate::runtime as sys;

use super::release::ExecRelease;
#[cfg(any(doc, test))]
use super::DeviceLaunch;
use super::{GraphExec, HostLaunch, LaunchMode};
use crate::error::refusal::{ExecRefusal, InstantiateFailure};
use crate::error::{CudaError, Result};
use crate::graph::exec_pool::{self, NodeAlias, Recyclable};
use crate::graph::node::kind_of;
use crate::graph::retired::RetiredList;
use crate::graph::{CoreState, Graph};
use crate::memory::PinnedAllocation;
use crate::stream::Stream;

/// How to instantiate a graph (`cudaGraphInstantiateParams`); `Default` is none of these.
///
/// ```
/// use cuda_graph::graph::{HostLaunch, InstantiateOptions};
/// let options = InstantiateOptions { auto_free_on_launch: true, ..Default::default() };
/// assert_eq!(options.flags::<HostLaunch>(), 1);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct InstantiateOptions<'s> {
    /// Upload the exec to the device on this stream as part of instantiation
    /// (`cudaGraphInstantiateFlagUpload`).
    pub upload_stream: Option<&'s Stream>,
    /// Free memory that memory alloc nodes left allocated when the exec is launched again
    /// (`cudaGraphInstantiateFlagAutoFreeOnLaunch`).
    pub auto_free_on_launch: bool,
    /// Run nodes by their kernel priority attributes (`cudaGraphInstantiateFlagUseNodePriority`).
    pub use_node_priority: bool,
}

impl InstantiateOptions<'_> {
    /// The `cudaGraphInstantiateFlags` these options and launch mode `M` mean.
    pub fn flags<M: LaunchMode>(&self) -> u64 {
        use sys::cudaGraphInstantiateFlags as F;
        let mut flags = 0;
        for (on, flag) in [
            (M::DEVICE_LAUNCH, F::cudaGraphInstantiateFlagDeviceLaunch),
            (self.upload_stream.is_some(), F::cudaGraphInstantiateFlagUpload),
            (self.auto_free_on_launch, F::cudaGraphInstantiateFlagAutoFreeOnLaunch),
            (self.use_node_priority, F::cudaGraphInstantiateFlagUseNodePriority),
        ] {
            if on {
                flags |= flag.0 as u64;
            }
        }
        flags
    }
}

impl Graph {
    /// Instantiates this graph for launch mode `M` (`cudaGraphInstantiateWithParams`).
    ///
    /// CUDA allows one exec at a time of a graph with conditional nodes. When CUDA reports
    /// why instantiation failed (`result_out`, `errNode_out`), the error says so and names
    /// the node's kind.
    ///
    /// For [`DeviceLaunch`], a dropped exec of a graph with the same shape (node kinds and
    /// kernels in node order, edges), device and options is reused when there is one: it is
    /// updated to this graph (`cudaGraphExecUpdate`), every node enabled, and it behaves as a
    /// new exec of this graph ([`GraphExec::is_recycled`] tells). Dropped device-launch execs
    /// are kept for this instead of destroyed, because destroying them breaks later device
    /// launches on CUDA 13.0 (see [`set_exec_pool_capacity`](crate::graph::set_exec_pool_capacity)).
    ///
    /// ```no_run
    /// use cuda_graph::graph::{DeviceLaunch, Graph, HostLaunch, InstantiateOptions};
    /// let stream = cuda_graph::Stream::new()?;
    /// let graph = Graph::new()?;
    /// let host = graph.instantiate::<HostLaunch>(Default::default())?;
    /// let device = graph.instantiate::<DeviceLaunch>(InstantiateOptions {
    ///     upload_stream: Some(&stream),
    ///     ..Default::default()
    /// })?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    ///
    /// Instantiated on the graph's device ([`GraphBuilder::device`](crate::GraphBuilder::device)),
    /// whatever the thread's current device is; an upload stream of another device is
    /// refused, naming both.
    ///
    /// The common case, an exec launched from the host with no options, is
    /// [`instantiate_default`](Self::instantiate_default).
    pub fn instantiate<M: LaunchMode>(&self, options: InstantiateOptions<'_>) -> Result<GraphExec<M>> {
        if let Some(stream) = options.upload_stream {
            self.expect_device(stream.device(), "Graph::instantiate", "the upload stream")?;
        }
        self.device().with_current(|| self.instantiate_here(options))
    }

    /// An exec launched from the host, with no options: the common case,
    /// `instantiate::<HostLaunch>(InstantiateOptions::default())` (see
    /// [`instantiate`](Self::instantiate), whose errors it returns).
    ///
    /// ```no_run
    /// use cuda_graph::graph::Graph;
    /// let stream = cuda_graph::Stream::new()?;
    /// let graph = Graph::new()?;
    /// graph.add_empty(&[])?;
    /// let exec = graph.instantiate_default()?;
    /// exec.launch(&stream)?;
    /// stream.synchronize()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn instantiate_default(&self) -> Result<GraphExec<HostLaunch>> {
        self.instantiate(InstantiateOptions::default())
    }

    fn instantiate_here<M: LaunchMode>(&self, options: InstantiateOptions<'_>) -> Result<GraphExec<M>> {
        let flags = options.flags::<M>();
        // Device-launch execs are reused rather than destroyed (see `exec_pool`): find one of
        // this graph's shape first.
        let shape = if M::DEVICE_LAUNCH {
            let upload = sys::cudaGraphInstantiateFlags::cudaGraphInstantiateFlagUpload.0 as u64;
            self.core().locked("Graph::instantiate", |state| {
                // From here on an exec may name its nodes by this graph's: none may be
                // removed (`edit`).
                state.instantiated = true;
                refuse_pinned_for_device_launch::<M>(state, "Graph::instantiate")?;
                Ok(exec_pool::shape_of(self.as_raw(), flags & !upload))
            })?
        } else {
            None
        };
        if let Some(shape) = &shape {
            if let Some(parked) = exec_pool::take(&shape.key) {
                if let Some(exec) = self.reuse(parked, shape, &options)? {
                    return Ok(exec);
                }
            }
        }
        let mut params = sys::cudaGraphInstantiateParams {
            flags,
            uploadStream: options.upload_stream.map_or(ptr::null_mut(), Stream::as_raw),
            ..Default::default()
        };
        let (raw, need_fence, shape) = self.core().locked("Graph::instantiate", |state| {
            // From here on the exec names its nodes by this graph's: none may be removed
            // (`edit`). Set before the call, under the same lock.
            state.instantiated = true;
            refuse_pinned_for_device_launch::<M>(state, "Graph::instantiate")?;
            let mut raw = ptr::null_mut();
            // SAFETY: the graph is alive and locked; `raw` and `params` are valid; the upload
            // stream, if any, is borrowed for the call. `instantiate` runs this inside
            // `with_current`, which made the graph's device's primary context current.
            let status =
                unsafe { sys::bound::cudaGraphInstantiateWithParams(&mut raw, self.as_raw(), &mut params) };
            if status != sys::cudaError::cudaSuccess {
                let node = params.errNode_out;
                // Where the node is: in the root graph, or in a body (or child graph) below it.
                let in_root = node.is_null() || crate::graph::list_nodes(self.as_raw()).1.contains(&node);
                let place = Place { device_launch: M::DEVICE_LAUNCH, in_root };
                return Err(instantiate_error(status, params.result_out, node, place));
            }
            // Read again under this lock: the shape the exec has, should nodes have been
            // added (by a capture on another thread) since the first read.
            let shape = shape.and_then(|first| exec_pool::shape_of(self.as_raw(), first.key_flags()));
            Ok((raw, state.execs_need_fence(self.device()), shape))
        })?;
        let recycle = shape.map(|shape| Recyclable::new(self.core(), shape));
        let mut exec = self.wrap_exec(raw, recycle, None);
        // No launch happened yet: if this fails, the exec is dropped unlaunched. Device-launch
        // execs always fence their host launches: drop waits for the last one before the exec
        // is parked for reuse.
        exec.release.ensure_fence(need_fence || M::DEVICE_LAUNCH)?;
        exec.refresh_pinned();
        Ok(exec)
    }

    pub(in crate::graph) fn wrap_exec<M: LaunchMode>(
        &self, raw: sys::cudaGraphExec_t, recycle: Option<Recyclable>, alias: Option<NodeAlias>,
    ) -> GraphExec<M> {
        GraphExec {
            raw,
            release: ExecRelease { raw, fence: None, unfenced_launch: Default::default(), recycle },
            source: self.core().clone(),
            alias,
            recycled: false,
            params_from: vec![self.core().clone()],
            overrides: HashMap::new(),
            retired: RetiredList::default(),
            pinned: Vec::new(),
            _mode: PhantomData,
            _not_sync: PhantomData,
        }
    }
}

/// Refuses, for [`DeviceLaunch`], graphs whose nodes use pinned host memory: launches from
/// the device pass no [`GraphExec::launch`], so nothing could keep host slices away from them.
pub(in crate::graph) fn refuse_pinned_for_device_launch<M: LaunchMode>(
    state: &CoreState, call: &'static str,
) -> Result<()> {
    if M::DEVICE_LAUNCH && state.keep_alive.iter().any(|owner| owner.is::<PinnedAllocation>()) {
        return Err(CudaError::refused(call, ExecRefusal::PinnedForDeviceLaunch));
    }
    Ok(())
}

/// What instantiation was for and where the node CUDA named is, for the reason given.
#[derive(Debug, Clone, Copy)]
struct Place {
    /// Instantiated for device launch.
    device_launch: bool,
    /// The node is one of the root graph's (not inside a conditional body or child graph).
    in_root: bool,
}

/// The instantiation failure, with CUDA's reason and the offending node's kind when given.
fn instantiate_error(
    status: sys::cudaError_t, result: sys::cudaGraphInstantiateResult, node: sys::cudaGraphNode_t,
    place: Place,
) -> CudaError {
    let api = CudaError::from_code(status.0 as i32, "cudaGraphInstantiateWithParams");
    let Some(reason) = instantiate_reason(result, place) else { return api };
    let node_named = !node.is_null();
    // The node is one of the graph's (CUDA returned it); its kind is only for the message.
    let node_kind = if node_named { kind_of(node).ok().map(|kind| kind.to_string()) } else { None };
    CudaError::refused(
        "cudaGraphInstantiateWithParams",
        ExecRefusal::Instantiate { status: Box::new(api), reason, node_named, node_kind },
    )
}

/// Why instantiation failed, for the results that say more than "error".
fn instantiate_reason(result: sys::cudaGraphInstantiateResult, place: Place) -> Option<InstantiateFailure> {
    use sys::cudaGraphInstantiateResult as R;
    Some(match result {
        R::cudaGraphInstantiateInvalidStructure => InstantiateFailure::InvalidStructure,
        R::cudaGraphInstantiateNodeOperationNotSupported if place.device_launch => {
            InstantiateFailure::NotForDeviceLaunch
        }
        R::cudaGraphInstantiateNodeOperationNotSupported if !place.in_root => InstantiateFailure::NotInBody,
        R::cudaGraphInstantiateNodeOperationNotSupported => InstantiateFailure::NotSupported,
        R::cudaGraphInstantiateMultipleDevicesNotSupported => InstantiateFailure::MultipleDevices,
        R::cudaGraphInstantiateConditionalHandleUnused => InstantiateFailure::HandleUnused,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::HostLaunch;
    use crate::Refusal;

    #[test]
    fn options_and_mode_make_the_flags() {
        assert_eq!(InstantiateOptions::default().flags::<HostLaunch>(), 0);
        assert_eq!(InstantiateOptions::default().flags::<DeviceLaunch>(), 4);
        let options =
            InstantiateOptions { auto_free_on_launch: true, use_node_priority: true, ..Default::default() };
        assert_eq!(options.flags::<DeviceLaunch>(), 1 | 4 | 8);
    }

    #[test]
    fn informative_results_are_explained_and_others_are_not() {
        use sys::cudaGraphInstantiateResult as R;
        let device = Place { device_launch: true, in_root: true };
        let body = Place { device_launch: false, in_root: false };
        let root = Place { device_launch: false, in_root: true };
        assert_eq!(instantiate_reason(R::cudaGraphInstantiateSuccess, device), None);
        assert_eq!(instantiate_reason(R::cudaGraphInstantiateError, device), None);
        let unsupported =
            |place| instantiate_reason(R::cudaGraphInstantiateNodeOperationNotSupported, place).unwrap();
        assert_eq!(unsupported(device), InstantiateFailure::NotForDeviceLaunch);
        assert_eq!(unsupported(body), InstantiateFailure::NotInBody);
        assert_eq!(unsupported(root), InstantiateFailure::NotSupported);
        let err = instantiate_error(
            sys::cudaError::cudaErrorInvalidValue,
            R::cudaGraphInstantiateConditionalHandleUnused,
            ptr::null_mut(),
            root,
        );
        match err.refusal() {
            Some(Refusal::Exec(ExecRefusal::Instantiate { status, reason, node_named, node_kind })) => {
                assert_eq!(status.code(), Some(1));
                assert_eq!(*reason, InstantiateFailure::HandleUnused);
                assert!(!node_named && node_kind.is_none());
            }
            other => panic!("expected an instantiation refusal, got {other:?}"),
        }
        let text = err.to_string();
        assert!(text.contains("cudaErrorInvalidValue (1)") && text.contains("conditional handle"), "{text}");
    }
}
