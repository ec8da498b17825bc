//! DOT export (`cudaGraphDebugDotPrint`), for people who want to look at a graph.

use std::ffi::CString;
use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::runtime as sys;

use super::GraphBuilder;
use crate::error::refusal::EditRefusal;
use crate::error::{check, CudaError, Result};

/// A DOT file path of this process that no other call uses.
fn temp_path() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("cuda-graph-{}-{n}.dot", std::process::id()))
}

/// Removes the file when dropped, whatever happened.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        // Nothing to report if it was never written.
        let _ = fs::remove_file(&self.0);
    }
}

impl GraphBuilder {
    /// This graph (nodes, edges, kinds, kernel names, memcpy directions; conditional bodies
    /// included) in Graphviz DOT form (`cudaGraphDebugDotPrint`, through a temporary file).
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// graph.add_empty(&[])?;
    /// let dot = graph.to_dot()?;
    /// assert!(dot.contains("digraph"));
    /// std::fs::write("graph.dot", dot).unwrap(); // then: dot -Tpng graph.dot > graph.png
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn to_dot(&self) -> Result<String> {
        self.dot(0)
    }

    /// [`to_dot`](Self::to_dot) with every parameter CUDA can print (kernel arguments, copy
    /// and memset parameters, handles, conditional parameters).
    ///
    /// ```no_run
    /// let graph = cuda_graph::graph::Graph::new()?;
    /// println!("{}", graph.to_dot_verbose()?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn to_dot_verbose(&self) -> Result<String> {
        self.dot(sys::cudaGraphDebugDotFlags::cudaGraphDebugDotFlagsVerbose.0)
    }

    fn dot(&self, flags: u32) -> Result<String> {
        const CALL: &str = "GraphBuilder::to_dot";
        let file = TempFile(temp_path());
        let path = CString::new(file.0.to_string_lossy().into_owned()).map_err(|_| {
            CudaError::refused(CALL, EditRefusal::DotPathNul { path: file.0.display().to_string() })
        })?;
        self.core.locked(CALL, |_| {
            // SAFETY: the graph is alive and locked; `path` is a NUL-terminated string that
            // outlives the call.
            check(
                unsafe { sys::cudaGraphDebugDotPrint(self.raw, path.as_ptr(), flags) },
                "cudaGraphDebugDotPrint",
            )
        })?;
        fs::read_to_string(&file.0).map_err(|err| {
            let (path, kind, error) = (file.0.display().to_string(), err.kind(), err.to_string());
            CudaError::refused(CALL, EditRefusal::DotReadBack { path, kind, error })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_paths_differ_and_are_removed() {
        let (a, b) = (temp_path(), temp_path());
        assert_ne!(a, b);
        fs::write(&a, "digraph {}").unwrap();
        drop(TempFile(a.clone()));
        assert!(!a.exists());
    }
}
