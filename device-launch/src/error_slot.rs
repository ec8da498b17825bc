//! The device error slot: where `device_launch.cuh`'s helpers record the first failing
//! device-side launch, and the host-side error it becomes.

use std::fmt;

use cuda_graph::{CudaError, DeviceBuffer, DevicePtr};

shared_struct! {
    /// The slot's memory layout, shared with `DlErrorSlot` in `device_launch.cuh`.
    ///
    /// ```
    /// let clear = device_launch::RawErrorSlot::default();
    /// assert_eq!((clear.code, clear.failures), (0, 0));
    /// assert_eq!(size_of::<device_launch::RawErrorSlot>(), 16);
    /// ```
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct RawErrorSlot as "DlErrorSlot" {
        /// First `cudaError_t` recorded; 0 for none.
        pub code: i32,
        /// The [`Operation`] that failed, as its number.
        pub operation: i32,
        /// The source line of the failing helper call.
        pub line: i32,
        /// How many failures were recorded in all.
        pub failures: u32,
    }
}

/// Which device-side helper failed.
///
/// ```no_run
/// # let slot = device_launch::ErrorSlot::new()?;
/// if let Err(err) = slot.check()? {
///     if err.operation == device_launch::Operation::TailLaunch {
///         eprintln!("a tail launch failed at line {}", err.line);
///     }
/// }
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Operation {
    /// `DL_FIRE_AND_FORGET`.
    FireAndForget,
    /// `DL_TAIL_LAUNCH`.
    TailLaunch,
    /// `DL_SIBLING_LAUNCH`.
    SiblingLaunch,
    /// `DL_RELAUNCH_SELF`.
    RelaunchSelf,
    /// `DL_LAUNCH_KERNEL` (a CDP2 kernel launch).
    KernelLaunch,
    /// `DL_CHECK` (the user's own check).
    User,
    /// A number this crate does not know.
    Unknown(i32),
}

impl Operation {
    fn from_raw(raw: i32) -> Operation {
        match raw {
            1 => Operation::FireAndForget,
            2 => Operation::TailLaunch,
            3 => Operation::SiblingLaunch,
            4 => Operation::RelaunchSelf,
            5 => Operation::KernelLaunch,
            6 => Operation::User,
            other => Operation::Unknown(other),
        }
    }
}

/// A device-side launch failed: the first failure recorded into an [`ErrorSlot`].
///
/// ```no_run
/// # let slot = device_launch::ErrorSlot::new()?;
/// match slot.check()? {
///     Ok(()) => println!("every device-side launch ran"),
///     Err(err) => eprintln!("{err} (hint: {:?})", err.hint()),
/// }
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct DeviceLaunchError {
    /// The CUDA error the device-side call returned.
    pub code: i32,
    /// The helper that failed.
    pub operation: Operation,
    /// The source line of that helper call in the `.cu` file.
    pub line: u32,
    /// How many device-side failures were recorded in all (the first is reported).
    pub failures: u32,
}

impl fmt::Display for DeviceLaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cuda = CudaError::from_code(self.code, "device-side launch");
        let (name, message) = match &cuda {
            CudaError::Api { name, message, .. } => (*name, *message),
            _ => ("?", "?"),
        };
        write!(
            f,
            "device-side {:?} at line {} failed: {name} ({}): {message}",
            self.operation, self.line, self.code
        )?;
        if let Some(hint) = self.hint() {
            write!(f, "; {hint}")?;
        }
        if self.failures > 1 {
            write!(f, " ({} device-side failures in all; the first is shown)", self.failures)?;
        }
        Ok(())
    }
}

impl DeviceLaunchError {
    /// What this failure most likely means, from what CUDA 13.0 was measured to do.
    pub fn hint(&self) -> Option<String> {
        use cudadevrt_sys::{FIRE_AND_FORGET_LIMIT, TAIL_LAUNCH_LIMIT};
        const STILL_PENDING: &str = "or the graph's previous launch is still pending";
        match (self.code, self.operation) {
            (1, Operation::FireAndForget | Operation::SiblingLaunch) => Some(format!(
                "past the {FIRE_AND_FORGET_LIMIT} fire-and-forget launches one kernel may make, {STILL_PENDING}"
            )),
            (1, Operation::TailLaunch | Operation::RelaunchSelf) => {
                Some(format!("past the {TAIL_LAUNCH_LIMIT} tail launches one kernel may make, {STILL_PENDING}"))
            }
            (801, _) => Some(
                "device graph launch needs the launching kernel to run inside a graph (launch the launcher's graph, not the kernel on a stream)".into(),
            ),
            (_, Operation::KernelLaunch) if self.code == 69 => {
                Some("too many CDP launches pending at once: raise device_launch::limits::LaunchLimits::pending_launch_count (Limit::DevRuntimePendingLaunchCount)".into())
            }
            _ => None,
        }
    }
}

/// Device memory for one [`RawErrorSlot`]: pass [`ErrorSlot::ptr`] to kernels that use the
/// `device_launch.cuh` helpers, synchronize, then [`ErrorSlot::check`].
///
/// ```no_run
/// use device_launch::ErrorSlot;
/// let slot = ErrorSlot::new()?;
/// // launch kernels taking `slot.ptr()` as `DlErrorSlot*`, synchronize their stream, then:
/// if let Err(err) = slot.check()? {
///     eprintln!("{err}");
/// }
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Debug)]
pub struct ErrorSlot {
    buffer: DeviceBuffer<RawErrorSlot>,
}

impl ErrorSlot {
    /// A cleared slot.
    pub fn new() -> cuda_graph::Result<ErrorSlot> {
        Ok(ErrorSlot { buffer: DeviceBuffer::zeroed(1)? })
    }

    /// The pointer kernels receive as `DlErrorSlot*`.
    pub fn ptr(&self) -> DevicePtr<RawErrorSlot> {
        self.buffer.ptr()
    }

    /// Reads the slot (a synchronous copy: synchronize non-blocking streams that ran the
    /// kernels first). The outer `Result` is the read; the inner one is what the device
    /// recorded.
    pub fn check(&self) -> cuda_graph::Result<Result<(), DeviceLaunchError>> {
        let raw = self.read()?;
        Ok(interpret(raw))
    }

    /// Like [`ErrorSlot::check`], then clears the slot for the next run.
    pub fn take(&mut self) -> cuda_graph::Result<Result<(), DeviceLaunchError>> {
        let outcome = self.check()?;
        self.buffer.copy_from_host(&[RawErrorSlot::default()])?;
        Ok(outcome)
    }

    /// The raw slot contents.
    pub fn read(&self) -> cuda_graph::Result<RawErrorSlot> {
        let mut raw = [RawErrorSlot::default()];
        self.buffer.copy_to_host(&mut raw)?;
        Ok(raw[0])
    }
}

fn interpret(raw: RawErrorSlot) -> Result<(), DeviceLaunchError> {
    if raw.code == 0 {
        return Ok(());
    }
    Err(DeviceLaunchError {
        code: raw.code,
        operation: Operation::from_raw(raw.operation),
        line: raw.line.max(0) as u32,
        failures: raw.failures.max(1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_slot_is_ok() {
        assert_eq!(interpret(RawErrorSlot::default()), Ok(()));
    }

    #[test]
    fn a_recorded_failure_names_operation_line_and_hint() {
        let err = interpret(RawErrorSlot { code: 1, operation: 1, line: 42, failures: 3 }).unwrap_err();
        assert_eq!(err.operation, Operation::FireAndForget);
        let text = err.to_string();
        assert!(text.contains("FireAndForget at line 42"), "{text}");
        assert!(text.contains("cudaErrorInvalidValue (1)"), "{text}");
        assert!(
            text.contains(&format!("{} fire-and-forget", cudadevrt_sys::FIRE_AND_FORGET_LIMIT)),
            "{text}"
        );
        assert!(text.contains("3 device-side failures"), "{text}");
    }

    #[test]
    fn the_not_supported_failure_explains_the_graph_rule() {
        let err = interpret(RawErrorSlot { code: 801, operation: 2, line: 7, failures: 1 }).unwrap_err();
        assert!(err.to_string().contains("inside a graph"), "{err}");
    }

    #[test]
    fn the_operation_numbers_match_the_header() {
        let members = crate::header::members("enum DlOperation : int32_t {");
        // Numbered from 0 in order: each member's number is its index.
        let expected = [
            "DL_OP_NONE = 0",
            "DL_OP_FIRE_AND_FORGET",
            "DL_OP_TAIL",
            "DL_OP_SIBLING",
            "DL_OP_RELAUNCH_SELF",
            "DL_OP_KERNEL",
            "DL_OP_USER",
        ];
        assert_eq!(members, expected);
        let operations: Vec<Operation> = (1..=6).map(Operation::from_raw).collect();
        assert_eq!(
            operations,
            [
                Operation::FireAndForget,
                Operation::TailLaunch,
                Operation::SiblingLaunch,
                Operation::RelaunchSelf,
                Operation::KernelLaunch,
                Operation::User
            ]
        );
        assert_eq!(Operation::from_raw(7), Operation::Unknown(7));
    }

    #[test]
    fn the_slot_layout_matches_the_header() {
        assert_eq!(size_of::<RawErrorSlot>(), 16);
        let fields = crate::header::members("struct DlErrorSlot {");
        assert_eq!(fields, ["int32_t code", "int32_t operation", "int32_t line", "uint32_t failures"]);
    }
}
