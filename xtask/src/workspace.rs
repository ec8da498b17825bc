//! Where the workspace is.

use std::path::{Path, PathBuf};

/// The workspace root (the folder above xtask/).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one folder below the workspace root")
        .to_path_buf()
}
