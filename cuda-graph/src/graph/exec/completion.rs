//! A launch whose completion is a future ([`GraphExec::launch_completion`]).

use super::{GraphExec, LaunchMode};
use crate::completion::Completion;
use crate::error::Result;
use crate::stream::Stream;

impl<M: LaunchMode> GraphExec<M> {
    /// Launches the exec on `stream` ([`launch`](GraphExec::launch)) and returns a future
    /// that resolves once this launch, and the work queued on `stream` before it, has
    /// finished ([`Stream::completion`]); no thread blocks meanwhile.
    ///
    /// ```no_run
    /// # async fn f(exec: cuda_graph::graph::GraphExec<cuda_graph::graph::HostLaunch>) -> cuda_graph::Result<()> {
    /// let stream = cuda_graph::Stream::new()?;
    /// exec.launch_completion(&stream)?.await?;
    /// # Ok(()) }
    /// ```
    pub fn launch_completion(&self, stream: &Stream) -> Result<Completion> {
        self.launch(stream)?;
        stream.completion()
    }
}
