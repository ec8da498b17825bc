//! Releasing CUDA resources: what keeps them alive ([`KeepAlive`]), where the errors of their
//! destructors go (the one list of errors no caller could be handed, [`take_unreported_errors`]),
//! and how a destructor that runs inside a host
//! function, where CUDA calls are forbidden, hands its release to another thread
//! ([`drop_outside_host_fn`]); and handles borrowed from their owner, which are never
//! released (`borrowed_handle!`).
//!
//! Every module that owns a CUDA handle releases it through this one; it imports nothing of
//! the crate but [`error`](crate::CudaError), so any module may use it.

use std::any::Any;
use std::cell::RefCell;
use std::mem::ManuallyDrop;

use crate::runtime as sys;

use crate::error::{check, CudaError};

/// A shared owner that keeps an allocation (or any resource a node points to) alive for as
/// long as a graph or exec that uses it. See the crate docs, "Ownership".
pub type KeepAlive = std::sync::Arc<dyn std::any::Any + Send + Sync>;

/// Defines `$borrowed<'a>`, a handle type `$owned` this crate uses but does not own, for
/// `'a`: it derefs to `$owned`, and dropping it never drops (releases) the `$owned` inside.
/// `$borrowed::new` wraps an owned value; the caller of the `unsafe` `borrow_raw` that calls
/// it has promised the handle outlives `'a`.
macro_rules! borrowed_handle {
    ($(#[$doc:meta])* $borrowed:ident($owned:ident)) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $borrowed<'a> {
            inner: ::std::mem::ManuallyDrop<$owned>,
            _owner: ::std::marker::PhantomData<&'a ()>,
        }

        impl $borrowed<'_> {
            /// Wraps `owned`, which is never dropped.
            fn new(owned: $owned) -> Self {
                $borrowed { inner: ::std::mem::ManuallyDrop::new(owned), _owner: ::std::marker::PhantomData }
            }
        }

        impl ::std::ops::Deref for $borrowed<'_> {
            type Target = $owned;

            fn deref(&self) -> &$owned {
                &self.inner
            }
        }
    };
}
pub(crate) use borrowed_handle;

/// Errors no caller could be handed, of every crate that records here.
static UNREPORTED: std::sync::Mutex<Vec<CudaError>> = std::sync::Mutex::new(Vec::new());

/// Records the error of a CUDA call made in `Drop`, which cannot return it. Nothing is lost:
/// [`take_unreported_errors`] hands the records out.
pub(crate) fn record_drop_error(status: sys::cudaError_t, call: &'static str) {
    if let Err(err) = check(status, call) {
        record_unreported_error(err);
    }
}

/// Records an error met where no caller can be handed it: in a destructor, in a host function
/// CUDA calls on its own thread, in a background thread. [`take_unreported_errors`] hands it
/// out, with this crate's own. For crates built on this one (device-launch and
/// cuda-graph-nccl record their destructors' errors here), so that an application drains one
/// list.
///
/// ```
/// use cuda_graph::CudaError;
/// cuda_graph::record_unreported_error(CudaError::from_code(700, "cudaFree"));
/// let errors = cuda_graph::take_unreported_errors();
/// assert!(errors.iter().any(|err| err.to_string().contains("cudaFree")));
/// ```
pub fn record_unreported_error(err: CudaError) {
    UNREPORTED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(err);
}

/// Takes every error met since the last call where no caller could be handed it, for the
/// whole process and every crate of this family: destructors' CUDA errors (a `cudaFree` or
/// `cudaGraphExecDestroy` after the context broke; device-launch's and cuda-graph-nccl's
/// destructors too), host functions' panics ([`CudaError::HostFunctionPanicked`]) and
/// one-shot host functions CUDA called again (`InvalidArgument`). Drops never panic and host
/// functions never unwind into CUDA; they record here. Drain it where the process has one
/// owner of error reporting: taking it takes everyone's.
///
/// ```
/// for err in cuda_graph::take_unreported_errors() {
///     eprintln!("met where no caller could be told: {err}");
/// }
/// ```
pub fn take_unreported_errors() -> Vec<CudaError> {
    std::mem::take(&mut *UNREPORTED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
}

thread_local! {
    /// `Some` while this thread runs a host function: the resources dropped meanwhile.
    static DEFERRED: RefCell<Option<Vec<Box<dyn Any + Send>>>> = const { RefCell::new(None) };
}

/// Runs `body`, the body of a host function, so that what it drops and must call CUDA to
/// release ([`defer_drop`]) is released on a new thread once it returns. Returns the error
/// of starting that thread, if it could not be started: what was deferred is then leaked
/// (a leak is safe, a CUDA call inside a host function is not allowed).
pub(crate) fn run_in_host_fn(body: impl FnOnce()) -> Option<CudaError> {
    let outer = DEFERRED.try_with(|deferred| deferred.borrow_mut().replace(Vec::new())).ok().flatten();
    // Every CUDA call of this crate refuses while the flag is set (see `runtime`).
    crate::runtime::with_host_fn_flag(body);
    let deferred = DEFERRED.try_with(|deferred| std::mem::replace(&mut *deferred.borrow_mut(), outer));
    match deferred {
        Ok(Some(items)) => release_elsewhere(items),
        _ => None,
    }
}

/// Drops `items` on a new thread, where CUDA calls are allowed. If no thread can be started,
/// they are leaked and the error says so.
fn release_elsewhere(items: Vec<Box<dyn Any + Send>>) -> Option<CudaError> {
    if items.is_empty() {
        return None;
    }
    let items = ManuallyDrop::new(items);
    let spawned = std::thread::Builder::new()
        .name("cuda-graph-release".into())
        .spawn(move || drop(ManuallyDrop::into_inner(items)));
    spawned.err().map(|err| {
        CudaError::refused(
            "host function release",
            crate::Refusal::NoReleaseThread { error: err.to_string() },
        )
    })
}

/// True while the calling thread runs a host function of this crate, where CUDA calls are
/// forbidden.
pub(crate) fn in_host_fn() -> bool {
    crate::runtime::in_host_fn()
}

/// For this crate's destructors that call CUDA: inside a host function, where CUDA calls are
/// forbidden, hands what `take` moves out of the value being dropped to [`defer_drop`] and
/// returns `true` (the destructor is done); anywhere else takes nothing and returns `false`.
pub(crate) fn deferred_in_host_fn<T: Send + 'static>(take: impl FnOnce() -> T) -> bool {
    if !in_host_fn() {
        return false;
    }
    defer_drop(take());
    true
}

/// Keeps `item` until the running host function returns, then drops it on another thread.
/// Call only when [`in_host_fn`] is true; otherwise `item` is dropped here.
pub(crate) fn defer_drop<T: Send + 'static>(item: T) {
    let item: Box<dyn Any + Send> = Box::new(item);
    let leftover = DEFERRED
        .try_with(|deferred| match deferred.borrow_mut().as_mut() {
            Some(items) => {
                items.push(item);
                None
            }
            None => Some(item),
        })
        .unwrap_or(None);
    // Not inside a host function after all (or the thread is ending): release it here.
    drop(leftover);
}

/// For destructors of types built on this crate that call CUDA: inside a host function of
/// this crate, where CUDA calls are forbidden, keeps `value` until the function returns and
/// drops it on another thread (`None`); anywhere else gives it back to be released here.
///
/// ```
/// /// Owns a handle that is released with a CUDA call.
/// struct Handle(Option<u64>);
/// impl Drop for Handle {
///     fn drop(&mut self) {
///         let Some(raw) = self.0.take() else { return };
///         // In a host function: this runs again later, on another thread.
///         let Some(mut moved) = cuda_graph::drop_outside_host_fn(Handle(Some(raw))) else { return };
///         let raw = moved.0.take();
///         // ... release `raw` here (CUDA calls are allowed) ...
///         # let _ = raw;
///     }
/// }
/// drop(Handle(Some(7)));
/// ```
pub fn drop_outside_host_fn<T: Send + 'static>(value: T) -> Option<T> {
    if !in_host_fn() {
        return Some(value);
    }
    defer_drop(value);
    None
}
