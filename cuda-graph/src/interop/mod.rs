//! Working with the rest of the Rust CUDA ecosystem.
//!
//! Raw handles come in and go out through each type ([`Stream::from_raw`](crate::Stream::from_raw),
//! [`Stream::borrow_raw`](crate::Stream::borrow_raw), `into_raw`, …; see SOUNDNESS.md for
//! their promises). With the `cudarc` feature, `interop::cudarc` joins this crate to
//! [cudarc](https://docs.rs/cudarc/0.19.10) 0.19.10: its streams used as [`Stream`](crate::Stream)s,
//! its device slices as kernel arguments and graph memory, this crate's streams and buffers
//! handed to it, and cudarc work captured into a [`Graph`](crate::graph::Graph).

#[cfg(feature = "cudarc")]
pub mod cudarc;
