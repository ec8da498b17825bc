//! Nonblocking communicators (NCCL's `blocking = 0`): waiting for a call NCCL still has in
//! progress, up to a limit, and their destruction. Used by the communicators of worlds that
//! span processes, so that no call waits without limit for a peer.

use std::time::{Duration, Instant};

use cuda_graph::{CudaError, Result};
use cudarc::nccl::sys;

use crate::library::check;

/// Polls a nonblocking communicator until its pending call is no longer in progress:
/// `Ok(None)` when it succeeded, `Ok(Some(waited))` when `limit` passed first, `Err` with
/// NCCL's error when it failed.
pub(crate) fn wait_ready(
    raw: sys::ncclComm_t, call: &'static str, limit: Duration,
) -> Result<Option<Duration>> {
    let start = Instant::now();
    let mut pause = Duration::from_micros(10);
    loop {
        let mut state = sys::ncclResult_t::ncclSuccess;
        // SAFETY: NCCL is loaded and `raw` is a live communicator of the caller's; `state`
        // is a valid, writable result.
        check(unsafe { sys::ncclCommGetAsyncError(raw, &mut state) }, "ncclCommGetAsyncError", Some(raw))?;
        if state != sys::ncclResult_t::ncclInProgress {
            return check(state, call, Some(raw)).map(|()| None);
        }
        if start.elapsed() >= limit {
            return Ok(Some(start.elapsed()));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    }
}

/// Destroys an idle communicator: for a nonblocking one, `ncclCommFinalize` polled up to its
/// limit first (aborted when it does not finish), then `ncclCommDestroy`.
pub(crate) fn destroy(raw: sys::ncclComm_t, nonblocking: Option<Duration>) -> Result<()> {
    if let Some(limit) = nonblocking {
        // SAFETY: `raw` is alive, owned by the caller alone, with no work queued; finalize
        // flushes NCCL's own pending operations before the destroy below.
        let status = unsafe { sys::ncclCommFinalize(raw) };
        let finalized = if status == sys::ncclResult_t::ncclInProgress {
            wait_ready(raw, "ncclCommFinalize", limit)
        } else {
            check(status, "ncclCommFinalize", Some(raw)).map(|()| None)
        };
        match finalized {
            Ok(None) => {}
            Ok(Some(waited)) => {
                // SAFETY: as above; abort ends a communicator whose finalize does not finish.
                let _ = unsafe { sys::ncclCommAbort(raw) };
                return Err(CudaError::Library {
                    library: "NCCL",
                    call: "ncclCommFinalize",
                    code: sys::ncclResult_t::ncclInProgress as i32,
                    message: format!(
                        "still in progress after {:.1} s (a peer rank gone?); the communicator was aborted",
                        waited.as_secs_f64()
                    ),
                });
            }
            Err(err) => {
                // SAFETY: as above.
                let _ = unsafe { sys::ncclCommAbort(raw) };
                return Err(err);
            }
        }
    }
    // SAFETY: the communicator is alive, owned by the caller alone, destroyed once, and no
    // work using it is queued any more (the caller waited for the device; a nonblocking one
    // is finalized).
    check(unsafe { sys::ncclCommDestroy(raw) }, "ncclCommDestroy", None)
}
