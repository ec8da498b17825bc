//! No panic message or stack trace reaches a user of `cargo xtask`: a panic in a library
//! xtask calls becomes a [`Fail`](crate::Fail), and one in xtask itself a one-line report.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};

/// Runs `f`, turning a panic inside it into `Err` with the panic's message (printed nowhere
/// else: the default hook is silenced while `f` runs).
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let previous = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    // Unwind safety: on a panic `f`'s captures are dropped unused and only the message is kept.
    let outcome = panic::catch_unwind(AssertUnwindSafe(f));
    panic::set_hook(previous);
    outcome.map_err(|payload| message(payload.as_ref()))
}

/// Replaces the default panic report (message, then a backtrace under `RUST_BACKTRACE`) with
/// one line that says it is a bug in xtask.
pub fn report_as_one_line() {
    panic::set_hook(Box::new(|info| {
        let place = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        eprintln!(
            "xtask: internal error{place}: {} (a bug in xtask: please report it)",
            message(info.payload())
        );
    }));
}

fn message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_message() {
        assert_eq!(catch(|| 7), Ok(7));
        assert_eq!(
            catch(|| -> u8 { panic!("Unable to find libclang") }),
            Err("Unable to find libclang".to_string())
        );
        let owned = String::from("formatted 3");
        assert_eq!(catch(|| -> u8 { panic!("{owned}") }), Err("formatted 3".to_string()));
    }
}
