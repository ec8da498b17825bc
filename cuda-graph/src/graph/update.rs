//! Why `cudaGraphExecUpdate` refuses a graph.

use std::fmt;

use cudart_graph_sys as sys;

/// Why CUDA refused to update an exec from a graph (`cudaGraphExecUpdateResult`).
///
/// ```
/// use cuda_graph::UpdateRefusal;
/// assert_eq!(UpdateRefusal::TopologyChanged.to_string(), "the graph's topology changed (nodes or edges added or removed)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UpdateRefusal {
    /// An unspecified error.
    Error,
    /// Nodes or edges were added or removed.
    TopologyChanged,
    /// A node's type changed.
    NodeTypeChanged,
    /// A kernel node's function changed in a way the update cannot apply.
    FunctionChanged,
    /// A node's parameters changed in a way the update cannot apply.
    ParametersChanged,
    /// Something about the graph that the update does not support.
    NotSupported,
    /// A kernel node's function changed to one of an unsupported kind.
    UnsupportedFunctionChange,
    /// A node's attributes changed in a way the update cannot apply.
    AttributesChanged,
    /// A result code this crate does not know.
    Unknown(u32),
}

impl UpdateRefusal {
    /// Maps `cudaGraphExecUpdateResult`; `None` for success.
    pub fn from_raw(result: sys::cudaGraphExecUpdateResult) -> Option<UpdateRefusal> {
        use sys::cudaGraphExecUpdateResult as R;
        Some(match result {
            R::cudaGraphExecUpdateSuccess => return None,
            R::cudaGraphExecUpdateError => UpdateRefusal::Error,
            R::cudaGraphExecUpdateErrorTopologyChanged => UpdateRefusal::TopologyChanged,
            R::cudaGraphExecUpdateErrorNodeTypeChanged => UpdateRefusal::NodeTypeChanged,
            R::cudaGraphExecUpdateErrorFunctionChanged => UpdateRefusal::FunctionChanged,
            R::cudaGraphExecUpdateErrorParametersChanged => UpdateRefusal::ParametersChanged,
            R::cudaGraphExecUpdateErrorNotSupported => UpdateRefusal::NotSupported,
            R::cudaGraphExecUpdateErrorUnsupportedFunctionChange => UpdateRefusal::UnsupportedFunctionChange,
            R::cudaGraphExecUpdateErrorAttributesChanged => UpdateRefusal::AttributesChanged,
            other => UpdateRefusal::Unknown(other.0),
        })
    }
}

impl fmt::Display for UpdateRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UpdateRefusal::Error => f.write_str("an unspecified error"),
            UpdateRefusal::TopologyChanged => f.write_str("the graph's topology changed (nodes or edges added or removed)"),
            UpdateRefusal::NodeTypeChanged => f.write_str("a node's type changed"),
            UpdateRefusal::FunctionChanged => f.write_str("a kernel node's function changed"),
            UpdateRefusal::ParametersChanged => f.write_str("a node's parameters changed in a way that cannot be updated"),
            UpdateRefusal::NotSupported => f.write_str("the graph uses something the update does not support"),
            UpdateRefusal::UnsupportedFunctionChange => f.write_str("a kernel node's function changed to an unsupported kind"),
            UpdateRefusal::AttributesChanged => f.write_str("a node's attributes changed"),
            UpdateRefusal::Unknown(code) => write!(f, "unknown update result {code}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sys::cudaGraphExecUpdateResult as R;

    #[test]
    fn success_is_no_refusal_and_each_code_maps() {
        assert_eq!(UpdateRefusal::from_raw(R::cudaGraphExecUpdateSuccess), None);
        assert_eq!(UpdateRefusal::from_raw(R::cudaGraphExecUpdateErrorTopologyChanged), Some(UpdateRefusal::TopologyChanged));
        assert_eq!(UpdateRefusal::from_raw(R(999)), Some(UpdateRefusal::Unknown(999)));
    }
}
