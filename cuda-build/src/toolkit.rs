//! Finding the CUDA toolkit: where to look, in which order, and what counts as a toolkit.
//!
//! One search ([`Toolkit::find`]) serves every build script of the crates (`cuda-build`'s
//! kernel and image builds, `cudart-graph-sys`, `cudadevrt-sys`), so one build links and
//! compiles against one toolkit. The order, first match wins:
//!
//! 1. `CUDA_PATH`, then `CUDA_HOME`: a variable that is set must name a usable toolkit (else
//!    the build fails and says why: the user asked for that one);
//! 2. a project-local `.cuda/` in a folder above the build's output folder (`OUT_DIR`, inside
//!    the target folder: the project's folder when `target/` is inside the project, and the
//!    same for every crate of one build, also for those from the registry, which live under
//!    `~/.cargo`, or from path dependencies elsewhere);
//! 3. the toolkit of the `nvcc` on `PATH`;
//! 4. `/usr/local/cuda`.
//!
//! A toolkit is a folder with `include/cuda_runtime_api.h` declaring CUDA 13.0 or newer
//! ([`MIN_CUDA_VERSION`]) and a `lib64/` or `lib/` holding the runtime library; the folder
//! of a `pip install --target` of the CUDA wheels counts too (its toolkit is `nvidia/cu13/`
//! inside). Automatically found candidates that fail these checks are skipped, and named in
//! the error when nothing is found. `bin/nvcc` is not required: only compiling kernels needs
//! it ([`Toolkit::require`]), linking the runtime does not.

use std::env;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// The name of the project-local toolkit folder: searched for upward from the build's output
/// folder, filled by the documented `pip install --upgrade --target .cuda`
/// ([`pip_install_command`]) or, in the cuda-graph workspace, by `cargo xtask setup-cuda`.
pub const LOCAL_TOOLKIT_DIR: &str = ".cuda";

/// The oldest toolkit the crates build with: the bindings and the kernels' device runtime
/// calls are CUDA 13.0's.
pub const MIN_CUDA_VERSION: CudaVersion = CudaVersion(13000);

/// Where the CUDA 13 wheels put the toolkit inside a `pip install --target DIR`: `DIR/nvidia/cu13`
/// holds `bin/`, `include/`, `lib/` and `nvvm/`, a toolkit root as it stands.
pub const WHEEL_TOOLKIT_SUBDIR: &str = "nvidia/cu13";

/// The environment variables that choose a toolkit, in the order they are read.
pub const TOOLKIT_ENV_VARS: [&str; 2] = ["CUDA_PATH", "CUDA_HOME"];

/// The PyPI wheels (name, exact version) of a CUDA 13.0 toolkit that compiles and links
/// kernels: nvcc, its front end (crt), NVVM, the runtime (headers, `libcudart_static.a`,
/// `libcudadevrt.a`) and the CCCL headers. [`pip_install_command`] installs them.
pub const TOOLKIT_WHEELS: &[(&str, &str)] = &[
    ("nvidia-cuda-nvcc", "13.0.88"),
    ("nvidia-cuda-crt", "13.0.88"),
    ("nvidia-nvvm", "13.0.88"),
    ("nvidia-cuda-runtime", "13.0.96"),
    ("nvidia-cuda-cccl", "13.0.85"),
];

/// The one command that installs a CUDA 13.0 toolkit into `target` without root (Python 3
/// with pip is all it needs): `python3 -m pip install --upgrade --target <target>
/// <TOOLKIT_WHEELS>`. Run with `target` = `.cuda` in the folder of a project's `Cargo.toml`,
/// the toolkit is found with no variable set. `--upgrade` makes it safe to run again: without
/// it, pip leaves an existing `<target>/nvidia/` as it is instead of adding to it; with it,
/// the folder ends up holding exactly the wheels the command names (add
/// `nvidia-cuda-nvrtc==13.0.88` to the same command for NVRTC).
///
/// ```
/// let command = cuda_build::pip_install_command(".cuda");
/// assert!(command.starts_with("python3 -m pip install --upgrade --target .cuda nvidia-cuda-nvcc==13.0."));
/// ```
pub fn pip_install_command(target: &str) -> String {
    let mut command = format!("python3 -m pip install --upgrade --target {target}");
    for (name, version) in TOOLKIT_WHEELS {
        command.push_str(&format!(" {name}=={version}"));
    }
    command
}

/// A CUDA toolkit on disk: its headers and libraries, and `bin/nvcc` when it has one.
///
/// ```no_run
/// let toolkit = cuda_build::Toolkit::find().expect("a CUDA toolkit");
/// println!("{toolkit}"); // CUDA 13.0 at /path (found by CUDA_PATH)
/// let nvcc = toolkit.require(cuda_build::Piece::Nvcc).expect("nvcc");
/// println!("nvcc: {}", nvcc.display());
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
    /// A project-local `.cuda/` in a folder above the target folder or the package.
    ProjectLocal,
    /// `nvcc` found on `PATH`.
    NvccOnPath,
    /// `/usr/local/cuda`.
    UsrLocalCuda,
    /// A root given explicitly to [`Toolkit::at`].
    Explicit,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::CudaPath => "CUDA_PATH",
            Source::CudaHome => "CUDA_HOME",
            Source::ProjectLocal => "the project-local .cuda/",
            Source::NvccOnPath => "nvcc on PATH",
            Source::UsrLocalCuda => "/usr/local/cuda",
            Source::Explicit => "an explicit path",
        })
    }
}

/// No usable toolkit was found; the message names every place searched and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolkitNotFound {
    /// One line per place searched, saying what was wrong there.
    pub searched: Vec<String>,
    /// The variable (`CUDA_PATH` or `CUDA_HOME`) that named an unusable toolkit, which ends
    /// the search: the user asked for that toolkit.
    pub variable: Option<String>,
}

impl fmt::Display for ToolkitNotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(var) = &self.variable {
            let why = self.searched.last().map(String::as_str).unwrap_or("");
            return write!(
                f,
                "{why}\n\
                 Fix: point {var} at the root of a CUDA {MIN_CUDA_VERSION} (or newer) toolkit, the folder \
                 holding include/ and lib/ (or the folder of a `pip install --target`, holding \
                 {WHEEL_TOOLKIT_SUBDIR}/), or unset it. CUDA_PATH is read before CUDA_HOME.",
            );
        }
        writeln!(f, "no CUDA {MIN_CUDA_VERSION} (or newer) toolkit found. Looked in, in this order:")?;
        for place in &self.searched {
            writeln!(f, "  - {place}")?;
        }
        write!(
            f,
            "Fix, without root (Python 3 with pip is all it needs): in the folder of your Cargo.toml \
             (or of your workspace), run\n    {}\nand build again: the .cuda/ there is found with no \
             variable set. Or set CUDA_PATH to the root of a CUDA 13 toolkit, for every shell and \
             editor in your project's .cargo/config.toml:\n    [env]\n    CUDA_PATH = \"/usr/local/cuda-13.0\"",
            pip_install_command(LOCAL_TOOLKIT_DIR)
        )
    }
}

impl std::error::Error for ToolkitNotFound {}

/// A part of a toolkit that one build step needs and a toolkit may lack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// `bin/nvcc`: compiling kernels (`KernelBuild`, `ImageBuild`).
    Nvcc,
    /// `libcudart_static.a`: linking the runtime statically (the default).
    CudartStatic,
    /// `libcudart.so` (or `libcudart.so.13`): linking the runtime dynamically.
    CudartShared,
    /// `libcudadevrt.a`: device-linking kernels that launch work from the device.
    Cudadevrt,
}

impl Piece {
    /// The file, relative to the root or the library folder.
    fn file(self) -> &'static str {
        match self {
            Piece::Nvcc => "bin/nvcc",
            Piece::CudartStatic => "libcudart_static.a",
            Piece::CudartShared => "libcudart.so",
            Piece::Cudadevrt => "libcudadevrt.a",
        }
    }

    fn needed_for(self) -> &'static str {
        match self {
            Piece::Nvcc => "compiling kernels (cuda-build's KernelBuild and ImageBuild)",
            Piece::CudartStatic => "linking the CUDA runtime statically",
            Piece::CudartShared => "linking the CUDA runtime dynamically (feature `dynamic`)",
            Piece::Cudadevrt => "device-linking kernels",
        }
    }

    fn wheel(self) -> &'static str {
        match self {
            Piece::Nvcc => "nvidia-cuda-nvcc, nvidia-cuda-crt and nvidia-nvvm",
            Piece::CudartStatic | Piece::CudartShared | Piece::Cudadevrt => "nvidia-cuda-runtime",
        }
    }
}

/// The toolkit found lacks a [`Piece`] that a build step needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingPiece {
    /// The toolkit that was found (the search stops at the first usable one).
    pub toolkit: Toolkit,
    /// What it lacks.
    pub piece: Piece,
}

impl fmt::Display for MissingPiece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let piece = self.piece;
        let place = match piece {
            Piece::Nvcc => self.toolkit.root().display().to_string(),
            _ => self.toolkit.lib_dir().display().to_string(),
        };
        write!(
            f,
            "the toolkit found, {}, has no {} (in {place}), which {} needs (it comes with {}). ",
            self.toolkit,
            piece.file(),
            piece.needed_for(),
            piece.wheel(),
        )?;
        // A `pip install --target DIR` toolkit: add the missing wheels to the same folder.
        let wheel_dir = self.toolkit.root().parent().and_then(Path::parent);
        match wheel_dir.filter(|_| self.toolkit.root().ends_with(WHEEL_TOOLKIT_SUBDIR)) {
            Some(dir) => {
                write!(f, "Add them to it:\n    {}", pip_install_command(&dir.display().to_string()))
            }
            None => write!(
                f,
                "Use a complete CUDA 13 toolkit: set CUDA_PATH to one, or install one without root in \
                 the folder of your Cargo.toml:\n    {}",
                pip_install_command(LOCAL_TOOLKIT_DIR)
            ),
        }
    }
}

impl std::error::Error for MissingPiece {}

impl fmt::Display for Toolkit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CUDA {} at {} (found by {})", self.version, self.root.display(), self.found_by)
    }
}

impl Toolkit {
    /// Finds the toolkit in the order the module docs give: `CUDA_PATH`, `CUDA_HOME`, a
    /// project-local `.cuda/` above the build's output folder (`OUT_DIR`; outside a build
    /// script, above `CARGO_MANIFEST_DIR` or the current folder), `nvcc` on `PATH`,
    /// `/usr/local/cuda`.
    ///
    /// The project-local search starts from `OUT_DIR`, not from the package, so that every
    /// crate of one build finds the same `.cuda/`: a path dependency inside another project
    /// does not find that project's toolkit while the crate depending on it finds none. With a
    /// target folder outside the project (`CARGO_TARGET_DIR`), name the project's toolkit in
    /// `.cargo/config.toml`: `[env] CUDA_PATH = { value = ".cuda", relative = true }`.
    ///
    /// In a build script it tells Cargo to run the script again when `CUDA_PATH` or
    /// `CUDA_HOME` changes, so switching toolkits rebuilds, and when the found toolkit's
    /// `include/cuda_runtime_api.h` changes or goes away (a reinstall, an upgrade, a removal).
    /// Set the variables the same for every process that runs Cargo (a shell and an editor),
    /// best in `.cargo/config.toml`'s `[env]`, or rely on the project-local `.cuda/`, which
    /// needs no variable.
    pub fn find() -> Result<Toolkit, ToolkitNotFound> {
        let in_build_script = env::var_os("OUT_DIR");
        let start = match &in_build_script {
            Some(out_dir) => {
                for var in TOOLKIT_ENV_VARS {
                    println!("cargo:rerun-if-env-changed={var}");
                }
                PathBuf::from(out_dir)
            }
            None => env::var_os("CARGO_MANIFEST_DIR")
                .map(PathBuf::from)
                .or_else(|| env::current_dir().ok())
                .unwrap_or_else(|| PathBuf::from(".")),
        };
        let toolkit = Self::find_from(&start)?;
        if in_build_script.is_some() {
            println!("cargo:rerun-if-changed={}", toolkit.include_dir().join("cuda_runtime_api.h").display());
        }
        Ok(toolkit)
    }

    /// Like [`Toolkit::find`], searching for the project-local `.cuda/` from `start` upward.
    pub fn find_from(start: &Path) -> Result<Toolkit, ToolkitNotFound> {
        Self::find_from_any(&[start.to_path_buf()])
    }

    /// The search itself: like [`Toolkit::find`], looking for the project-local `.cuda/`
    /// upward from each of `starts` in turn. Prints nothing.
    pub fn find_from_any(starts: &[PathBuf]) -> Result<Toolkit, ToolkitNotFound> {
        let mut searched = Vec::new();
        for (var, source) in TOOLKIT_ENV_VARS.into_iter().zip([Source::CudaPath, Source::CudaHome]) {
            match env::var_os(var).filter(|value| !value.is_empty()) {
                Some(root) => {
                    return Self::at_with(Path::new(&root), source).map_err(|why| {
                        searched.push(format!(
                            "{var}={} is not a usable CUDA toolkit: {why}",
                            Path::new(&root).display()
                        ));
                        ToolkitNotFound { searched, variable: Some(var.to_string()) }
                    })
                }
                None => searched.push(format!("{var}: not set")),
            }
        }
        let mut locals: Vec<PathBuf> = Vec::new();
        for start in starts {
            match find_local_toolkit_dir(start) {
                Some(local) if locals.contains(&local) => {}
                Some(local) => {
                    match Self::at_with(&local, Source::ProjectLocal) {
                        Ok(toolkit) => return Ok(toolkit),
                        Err(why) => searched.push(format!("{}: {why}", local.display())),
                    }
                    locals.push(local);
                }
                None => searched.push(format!(
                    "{LOCAL_TOOLKIT_DIR}/ in {} or any folder above it: not found",
                    start.display()
                )),
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
        Err(ToolkitNotFound { searched, variable: None })
    }

    /// The toolkit whose root is `root` (the folder holding `include/` and `lib/`, or a
    /// `pip install --target` folder holding `nvidia/cu13/`), checked as the search checks.
    pub fn at(root: &Path) -> Result<Toolkit, String> {
        Self::at_with(root, Source::Explicit)
    }

    fn at_with(root: &Path, found_by: Source) -> Result<Toolkit, String> {
        if !root.is_dir() {
            return Err("no such folder".into());
        }
        let header_in = |dir: &Path| dir.join("include").join("cuda_runtime_api.h");
        let wheel_root = root.join(WHEEL_TOOLKIT_SUBDIR);
        let root = if header_in(root).is_file() {
            root.to_path_buf()
        } else if header_in(&wheel_root).is_file() {
            wheel_root
        } else {
            return Err(format!("no include/cuda_runtime_api.h (nor {WHEEL_TOOLKIT_SUBDIR}/include/ of a pip --target install)"));
        };
        let header = header_in(&root);
        let text =
            fs::read_to_string(&header).map_err(|err| format!("cannot read {}: {err}", header.display()))?;
        let version = parse_cudart_version(&text)
            .ok_or_else(|| format!("{} defines no CUDART_VERSION", header.display()))?;
        if version < MIN_CUDA_VERSION {
            return Err(format!(
                "CUDA {version} (CUDART_VERSION {} in {}), older than the CUDA {MIN_CUDA_VERSION} the crates need",
                version.0,
                header.display()
            ));
        }
        let lib_dir = ["lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"]
            .iter()
            .map(|sub| root.join(sub))
            .find(|dir| dir.join("libcudart_static.a").is_file() || shared_cudart(dir).is_some())
            .ok_or("no lib64/ or lib/ holding libcudart_static.a or libcudart.so")?;
        let root = root.canonicalize().unwrap_or(root);
        let lib_dir = lib_dir.canonicalize().unwrap_or(lib_dir);
        Ok(Toolkit { root, lib_dir, version, found_by })
    }

    /// The path of `piece`, or why this toolkit cannot serve the step that needs it.
    pub fn require(&self, piece: Piece) -> Result<PathBuf, MissingPiece> {
        let path = match piece {
            Piece::Nvcc => Some(self.nvcc()),
            Piece::CudartStatic => Some(self.lib_dir.join("libcudart_static.a")),
            Piece::Cudadevrt => Some(self.lib_dir.join("libcudadevrt.a")),
            Piece::CudartShared => shared_cudart(&self.lib_dir),
        };
        path.filter(|path| path.is_file()).ok_or_else(|| MissingPiece { toolkit: self.clone(), piece })
    }

    /// The toolkit's root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// Where `nvcc` is when the toolkit has it ([`Toolkit::require`] checks).
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

/// `libcudart.so` in `dir`, else a versioned `libcudart.so.N` (the runtime wheel ships only
/// that one).
fn shared_cudart(dir: &Path) -> Option<PathBuf> {
    let plain = dir.join("libcudart.so");
    if plain.is_file() {
        return Some(plain);
    }
    let mut versioned: Vec<PathBuf> = fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.file_name().and_then(|name| name.to_str()).is_some_and(|name| {
                name.strip_prefix("libcudart.so.")
                    .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
            })
        })
        .collect();
    versioned.sort();
    versioned.into_iter().next()
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
pub(crate) mod tests {
    use super::*;

    /// A fresh folder for a test, removed when dropped.
    pub(crate) struct Scratch(pub PathBuf);

    impl Scratch {
        pub(crate) fn new(name: &str) -> Scratch {
            let dir = env::temp_dir().join(format!("cuda-build-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// Writes a fake toolkit of `version` at `root`: the header and `lib/libcudart_static.a`,
    /// with `bin/nvcc` when `with_nvcc`.
    pub(crate) fn fake_toolkit(root: &Path, version: u32, with_nvcc: bool) {
        fs::create_dir_all(root.join("include")).unwrap();
        fs::create_dir_all(root.join("lib")).unwrap();
        fs::write(root.join("include/cuda_runtime_api.h"), format!("#define CUDART_VERSION {version}\n"))
            .unwrap();
        fs::write(root.join("lib/libcudart_static.a"), "").unwrap();
        if with_nvcc {
            fs::create_dir_all(root.join("bin")).unwrap();
            fs::write(root.join("bin").join(nvcc_file_name()), "").unwrap();
        }
    }

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
    fn a_folder_without_headers_is_refused_with_the_reason() {
        let dir = Scratch::new("empty");
        assert!(Toolkit::at(&dir.0).unwrap_err().starts_with("no include/cuda_runtime_api.h"));
        assert_eq!(Toolkit::at(&dir.0.join("missing")).unwrap_err(), "no such folder");
    }

    #[test]
    fn an_old_toolkit_is_refused_naming_its_version_and_header() {
        let dir = Scratch::new("old");
        fake_toolkit(&dir.0, 12040, true);
        let why = Toolkit::at(&dir.0).unwrap_err();
        assert!(why.contains("CUDA 12.4 (CUDART_VERSION 12040 in "), "{why}");
        assert!(why.contains("cuda_runtime_api.h), older than the CUDA 13.0"), "{why}");
    }

    #[test]
    fn a_toolkit_without_nvcc_links_but_cannot_compile() {
        let dir = Scratch::new("no-nvcc");
        fake_toolkit(&dir.0, 13000, false);
        let toolkit = Toolkit::at(&dir.0).unwrap();
        assert_eq!(toolkit.version(), CudaVersion(13000));
        assert!(toolkit.require(Piece::CudartStatic).is_ok());
        let missing = toolkit.require(Piece::Nvcc).unwrap_err().to_string();
        assert!(missing.contains("has no bin/nvcc"), "{missing}");
        assert!(missing.contains("compiling kernels"), "{missing}");
        assert!(missing.contains("nvidia-cuda-nvcc"), "{missing}");
        let missing = toolkit.require(Piece::Cudadevrt).unwrap_err().to_string();
        assert!(missing.contains("has no libcudadevrt.a"), "{missing}");
    }

    #[test]
    fn a_pip_target_folder_is_a_toolkit_and_its_versioned_cudart_links() {
        let dir = Scratch::new("pip-target");
        let wheel_root = dir.0.join(WHEEL_TOOLKIT_SUBDIR);
        fake_toolkit(&wheel_root, 13000, true);
        fs::write(wheel_root.join("lib/libcudart.so.13"), "").unwrap();
        let toolkit = Toolkit::at(&dir.0).unwrap();
        assert_eq!(toolkit.root(), wheel_root.canonicalize().unwrap());
        assert_eq!(toolkit.require(Piece::CudartShared).unwrap().file_name().unwrap(), "libcudart.so.13");
        assert!(toolkit.require(Piece::Nvcc).is_ok());
    }

    #[test]
    fn the_local_toolkit_is_found_from_a_nested_folder() {
        let base = Scratch::new("nested");
        let nested = base.0.join("a").join("b");
        fs::create_dir_all(&nested).unwrap();
        fs::create_dir_all(base.0.join(LOCAL_TOOLKIT_DIR)).unwrap();
        assert_eq!(find_local_toolkit_dir(&nested), Some(base.0.join(LOCAL_TOOLKIT_DIR)));
    }

    #[test]
    fn every_start_is_searched_in_turn_and_named_when_nothing_is_found() {
        if TOOLKIT_ENV_VARS.iter().any(|var| env::var_os(var).is_some()) {
            // A set variable ends the search before any project-local folder.
            return;
        }
        let base = Scratch::new("starts");
        let (registry, project) = (base.0.join("registry").join("sys-0.1.0"), base.0.join("project"));
        let out_dir = project.join("target").join("debug").join("build").join("sys-1").join("out");
        fs::create_dir_all(&registry).unwrap();
        fs::create_dir_all(&out_dir).unwrap();
        fs::create_dir_all(project.join(LOCAL_TOOLKIT_DIR)).unwrap();
        // The project's .cuda/ is empty, so it is found from OUT_DIR but refused, with the reason.
        match Toolkit::find_from_any(&[out_dir.clone(), registry.clone()]) {
            Err(err) => {
                let text = err.to_string();
                assert!(
                    text.contains(&format!("{}/ in {}", LOCAL_TOOLKIT_DIR, registry.display())),
                    "{text}"
                );
                let refused =
                    format!("{}: no include/cuda_runtime_api.h", project.join(LOCAL_TOOLKIT_DIR).display());
                assert!(text.contains(&refused), "{text}");
            }
            // A toolkit on PATH or at /usr/local/cuda comes after the project-local search.
            Ok(toolkit) => assert_ne!(toolkit.found_by(), &Source::ProjectLocal),
        }
        // A complete .cuda/ above OUT_DIR wins over everything after the variables.
        fake_toolkit(&project.join(LOCAL_TOOLKIT_DIR), 13000, false);
        let toolkit = Toolkit::find_from_any(&[out_dir, registry]).unwrap();
        assert_eq!(toolkit.found_by(), &Source::ProjectLocal);
        assert_eq!(toolkit.root(), project.join(LOCAL_TOOLKIT_DIR).canonicalize().unwrap());
    }

    #[test]
    fn not_found_names_every_place_and_the_one_command() {
        let err = ToolkitNotFound {
            searched: vec!["CUDA_PATH: not set".into(), "/usr/local/cuda: no such folder".into()],
            variable: None,
        };
        let text = err.to_string();
        assert!(text.contains("CUDA_PATH: not set"));
        assert!(text.contains("/usr/local/cuda: no such folder"));
        assert!(text.contains(&pip_install_command(".cuda")), "{text}");
        assert!(text.contains("[env]\n    CUDA_PATH = "), "{text}");
    }

    #[test]
    fn a_variable_naming_no_toolkit_says_which_and_why() {
        let err = ToolkitNotFound {
            searched: vec!["CUDA_PATH=/opt/cuda-12: is not a usable CUDA toolkit: CUDA 12.4 (...)".into()],
            variable: Some("CUDA_PATH".into()),
        };
        let text = err.to_string();
        assert!(text.starts_with("CUDA_PATH=/opt/cuda-12"), "{text}");
        assert!(text.contains("Fix: point CUDA_PATH at the root of a CUDA 13.0"), "{text}");
    }

    #[test]
    fn the_documented_command_is_the_one_the_errors_give() {
        let command = pip_install_command(LOCAL_TOOLKIT_DIR);
        let mut docs = vec![
            ("cuda-build/README.md", include_str!("../README.md").to_string()),
            ("cuda-build/src/lib.rs", include_str!("lib.rs").to_string()),
        ];
        // cudart-graph-sys tells the same story (checked where the workspace is at hand).
        let sys = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cudart-graph-sys");
        for file in ["README.md", "src/lib.rs"] {
            if let Ok(text) = fs::read_to_string(sys.join(file)) {
                docs.push((file, text));
            }
        }
        for (name, text) in docs {
            assert!(text.contains(&command), "{name} does not show `{command}`");
        }
    }

    #[test]
    fn the_pip_command_installs_every_wheel_at_its_pin() {
        let command = pip_install_command(".cuda");
        for (name, version) in TOOLKIT_WHEELS {
            assert!(command.contains(&format!(" {name}=={version}")), "{command}");
            assert!(version.starts_with("13.0."), "{name} {version}");
        }
    }
}
