//! Where the workspace is, and what a task needs installed before it runs.

use std::path::{Path, PathBuf};

use cuda_build::Toolkit;

use crate::{setup_cuda, Fail};

/// The workspace root (the folder above xtask/).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one folder below the workspace root")
        .to_path_buf()
}

/// The toolkit that build scripts will find, installing one into .cuda/ when none is found.
pub fn ensure_toolkit() -> Result<Toolkit, Fail> {
    match Toolkit::find_from(&root()) {
        Ok(toolkit) => {
            println!("toolkit: CUDA {} at {}", toolkit.version(), toolkit.root().display());
            Ok(toolkit)
        }
        Err(not_found) => {
            println!("toolkit: none found, installing one into .cuda/");
            for place in &not_found.searched {
                println!("  looked in {place}");
            }
            setup_cuda::install_toolkit()
        }
    }
}
