//! Graphs: definitions built node by node or by capture, instantiated into executables.

mod update;

pub use update::UpdateRefusal;
