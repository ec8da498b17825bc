//! What an exec keeps until its launches are done, and what dropping it does: the launch
//! fence, waiting for the last launch, releasing (or leaking) what it keeps, and destroying
//! the exec, or for a device-launch exec parking it for reuse (`exec_pool`).

use std::marker::PhantomData;
use std::ptr;
use std::sync::Arc;

use crate::runtime as sys;

use super::{GraphExec, LaunchMode};
use crate::error::{check, Result};
use crate::graph::exec_pool::{self, Recyclable};
use crate::graph::retired::RETIRED_BEFORE_WAIT;
use crate::graph::GraphCore;
use crate::release::record_drop_error;

/// Owns the exec handle, and the event recorded after each launch when what the exec keeps
/// must outlive the launches (so that drop can wait for the last one; see
/// [`CoreState::execs_need_fence`](crate::graph::CoreState::execs_need_fence)).
pub(super) struct ExecRelease {
    pub(super) raw: sys::cudaGraphExec_t,
    pub(super) fence: Option<sys::cudaEvent_t>,
    /// Set when a launch could be neither fenced nor waited for: drop then leaks what the
    /// exec keeps instead of releasing it under that launch.
    pub(super) unfenced_launch: std::cell::Cell<bool>,
    /// For device-launch execs: drop parks the exec for reuse instead of destroying it.
    pub(super) recycle: Option<Recyclable>,
}

// SAFETY: exec and event handles may be released from any thread.
unsafe impl Send for ExecRelease {}

impl Drop for ExecRelease {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        if crate::release::in_host_fn() {
            // CUDA calls are not allowed inside a host function: release it elsewhere.
            let moved = ExecRelease {
                raw: std::mem::replace(&mut self.raw, ptr::null_mut()),
                fence: self.fence.take(),
                unfenced_launch: self.unfenced_launch.clone(),
                recycle: self.recycle.take(),
            };
            crate::release::defer_drop(moved);
            return;
        }
        if let Some(event) = self.fence.take() {
            // `GraphExec::drop` waited for the last launch before this runs.
            // SAFETY: the event is ours and destroyed once.
            record_drop_error(unsafe { sys::cudaEventDestroy(event) }, "cudaEventDestroy");
        }
        if let Some(recyclable) = self.recycle.take() {
            // `GraphExec::drop` waited for its last host launch (device-launch execs are
            // always fenced), and nothing launches it from the host after this; kernels must
            // not either (the `device-launch` crate waits for them before dropping).
            exec_pool::park(self.raw, recyclable);
            return;
        }
        // SAFETY: the exec is owned and destroyed once; CUDA frees it after launches in flight.
        record_drop_error(unsafe { sys::cudaGraphExecDestroy(self.raw) }, "cudaGraphExecDestroy");
    }
}

impl ExecRelease {
    /// Creates the launch fence if `needed` and not there yet. Call it before the exec's nodes
    /// may use what needs it, so that no launch goes unfenced.
    pub(in crate::graph) fn ensure_fence(&mut self, needed: bool) -> Result<()> {
        if needed && self.fence.is_none() {
            let mut event = ptr::null_mut();
            check(
                // SAFETY: `event` is a valid out-pointer; timing is not needed.
                unsafe { sys::cudaEventCreateWithFlags(&mut event, sys::cudaEventDisableTiming) },
                "cudaEventCreateWithFlags",
            )?;
            self.fence = Some(event);
        }
        Ok(())
    }

    /// Whether every launch so far has completed, as far as what the exec replaced is
    /// concerned: true for an exec that never fenced (nothing it held needed a fence; see
    /// `retired`), else whether the fence completed: checked with `cudaEventQuery`, or
    /// waited for with `cudaEventSynchronize` when `wait`. False after a launch that could
    /// be neither fenced nor waited for, and when CUDA reports an error (then nothing is
    /// released, which is safe).
    pub(super) fn last_launch_finished(&self, wait: bool) -> bool {
        let Some(event) = self.fence else { return true };
        if self.unfenced_launch.get() {
            return false;
        }
        let status = if wait {
            // SAFETY: the event is ours and alive; launches of one exec run in launch order,
            // so its last record covers all launches since it was created.
            unsafe { sys::cudaEventSynchronize(event) }
        } else {
            // SAFETY: as above; only queries.
            unsafe { sys::cudaEventQuery(event) }
        };
        status == sys::cudaError::cudaSuccess
    }

    /// Waits for the last launch, if launches are fenced, and destroys the fence. Returns
    /// false when waiting failed: the launch may then still use what the exec keeps. Not for
    /// host functions (it calls CUDA).
    pub(super) fn wait_for_last_launch(&mut self) -> bool {
        let Some(event) = self.fence.take() else { return true };
        if self.unfenced_launch.get() {
            // SAFETY: the event is ours and destroyed once (taken out of `fence`).
            record_drop_error(unsafe { sys::cudaEventDestroy(event) }, "cudaEventDestroy");
            return false;
        }
        // SAFETY: the event is ours and alive; waiting on a never-recorded event returns at
        // once. Launches of one exec run in launch order, so the last one's fence covers all.
        let status = unsafe { sys::cudaEventSynchronize(event) };
        // SAFETY: destroyed once (taken out of `fence` above); a pending record is fine.
        record_drop_error(unsafe { sys::cudaEventDestroy(event) }, "cudaEventDestroy");
        if status == sys::cudaError::cudaSuccess {
            return true;
        }
        record_drop_error(status, "cudaEventSynchronize");
        false
    }
}

impl<M: LaunchMode> Drop for GraphExec<M> {
    fn drop(&mut self) {
        let waits_or_parks = self.release.fence.is_some() || self.release.recycle.is_some();
        if waits_or_parks && crate::release::in_host_fn() {
            // CUDA calls are not allowed inside a host function: wait, then release (or park)
            // it all, on another thread, so that the graphs it keeps are released after it is
            // parked, never before. `self` is left with nothing to release.
            let moved = GraphExec::<M> {
                raw: self.raw,
                release: ExecRelease {
                    raw: std::mem::replace(&mut self.release.raw, ptr::null_mut()),
                    fence: self.release.fence.take(),
                    unfenced_launch: self.release.unfenced_launch.clone(),
                    recycle: self.release.recycle.take(),
                },
                source: self.source.clone(),
                alias: self.alias.take(),
                recycled: self.recycled,
                params_from: std::mem::take(&mut self.params_from),
                overrides: std::mem::take(&mut self.overrides),
                retired: self.retired.take(),
                pinned: std::mem::take(&mut self.pinned),
                _mode: PhantomData,
                _not_sync: PhantomData,
            };
            crate::release::defer_drop(moved);
            return;
        }
        if self.release.wait_for_last_launch() {
            self.retired.release();
            self.release_graphs_only_named();
            return; // `release` destroys or parks the exec, then the fields release what it kept
        }
        // The last launch may still use host functions or memory the exec keeps: leak them
        // rather than free them under that launch (`retired` leaks itself when dropped). A
        // device-launch exec is leaked too (neither reused nor destroyed).
        if M::DEVICE_LAUNCH {
            self.release.raw = ptr::null_mut();
        }
        self.release.recycle = None;
        std::mem::forget(self.source.clone());
        std::mem::forget(std::mem::take(&mut self.params_from));
        std::mem::forget(std::mem::take(&mut self.overrides));
        std::mem::forget(std::mem::take(&mut self.pinned));
    }
}

impl<M: LaunchMode> GraphExec<M> {
    /// Before a change of a device-launch exec (an update, a per-node setter, enabling or
    /// disabling a node): waits for its last host launch. Such an exec may relaunch itself
    /// from the device (a tail launch of `cudaGetCurrentGraphExec()`, as a self-relaunching
    /// loop does) for as long as that launch runs, and CUDA leaves changing an exec that the
    /// device may be launching undefined. Device launches belong to the host launch that
    /// started them, so its fence (device-launch execs always fence) completes after the last.
    /// Host-launch execs change at once: later launches see the change, earlier ones not.
    pub(in crate::graph) fn wait_before_change(&self, call: &'static str) -> Result<()> {
        if !M::DEVICE_LAUNCH || self.release.last_launch_finished(true) {
            return Ok(());
        }
        Err(crate::error::CudaError::refused(call, crate::error::refusal::ExecRefusal::LastLaunchUnwaited))
    }

    /// Lets go of what the graphs this exec keeps point to, for each graph that only
    /// execs naming their nodes by it (see `exec_pool::OriginRef`) would hold after this exec.
    fn release_graphs_only_named(&self) {
        let mut graphs: Vec<&Arc<GraphCore>> =
            std::iter::once(&self.source).chain(&self.params_from).collect();
        graphs.sort_by_key(|graph| Arc::as_ptr(graph));
        graphs.dedup_by(|a, b| Arc::ptr_eq(a, b));
        for graph in graphs {
            let held = std::iter::once(&self.source)
                .chain(&self.params_from)
                .filter(|g| Arc::ptr_eq(g, graph))
                .count();
            exec_pool::owner_leaving(graph, held);
        }
    }

    /// Records that a node was disabled: a reuse of this exec must enable it again.
    pub(in crate::graph) fn note_node_disabled(&mut self) {
        if let Some(recyclable) = &mut self.release.recycle {
            recyclable.nodes_toggled = true;
        }
    }

    /// Releases what updates and setters replaced if the launches that may use it have
    /// completed (checked, not waited for, unless more than [`RETIRED_BEFORE_WAIT`] sets are
    /// kept). See `retired`.
    pub(in crate::graph) fn release_retired(&mut self) {
        if self.retired.is_empty() {
            return;
        }
        let wait = self.retired.len() > RETIRED_BEFORE_WAIT;
        if self.release.last_launch_finished(wait) {
            self.retired.release();
        }
    }

    /// Starts recording launch fences if `needed` (see
    /// [`CoreState::execs_need_fence`](crate::graph::CoreState::execs_need_fence)); call it before the
    /// nodes may use what needs them.
    pub(in crate::graph) fn ensure_fence(&mut self, needed: bool) -> Result<()> {
        if !needed || self.release.fence.is_some() {
            // Nothing to create: no device to make current (two CUDA calls saved per update).
            return Ok(());
        }
        // The fence is recorded on the exec's streams: an event of the exec's device.
        let device = self.source.device();
        device.with_current(|| self.release.ensure_fence(needed))
    }
}
