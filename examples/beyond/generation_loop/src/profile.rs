//! Where a step's time goes, measured beside the ways with the same events, by graphs that run
//! the whole generation in one launch each ([`crate::graphs`]):
//! - **step chain**: every step of the generation unrolled into one graph (the step's four
//!   kernels, step after step): the steps' GPU time with no loop control at all. Way (c) minus
//!   it is what the WHILE loop adds per step; (b) minus it, the host round trip of a graph per
//!   step; (a) minus it, that of stream launches. The same with programmatic edges inside each
//!   step is (d)'s chain.
//! - **empty WHILE**: a WHILE loop, run for as many steps, whose body is four kernels of the
//!   step's geometry that do nothing (the last counts the steps and ends the loop): the floor
//!   of (c) without the step's work.
//! - **WHILE of several steps**: (c) with [`STEPS_PER_ITERATION`] steps in the body, so that
//!   the loop's control is paid once per that many steps (the steps of the last iteration past
//!   the end change nothing: every sequence is finished); and the same for (d).

/// Steps in the body of [`Probe::WhileUnrolled`].
pub const STEPS_PER_ITERATION: u32 = 4;

/// What the profile measures beside the ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// Every step of the generation unrolled into one graph: the steps' GPU time alone.
    StepChain,
    /// The same with programmatic edges inside each step, as in (d).
    StepChainPdl,
    /// A WHILE loop of as many steps whose body is four do-nothing kernels of the step's
    /// geometry: loop control and launches alone.
    EmptyWhile,
    /// (c) with [`STEPS_PER_ITERATION`] steps in the WHILE body.
    WhileUnrolled,
    /// (d) with [`STEPS_PER_ITERATION`] steps in the WHILE body.
    WhileUnrolledPdl,
}

impl Probe {
    /// Every probe, in the order they run.
    pub const ALL: [Probe; 5] = [
        Probe::StepChain,
        Probe::StepChainPdl,
        Probe::EmptyWhile,
        Probe::WhileUnrolled,
        Probe::WhileUnrolledPdl,
    ];

    /// The short name used in JSON.
    ///
    /// ```
    /// assert_eq!(generation_loop::profile::Probe::EmptyWhile.key(), "empty_while");
    /// ```
    pub fn key(self) -> &'static str {
        match self {
            Probe::StepChain => "step_chain",
            Probe::StepChainPdl => "step_chain_pdl",
            Probe::EmptyWhile => "empty_while",
            Probe::WhileUnrolled => "while_unrolled",
            Probe::WhileUnrolledPdl => "while_unrolled_pdl",
        }
    }

    /// The label used in checks and tables.
    pub fn label(self) -> &'static str {
        match self {
            Probe::StepChain => "all steps unrolled in one graph (no loop control)",
            Probe::StepChainPdl => "all steps unrolled in one graph, programmatic edges",
            Probe::EmptyWhile => "WHILE loop of 4 empty kernels (no step work)",
            Probe::WhileUnrolled => "(c) with 4 steps per WHILE iteration",
            Probe::WhileUnrolledPdl => "(d) with 4 steps per WHILE iteration",
        }
    }

    /// Whether it needs programmatic dependent launch (sm_90 and later).
    pub fn programmatic(self) -> bool {
        matches!(self, Probe::StepChainPdl | Probe::WhileUnrolledPdl)
    }

    /// Whether it generates tokens (checked against the reference) or only counts steps.
    pub fn generates(self) -> bool {
        self != Probe::EmptyWhile
    }
}
