//! Recording cudarc work into a graph of this crate ([`capture_cudarc`]).

use std::sync::Arc;

use ::cudarc::driver::{CudaContext, CudaStream};

use super::driver_error;
use crate::error::{CudaError, Result};
use crate::graph::{CaptureMode, Graph};
use crate::stream::Stream;

/// Records the work `f` queues on the cudarc stream it is given into a new [`Graph`]:
/// `stream` (this crate's) captures, and cudarc sees it as a stream of `ctx`
/// ([`Stream::to_cudarc`]). The graph can then gain conditional nodes, be instantiated,
/// updated and launched as any other; work of this crate queued on `stream` meanwhile is
/// captured too, its buffers kept by the graph.
///
/// cudarc's event tracking does not survive capture: once a context runs several streams
/// with tracking on (`is_managing_stream_synchronization`), each cudarc launch makes the
/// stream wait on events recorded outside the capture, which CUDA refuses and which
/// invalidates it. Such a context is refused before anything is captured, with an error
/// that says so; turn tracking off (`unsafe { ctx.disable_event_tracking() }`, before the
/// slices the work uses are made) or use one stream. Errors cudarc recorded during `f`
/// (`CudaContext::check_err`) fail the capture too.
///
/// # Safety
/// The graph outlives `f`, and cudarc's work carries no owners: every buffer, host slice
/// and module the captured cudarc calls use must stay alive, unmoved, for as long as the
/// graph or an exec made from it may run (attach owners with
/// [`GraphBuilder::keep_alive`](crate::graph::GraphBuilder::keep_alive), or keep them
/// longer than the graph). cudarc's allocating calls (`alloc_zeros`, `clone_htod`, …) would
/// be captured as graph allocations that the returned slices outlive: do not make them in
/// `f`. Copies to host memory land in that memory at every launch.
///
/// ```no_run
/// use cudarc::driver::CudaContext;
/// use cuda_graph::interop::cudarc::capture_cudarc;
/// let ctx = CudaContext::new(0).expect("cudarc context");
/// let stream = cuda_graph::Stream::new()?;
/// let mut data = ctx.default_stream().alloc_zeros::<u32>(256).expect("cudarc allocation");
/// // SAFETY: `data` outlives the graph (dropped after it, below); nothing is allocated in `f`.
/// let graph = unsafe {
///     capture_cudarc(&stream, &ctx, |cudarc_stream| cudarc_stream.memset_zeros(&mut data))
/// }?.0;
/// drop(graph);
/// drop(data);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub unsafe fn capture_cudarc<R>(
    stream: &Stream, ctx: &Arc<CudaContext>, f: impl FnOnce(&Arc<CudaStream>) -> R,
) -> Result<(Graph, R)> {
    const CALL: &str = "capture_cudarc";
    if ctx.is_managing_stream_synchronization() {
        return Err(CudaError::refused(CALL, crate::Refusal::CudarcEventTracking));
    }
    ctx.check_err().map_err(|err| driver_error(err, "an earlier cudarc call (CudaContext::check_err)"))?;
    // SAFETY: the wrapper is dropped at the end of this function, before `stream`.
    let cudarc_stream = unsafe { stream.to_cudarc(ctx) }?;
    let capture = stream.begin_capture(CaptureMode::Global)?;
    let result = f(&cudarc_stream);
    drop(cudarc_stream);
    let graph = capture.end();
    // cudarc keeps errors of calls that cannot return them (event records, say): any of them
    // means the capture holds less than `f` asked for.
    if let Err(err) = ctx.check_err() {
        let recorded = driver_error(err, "a cudarc call during capture (CudaContext::check_err)");
        return Err(match graph {
            Ok(_) => recorded,
            Err(capture) => CudaError::refused(
                CALL,
                crate::Refusal::CudarcCaptureFailed {
                    capture: Box::new(capture),
                    recorded: Box::new(recorded),
                },
            ),
        });
    }
    Ok((graph?, result))
}
