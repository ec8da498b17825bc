//! Per-node updates of a not-uploaded device-launch exec, forwarded to `cuda-graph`'s
//! [`GraphExec`](cuda_graph::graph::GraphExec) setters. The exec itself is never handed out
//! (`&mut GraphExec` would let `mem::replace` move it out of its owner, leaving kernels a
//! handle to an exec parked for reuse or destroyed), so these are the only ways to change it.

use cuda_graph::graph::{AsNode, KernelNode, MemcpyNode, MemsetElement, MemsetNode};
use cuda_graph::kernel::{Kernel, LaunchConfig};
use cuda_graph::{DevicePtr, DeviceRepr, KernelArgs};

use super::{DeviceExec, NotUploaded};
use crate::error::Result;

/// Defines each setter as a forward to the [`GraphExec`](cuda_graph::graph::GraphExec) method
/// of the same name, with the same arguments, on the exec this owner holds.
macro_rules! forward_to_exec {
    ($(
        $(#[$doc:meta])*
        pub fn $name:ident$(<$t:ident: $bound:path>)?(&mut self, $($arg:ident: $ty:ty),*);
    )*) => {$(
        $(#[$doc])*
        pub fn $name$(<$t: $bound>)?(&mut self, $($arg: $ty),*) -> Result<()> {
            self.owner.exec().$name($($arg),*)?;
            Ok(())
        }
    )*};
}

impl DeviceExec<NotUploaded> {
    forward_to_exec! {
        /// Sets a kernel node's launch and arguments in the exec
        /// ([`GraphExec::set_kernel_params`](cuda_graph::graph::GraphExec::set_kernel_params)), before upload. No kernel can hold the exec in this
        /// state. (The exec itself is never handed out: moving it out of its owner would leave
        /// kernels a handle to an exec parked or destroyed.)
        ///
        /// ```no_run
        /// # fn f(exec: &mut device_launch::DeviceExec<device_launch::NotUploaded>, node: cuda_graph::graph::KernelNode, kernel: &cuda_graph::Kernel<(cuda_graph::DevicePtr<u32>, u32)>, data: &cuda_graph::DeviceBuffer<u32>) -> device_launch::Result<()> {
        /// exec.set_kernel_params(&node, kernel, cuda_graph::kernel::LaunchConfig::new(1, 32), (data.ptr(), 32))?;
        /// # Ok(()) }
        /// ```
        pub fn set_kernel_params<A: KernelArgs>(
            &mut self, node: &KernelNode, kernel: &Kernel<A>, config: LaunchConfig, args: A
        );

        /// Sets a memcpy node's copy in the exec ([`GraphExec::set_memcpy`](cuda_graph::graph::GraphExec::set_memcpy)), before upload.
        ///
        /// ```no_run
        /// # fn f(exec: &mut device_launch::DeviceExec<device_launch::NotUploaded>, node: cuda_graph::graph::MemcpyNode, a: &cuda_graph::DeviceBuffer<u32>, b: &cuda_graph::DeviceBuffer<u32>) -> device_launch::Result<()> {
        /// exec.set_memcpy(&node, &b.ptr(), &a.ptr(), a.len())?;
        /// # Ok(()) }
        /// ```
        pub fn set_memcpy<T: DeviceRepr>(
            &mut self, node: &MemcpyNode, dst: &DevicePtr<T>, src: &DevicePtr<T>, len: usize
        );

        /// Sets a memset node's fill in the exec ([`GraphExec::set_memset`](cuda_graph::graph::GraphExec::set_memset)), before upload.
        ///
        /// ```no_run
        /// # fn f(exec: &mut device_launch::DeviceExec<device_launch::NotUploaded>, node: cuda_graph::graph::MemsetNode, data: &cuda_graph::DeviceBuffer<u32>) -> device_launch::Result<()> {
        /// exec.set_memset(&node, &data.ptr(), 9u32, data.len())?;
        /// # Ok(()) }
        /// ```
        pub fn set_memset<T: MemsetElement>(
            &mut self, node: &MemsetNode, dst: &DevicePtr<T>, value: T, len: usize
        );

        /// Enables or disables a node in the exec ([`GraphExec::set_node_enabled`](cuda_graph::graph::GraphExec::set_node_enabled)), before
        /// upload.
        ///
        /// ```no_run
        /// # fn f(exec: &mut device_launch::DeviceExec<device_launch::NotUploaded>, node: cuda_graph::graph::MemsetNode) -> device_launch::Result<()> {
        /// exec.set_node_enabled(&node, false)?;
        /// assert!(!exec.node_enabled(&node)?);
        /// # Ok(()) }
        /// ```
        pub fn set_node_enabled(&mut self, node: &dyn AsNode, enabled: bool);
    }

    /// Whether a node is enabled in the exec ([`GraphExec::node_enabled`](cuda_graph::graph::GraphExec::node_enabled)).
    ///
    /// ```no_run
    /// # fn f(exec: &device_launch::DeviceExec<device_launch::NotUploaded>, node: cuda_graph::graph::MemsetNode) -> device_launch::Result<()> {
    /// assert!(exec.node_enabled(&node)?);
    /// # Ok(()) }
    /// ```
    pub fn node_enabled(&self, node: &dyn AsNode) -> Result<bool> {
        Ok(self.owner.exec().node_enabled(node)?)
    }
}
