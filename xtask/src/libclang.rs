//! libclang for bindgen (the bindings check and `cargo xtask bindgen`), found the way the
//! toolkit is: `LIBCLANG_PATH`, then a system one, then the project's `.libclang/`, which
//! `cargo xtask setup-cuda` fills from the pinned `libclang` wheel on PyPI when nothing else
//! is found.
//!
//! libclang also needs clang's builtin headers (`stddef.h`, `limits.h`, …) to parse system
//! headers. A system libclang has them beside it; the wheel does not, so the headers come from
//! the C compiler that the machine has anyway: clang's resource folder where clang is
//! installed, else gcc's own builtin-header folder (`cc -print-file-name=include`).

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::wheels::{self, Pin};
use crate::workspace::root;
use crate::Fail;

/// The wheel that provides libclang where the machine has none.
const WHEEL: &[Pin] = &[("libclang", "18.1.1")];
/// Where `setup-cuda` puts it, below the workspace root.
pub const LOCAL_DIR: &str = ".libclang";
/// The library's place inside the unpacked wheel.
const LIBRARY_IN_WHEEL: &str = "libclang-18.1.1.data/platlib/clang/native/libclang.so";

/// Folders a distribution's libclang is in (Debian and Ubuntu, Fedora, Arch, /usr/local).
/// `/usr/lib/llvm-<version>/lib` folders are added, newest first, by [`system_places`].
const SYSTEM_PLACES: &[&str] =
    &["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"];

/// A header every builtin-header folder has; `limits.h` is the one libclang missed.
const BUILTIN_PROBES: &[&str] = &["stddef.h", "limits.h"];

/// Where the libclang came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The `LIBCLANG_PATH` environment variable.
    Environment,
    /// A distribution's package.
    System,
    /// The project's `.libclang/`, installed by `setup-cuda`.
    Project,
}

/// A libclang that bindgen can load, and the builtin headers to give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Libclang {
    /// The shared library itself.
    pub library: PathBuf,
    /// Where it was found.
    pub origin: Origin,
    /// Where the builtin headers are, when libclang would not find them beside itself.
    pub builtin_headers: Option<BuiltinHeaders>,
}

/// A folder of compiler builtin headers, and whose it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltinHeaders {
    /// The folder (holds `stddef.h` and `limits.h`).
    pub dir: PathBuf,
    /// `clang` or `gcc`: which compiler's folder it is.
    pub compiler: &'static str,
}

impl fmt::Display for Libclang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let origin = match self.origin {
            Origin::Environment => "from LIBCLANG_PATH".to_string(),
            Origin::System => "the system's".to_string(),
            Origin::Project => format!("installed from {}", wheels::marker_text(WHEEL).trim()),
        };
        write!(f, "libclang {} ({origin})", self.library.display())?;
        match &self.builtin_headers {
            Some(headers) => {
                write!(f, ", builtin headers from {} ({})", headers.dir.display(), headers.compiler)
            }
            None => write!(f, ", builtin headers beside it"),
        }
    }
}

impl Libclang {
    /// The clang arguments bindgen needs for this libclang.
    pub fn clang_args(&self) -> Vec<String> {
        match &self.builtin_headers {
            Some(headers) => vec!["-isystem".to_string(), headers.dir.display().to_string()],
            None => Vec::new(),
        }
    }

    /// Makes bindgen, in this process, load exactly this library (clang-sys reads
    /// `LIBCLANG_PATH` when bindgen first loads libclang; a path to a file names that file).
    pub fn select_for_this_process(&self) {
        // xtask runs single-threaded here, so nothing reads the environment concurrently.
        std::env::set_var("LIBCLANG_PATH", &self.library);
    }
}

/// The libclang to use, installing the pinned wheel into `.libclang/` when none is found.
pub fn ensure() -> Result<Libclang, Fail> {
    if let Some(found) = find()? {
        return Ok(found);
    }
    println!("libclang: none found (LIBCLANG_PATH unset, none in {}); installing one", searched_text());
    install()?;
    find_in_project()?.ok_or_else(|| {
        Fail::new(format!("{LOCAL_DIR}/ holds no usable libclang after installing it; remove {LOCAL_DIR}/ and run `cargo xtask setup-cuda`"))
    })
}

/// `LIBCLANG_PATH`, a system libclang, then the project's; `Ok(None)` when there is none.
/// A `LIBCLANG_PATH` that names no libclang is an error, not a reason to look elsewhere.
pub fn find() -> Result<Option<Libclang>, Fail> {
    if let Some(value) = std::env::var_os("LIBCLANG_PATH").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(&value);
        let named_file =
            path.is_file() && path.file_name().is_some_and(|n| is_libclang_name(&n.to_string_lossy()));
        let library = if named_file { Some(path.clone()) } else { library_in(&path) };
        return match library {
            Some(library) => with_builtin_headers(library, Origin::Environment).map(Some),
            None => Err(Fail::new(format!(
                "LIBCLANG_PATH is {} but that is no libclang shared library ({}) nor a folder holding one: \
                 correct it, or unset it and run `cargo xtask setup-cuda` to install libclang into {LOCAL_DIR}/",
                path.display(),
                NAME_PATTERNS
            ))),
        };
    }
    for dir in system_places() {
        if let Some(library) = library_in(&dir) {
            return with_builtin_headers(library, Origin::System).map(Some);
        }
    }
    find_in_project()
}

fn find_in_project() -> Result<Option<Libclang>, Fail> {
    let dir = root().join(LOCAL_DIR);
    let library = dir.join("libclang.so");
    if wheels::is_installed(&dir, WHEEL) && library.is_file() {
        return with_builtin_headers(library, Origin::Project).map(Some);
    }
    Ok(None)
}

/// Downloads the pinned wheel and puts its library into `.libclang/` (idempotent).
fn install() -> Result<(), Fail> {
    let target = root().join(LOCAL_DIR);
    if wheels::is_installed(&target, WHEEL) && target.join("libclang.so").is_file() {
        return Ok(());
    }
    let work = root().join("target").join("setup-libclang");
    let unpacked = wheels::download_and_unpack("setup-cuda", WHEEL, &work)?;
    let staged = work.join("staged");
    std::fs::create_dir_all(&staged).map_err(|e| wheels::io_fail("create", &staged, e))?;
    let from = unpacked.join(LIBRARY_IN_WHEEL);
    std::fs::rename(&from, staged.join("libclang.so")).map_err(|e| wheels::io_fail("move", &from, e))?;
    wheels::move_into_place(WHEEL, &staged, &target)?;
    wheels::remove_if_present(&work)?;
    println!("setup-cuda: installed libclang into {}:", target.display());
    for line in wheels::marker_text(WHEEL).lines() {
        println!("  {line}");
    }
    Ok(())
}

/// What [`is_libclang_name`] accepts, for messages.
const NAME_PATTERNS: &str = "libclang.so, libclang.so.N, libclang-N.so, libclang-N.so.M";

/// The names clang-sys loads: `libclang.so`, `libclang.so.*`, `libclang-<version>.so` and
/// `libclang-<version>.so.*`. `libclang-cpp.so.*` (the C++ library, which a machine can have
/// without libclang) is not one of them.
fn is_libclang_name(name: &str) -> bool {
    if name == "libclang.so" || name.starts_with("libclang.so.") {
        return true;
    }
    let Some(rest) = name.strip_prefix("libclang-") else { return false };
    let Some((version, _)) = rest.split_once(".so") else { return false };
    !version.is_empty() && version.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// A libclang in `dir`, preferring the plain name, then the highest version.
fn library_in(dir: &Path) -> Option<PathBuf> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| is_libclang_name(name))
        .collect();
    names.sort_by_key(|name| std::cmp::Reverse(version_key(name)));
    names.into_iter().map(|name| dir.join(name)).find(|path| path.is_file())
}

/// Sorts `libclang.so` first, then by the version numbers in the name, highest first.
fn version_key(name: &str) -> (bool, Vec<u32>) {
    let numbers = name.split(|c: char| !c.is_ascii_digit()).filter_map(|n| n.parse().ok()).collect();
    (name == "libclang.so", numbers)
}

/// `llvm-config --libdir` where it runs, every `/usr/lib/llvm-N/lib` newest first, then
/// the distributions' library folders.
fn system_places() -> Vec<PathBuf> {
    let mut places = Vec::new();
    if let Some(dir) = command_output("llvm-config", &["--libdir"]) {
        places.push(PathBuf::from(dir));
    }
    let mut llvm: Vec<PathBuf> = std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("llvm-")))
        .map(|path| path.join("lib"))
        .collect();
    llvm.sort_by(|a, b| version_key(&b.to_string_lossy()).1.cmp(&version_key(&a.to_string_lossy()).1));
    places.extend(llvm);
    places.extend(SYSTEM_PLACES.iter().map(PathBuf::from));
    let mut seen = std::collections::HashSet::new();
    places.retain(|place| seen.insert(place.clone()));
    places
}

fn searched_text() -> String {
    let places: Vec<String> = system_places().iter().map(|p| p.display().to_string()).collect();
    format!("{} or {LOCAL_DIR}/", places.join(", "))
}

fn with_builtin_headers(library: PathBuf, origin: Origin) -> Result<Libclang, Fail> {
    if own_builtin_headers(&library) {
        return Ok(Libclang { library, origin, builtin_headers: None });
    }
    match compiler_builtin_headers() {
        Some(headers) => Ok(Libclang { library, origin, builtin_headers: Some(headers) }),
        None => Err(Fail::new(format!(
            "libclang {} has no builtin headers ({}) beside it, and no compiler gave a folder with them \
             (looked at `clang -print-resource-dir`, `cc -print-file-name=include`, `gcc -print-file-name=include`): \
             install a C compiler (Debian: `apt-get install gcc`)",
            library.display(),
            BUILTIN_PROBES.join(", ")
        ))),
    }
}

/// True when libclang finds builtin headers by itself: in `lib/clang/<version>/include`
/// beside the library's real location (how LLVM packages lay it out).
fn own_builtin_headers(library: &Path) -> bool {
    let real = std::fs::canonicalize(library).unwrap_or_else(|_| library.to_path_buf());
    let Some(lib_dir) = real.parent() else { return false };
    let versions = std::fs::read_dir(lib_dir.join("clang")).into_iter().flatten().flatten();
    versions.map(|entry| entry.path().join("include")).any(|dir| has_builtin_headers(&dir))
}

/// clang's resource folder where clang is installed, else gcc's builtin-header folder.
fn compiler_builtin_headers() -> Option<BuiltinHeaders> {
    let clang =
        command_output("clang", &["-print-resource-dir"]).map(|dir| PathBuf::from(dir).join("include"));
    if let Some(dir) = clang.filter(|dir| has_builtin_headers(dir)) {
        return Some(BuiltinHeaders { dir, compiler: "clang" });
    }
    ["cc", "gcc"]
        .iter()
        .filter_map(|compiler| command_output(compiler, &["-print-file-name=include"]))
        .map(PathBuf::from)
        .find(|dir| has_builtin_headers(dir))
        .map(|dir| BuiltinHeaders { dir, compiler: "gcc" })
}

fn has_builtin_headers(dir: &Path) -> bool {
    dir.is_absolute() && BUILTIN_PROBES.iter().all(|header| dir.join(header).is_file())
}

/// The trimmed standard output of a command that ran and succeeded.
fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (output.status.success() && !text.is_empty()).then(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libclang_names_are_told_from_libclang_cpp() {
        for name in [
            "libclang.so",
            "libclang.so.18",
            "libclang.so.18.1.1",
            "libclang-14.so",
            "libclang-14.so.1",
            "libclang-14.0.6.so",
        ] {
            assert!(is_libclang_name(name), "{name}");
        }
        for name in [
            "libclang-cpp.so.14",
            "libclang-cpp.so",
            "libclangBasic.a",
            "libclang.a",
            "libclang-.so",
            "libclang_rt.asan.so",
        ] {
            assert!(!is_libclang_name(name), "{name}");
        }
    }

    #[test]
    fn the_plain_name_then_the_highest_version_is_preferred() {
        let mut names = vec!["libclang-14.so.1", "libclang-18.so.1", "libclang.so", "libclang-9.so"];
        names.sort_by_key(|name| std::cmp::Reverse(version_key(name)));
        assert_eq!(names, ["libclang.so", "libclang-18.so.1", "libclang-14.so.1", "libclang-9.so"]);
    }

    #[test]
    fn a_folder_with_only_libclang_cpp_has_no_libclang() {
        let dir = wheels::scratch_dir("libclang-test");
        std::fs::write(dir.join("libclang-cpp.so.14"), b"").unwrap();
        assert_eq!(library_in(&dir), None);
        std::fs::write(dir.join("libclang-14.so.1"), b"").unwrap();
        assert_eq!(library_in(&dir), Some(dir.join("libclang-14.so.1")));
        wheels::remove_if_present(&dir).unwrap();
    }

    #[test]
    fn builtin_headers_need_both_probe_headers_and_an_absolute_folder() {
        let dir = wheels::scratch_dir("builtin-test");
        std::fs::write(dir.join("stddef.h"), b"").unwrap();
        assert!(!has_builtin_headers(&dir));
        std::fs::write(dir.join("limits.h"), b"").unwrap();
        assert!(has_builtin_headers(&dir));
        assert!(
            !has_builtin_headers(Path::new("include")),
            "gcc prints a bare name when it has no such folder"
        );
        wheels::remove_if_present(&dir).unwrap();
    }

    #[test]
    fn a_wheel_libclang_gets_its_headers_from_the_compiler() {
        // The wheel's layout: clang/native/libclang.so, no lib/clang/<version>/include beside it.
        let dir = wheels::scratch_dir("wheel-layout");
        let library = dir.join("libclang.so");
        std::fs::write(&library, b"").unwrap();
        assert!(!own_builtin_headers(&library));
        let own = dir.join("clang").join("18").join("include");
        std::fs::create_dir_all(&own).unwrap();
        for header in BUILTIN_PROBES {
            std::fs::write(own.join(header), b"").unwrap();
        }
        assert!(own_builtin_headers(&library), "an LLVM package's layout");
        wheels::remove_if_present(&dir).unwrap();
    }
}
