//! Finding the CUDA toolkit: where to look, in which order, and what counts as a toolkit.

use std::env;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// The name of the project-local toolkit folder that `cargo xtask setup-cuda` fills.
pub const LOCAL_TOOLKIT_DIR: &str = ".cuda";

/// A CUDA toolkit on disk: `bin/nvcc`, its headers and its libraries.
///
/// ```no_run
/// let toolkit = cuda_build::Toolkit::find().expect("a CUDA toolkit");
/// println!("nvcc: {}", toolkit.nvcc().display());
/// println!("CUDA {}", toolkit.version());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolkit {
    root: PathBuf,
    lib_dir: PathBuf,
    version: CudaVersion,
    found_by: Source,
}

/// A CUDA runtime version as the headers define it (`CUDART_VERSION`, e.g. 13000 for 13.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct CudaVersion(pub u32);

impl CudaVersion {
    /// The major version (13 for 13000).
    pub fn major(self) -> u32 {
        self.0 / 1000
    }
    /// The minor version (0 for 13000).
    pub fn minor(self) -> u32 {
        (self.0 % 1000) / 10
    }
}

impl fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major(), self.minor())
    }
}

/// Where a toolkit was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The `CUDA_PATH` environment variable.
    CudaPath,
    /// The `CUDA_HOME` environment variable.
    CudaHome,
    /// `nvcc` found on `PATH`.
    NvccOnPath,
    /// `/usr/local/cuda`.
    UsrLocalCuda,
    /// A project-local `.cuda/` in this directory or one of its ancestors.
    ProjectLocal,
    /// A root given explicitly to [`Toolkit::at`].
    Explicit,
}

/// No toolkit was found; the message names every place searched and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolkitNotFound {
    /// One line per place searched, saying what was wrong there.
    pub searched: Vec<String>,
}

impl fmt::Display for ToolkitNotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "no CUDA toolkit found. Looked in, in this order:")?;
        for place in &self.searched {
            writeln!(f, "  - {place}")?;
        }
        write!(
            f,
            "Fix: install a CUDA 13 toolkit and set CUDA_PATH to its root (or put nvcc on PATH); \
             in the cuda-graph workspace, `cargo xtask setup-cuda` installs CUDA 13.0 into .cuda/ \
             from PyPI."
        )
    }
}

impl std::error::Error for ToolkitNotFound {}

impl Toolkit {
    /// Finds the toolkit, looking in this order: `CUDA_PATH`, `CUDA_HOME`, `nvcc` on `PATH`,
    /// `/usr/local/cuda`, then a project-local `.cuda/` in the build script's package folder
    /// (`CARGO_MANIFEST_DIR`, else the current folder) or any folder above it, and then above
    /// the build's output folder (`OUT_DIR`): a crate built from the registry lives under
    /// `~/.cargo`, but its output lives in the user's own target folder, inside their project.
    ///
    /// An environment variable that is set but points at no toolkit is an error, not skipped:
    /// the user asked for that toolkit.
    pub fn find() -> Result<Toolkit, ToolkitNotFound> {
        let start = env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .or_else(|| env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."));
        let out_dir = env::var_os("OUT_DIR").map(PathBuf::from);
        Self::find_from_any(&[Some(start), out_dir].into_iter().flatten().collect::<Vec<_>>())
    }

    /// Like [`Toolkit::find`], searching for the project-local `.cuda/` from `start` upward.
    pub fn find_from(start: &Path) -> Result<Toolkit, ToolkitNotFound> {
        Self::find_from_any(&[start.to_path_buf()])
    }

    /// Like [`Toolkit::find`], searching for the project-local `.cuda/` upward from each of
    /// `starts` in turn.
    pub fn find_from_any(starts: &[PathBuf]) -> Result<Toolkit, ToolkitNotFound> {
        let mut searched = Vec::new();
        for (var, source) in [("CUDA_PATH", Source::CudaPath), ("CUDA_HOME", Source::CudaHome)] {
            match env::var_os(var) {
                Some(root) => match Self::at_with(Path::new(&root), source) {
                    Ok(toolkit) => return Ok(toolkit),
                    Err(why) => {
                        searched.push(format!("{var}={}: {why}", Path::new(&root).display()));
                        return Err(ToolkitNotFound { searched });
                    }
                },
                None => searched.push(format!("{var}: not set")),
            }
        }
        match nvcc_on_path() {
            Some(nvcc) => {
                let root = nvcc.parent().and_then(Path::parent).unwrap_or(Path::new("/"));
                match Self::at_with(root, Source::NvccOnPath) {
                    Ok(toolkit) => return Ok(toolkit),
                    Err(why) => searched.push(format!("nvcc on PATH ({}): {why}", nvcc.display())),
                }
            }
            None => searched.push("nvcc on PATH: not found".to_string()),
        }
        let usr_local = Path::new("/usr/local/cuda");
        match Self::at_with(usr_local, Source::UsrLocalCuda) {
            Ok(toolkit) => return Ok(toolkit),
            Err(why) => searched.push(format!("{}: {why}", usr_local.display())),
        }
        for start in starts {
            match find_local_toolkit_dir(start) {
                Some(local) => match Self::at_with(&local, Source::ProjectLocal) {
                    Ok(toolkit) => return Ok(toolkit),
                    Err(why) => searched.push(format!("{}: {why}", local.display())),
                },
                None => searched.push(format!(
                    "{LOCAL_TOOLKIT_DIR}/ in {} or any folder above it: not found",
                    start.display()
                )),
            }
        }
        Err(ToolkitNotFound { searched })
    }

    /// The toolkit whose root is `root` (the folder holding `bin/nvcc` and `include/`).
    pub fn at(root: &Path) -> Result<Toolkit, String> {
        Self::at_with(root, Source::Explicit)
    }

    fn at_with(root: &Path, found_by: Source) -> Result<Toolkit, String> {
        if !root.is_dir() {
            return Err("no such folder".into());
        }
        if !root.join("bin").join(nvcc_file_name()).is_file() {
            return Err("no bin/nvcc".into());
        }
        let header = root.join("include").join("cuda_runtime_api.h");
        let text = fs::read_to_string(&header).map_err(|_| "no include/cuda_runtime_api.h")?;
        let version =
            parse_cudart_version(&text).ok_or("include/cuda_runtime_api.h defines no CUDART_VERSION")?;
        let lib_dir = ["lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"]
            .iter()
            .map(|sub| root.join(sub))
            .find(|dir| dir.join("libcudadevrt.a").is_file())
            .ok_or("no lib64/ or lib/ holding libcudadevrt.a")?;
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let lib_dir = lib_dir.canonicalize().unwrap_or(lib_dir);
        Ok(Toolkit { root, lib_dir, version, found_by })
    }

    /// The toolkit's root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// The `nvcc` executable.
    pub fn nvcc(&self) -> PathBuf {
        self.root.join("bin").join(nvcc_file_name())
    }
    /// The folder of `cuda_runtime_api.h` and friends.
    pub fn include_dir(&self) -> PathBuf {
        self.root.join("include")
    }
    /// The folder of `libcudart_static.a` and `libcudadevrt.a`.
    pub fn lib_dir(&self) -> &Path {
        &self.lib_dir
    }
    /// The runtime version its headers declare.
    pub fn version(&self) -> CudaVersion {
        self.version
    }
    /// Where it was found.
    pub fn found_by(&self) -> &Source {
        &self.found_by
    }
}

/// Reads `#define CUDART_VERSION 13000` out of `cuda_runtime_api.h`.
pub(crate) fn parse_cudart_version(header: &str) -> Option<CudaVersion> {
    header.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (Some("#define"), Some("CUDART_VERSION"), Some(value)) => value.parse().ok().map(CudaVersion),
            _ => None,
        }
    })
}

/// The nearest `.cuda/` folder in `start` or an ancestor of it.
pub fn find_local_toolkit_dir(start: &Path) -> Option<PathBuf> {
    start.ancestors().map(|dir| dir.join(LOCAL_TOOLKIT_DIR)).find(|candidate| candidate.is_dir())
}

fn nvcc_on_path() -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path).map(|dir| dir.join(nvcc_file_name())).find(|candidate| candidate.is_file())
}

fn nvcc_file_name() -> &'static str {
    if cfg!(windows) {
        "nvcc.exe"
    } else {
        "nvcc"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_runtime_version_define() {
        let header = "#if !defined(X)\n#define CUDART_VERSION  13000\n#endif\n";
        assert_eq!(parse_cudart_version(header), Some(CudaVersion(13000)));
        assert_eq!(parse_cudart_version("#define CUDART_VERSION_X 1"), None);
    }

    #[test]
    fn version_splits_into_major_and_minor() {
        let v = CudaVersion(12040);
        assert_eq!((v.major(), v.minor()), (12, 4));
        assert_eq!(v.to_string(), "12.4");
    }

    #[test]
    fn a_folder_without_nvcc_is_refused_with_the_reason() {
        let dir = env::temp_dir().join(format!("cuda-build-empty-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        assert_eq!(Toolkit::at(&dir).unwrap_err(), "no bin/nvcc");
        assert_eq!(Toolkit::at(&dir.join("missing")).unwrap_err(), "no such folder");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_local_toolkit_is_found_from_a_nested_folder() {
        let base = env::temp_dir().join(format!("cuda-build-nested-{}", std::process::id()));
        let nested = base.join("a").join("b");
        fs::create_dir_all(&nested).unwrap();
        fs::create_dir_all(base.join(LOCAL_TOOLKIT_DIR)).unwrap();
        assert_eq!(find_local_toolkit_dir(&nested), Some(base.join(LOCAL_TOOLKIT_DIR)));
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn every_start_is_searched_in_turn_and_named_when_nothing_is_found() {
        if Toolkit::find_from_any(&[]).is_ok() {
            // A toolkit from CUDA_PATH, CUDA_HOME, PATH or /usr/local/cuda wins before any
            // project-local search: nothing here to observe.
            return;
        }
        let base = env::temp_dir().join(format!("cuda-build-starts-{}", std::process::id()));
        let (registry, project) = (base.join("registry").join("sys-0.1.0"), base.join("project"));
        let out_dir = project.join("target").join("debug").join("build").join("sys-1").join("out");
        fs::create_dir_all(&registry).unwrap();
        fs::create_dir_all(&out_dir).unwrap();
        fs::create_dir_all(project.join(LOCAL_TOOLKIT_DIR)).unwrap();
        // The project's .cuda/ is empty, so it is found from OUT_DIR but refused, with the reason.
        let err = Toolkit::find_from_any(&[registry.clone(), out_dir]).unwrap_err().to_string();
        assert!(err.contains(&format!("{}/ in {}", LOCAL_TOOLKIT_DIR, registry.display())), "{err}");
        assert!(
            err.contains(&format!("{}: no bin/nvcc", project.join(LOCAL_TOOLKIT_DIR).display())),
            "{err}"
        );
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn not_found_names_every_place_and_the_fix() {
        let err = ToolkitNotFound {
            searched: vec!["CUDA_PATH: not set".into(), "/usr/local/cuda: no such folder".into()],
        };
        let text = err.to_string();
        assert!(text.contains("CUDA_PATH: not set"));
        assert!(text.contains("/usr/local/cuda: no such folder"));
        assert!(text.contains("cargo xtask setup-cuda"));
    }
}
