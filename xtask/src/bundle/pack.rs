//! The bundle's layout, shared with `scripts/gpu-run` and `scripts/gpu-sanitize`:
//! `.gpu/bundle.tar.xz` holds `bin/<kind>-<name>-<file>` (the programs) and `index.tsv`
//! (`kind<TAB>name<TAB>package folder<TAB>bin/<file>`, one line a program); `.gpu/run` runs
//! `scripts/gpu-run` of the checkout beside it.

use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use super::artifacts::Program;
use crate::wheels::io_fail;
use crate::Fail;

/// The archive's name inside `.gpu/`.
pub const ARCHIVE: &str = "bundle.tar.xz";

/// `.gpu/run`: two lines, so that `bash .gpu/run` runs the checkout's runner.
const RUN_SCRIPT: &str = "#!/usr/bin/env bash\nexec bash \"$(dirname \"$0\")/../scripts/gpu-run\" \"$@\"\n";

/// What [`stage`] did.
#[derive(Debug, PartialEq, Eq)]
pub struct Staged {
    pub programs: usize,
    /// How many copies `strip` made smaller (it may be missing, or refuse a file).
    pub stripped: usize,
}

/// The name a program has inside the bundle's `bin/`: `<kind>-<name>-<file name>`.
pub fn bundled_name(program: &Program) -> Result<String, Fail> {
    let file = program.executable.file_name().and_then(|f| f.to_str()).ok_or_else(|| {
        Fail::new(format!(
            "cargo named an executable without a UTF-8 file name: {}",
            program.executable.display()
        ))
    })?;
    Ok(format!("{}-{}-{file}", program.kind, program.name))
}

/// One line of `index.tsv`: `kind<TAB>name<TAB>package folder<TAB>bin/<bundled name>\n`.
pub fn index_line(program: &Program, bundled: &str) -> Result<String, Fail> {
    let kind = program.kind.to_string();
    let fields = [kind.as_str(), &program.name, &program.package_dir, bundled];
    if let Some(bad) = fields.iter().find(|field| field.contains(['\t', '\n', '\r'])) {
        return Err(Fail::new(format!("`{bad}` holds a tab or a line break: index.tsv cannot hold it")));
    }
    Ok(format!("{kind}\t{}\t{}\tbin/{bundled}\n", program.name, program.package_dir))
}

/// Copies every program into `stage/bin/` (stripped where `strip` can) and writes
/// `stage/index.tsv`, in the order given.
pub fn stage(stage: &Path, programs: &[Program]) -> Result<Staged, Fail> {
    let bin = stage.join("bin");
    fs::create_dir_all(&bin).map_err(|e| io_fail("create", &bin, e))?;
    let mut index = String::new();
    let mut names = HashSet::new();
    let mut stripped = 0;
    for program in programs {
        let bundled = bundled_name(program)?;
        if !names.insert(bundled.clone()) {
            return Err(Fail::new(format!("two programs would both be bundled as bin/{bundled}")));
        }
        index.push_str(&index_line(program, &bundled)?);
        let copy = bin.join(&bundled);
        fs::copy(&program.executable, &copy).map_err(|e| io_fail("copy", &program.executable, e))?;
        stripped += usize::from(strip(&copy));
    }
    let index_path = stage.join("index.tsv");
    fs::write(&index_path, index).map_err(|e| io_fail("write", &index_path, e))?;
    Ok(Staged { programs: programs.len(), stripped })
}

/// `strip FILE`: whether it succeeded. Its failure only costs size, so it is reported by the
/// count, not as an error.
fn strip(file: &Path) -> bool {
    Command::new("strip")
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Packs `gpu/stage` into `gpu/bundle.tar.xz`, removes the stage and returns the archive's size
/// in bytes.
pub fn pack(gpu: &Path) -> Result<u64, Fail> {
    let stage = gpu.join("stage");
    let archive = gpu.join(ARCHIVE);
    let status = Command::new("tar")
        .arg("-C")
        .arg(&stage)
        .arg("-cJf")
        .arg(&archive)
        .arg(".")
        .status()
        .map_err(|e| Fail::new(format!("cannot start tar (needed to pack the bundle): {e}")))?;
    if !status.success() {
        return Err(Fail::new(format!("`tar -cJf {}` failed ({status})", archive.display())));
    }
    fs::remove_dir_all(&stage).map_err(|e| io_fail("remove", &stage, e))?;
    let size = fs::metadata(&archive).map_err(|e| io_fail("read the size of", &archive, e))?.len();
    Ok(size)
}

/// Writes `gpu/run`, executable.
pub fn write_run(gpu: &Path) -> Result<(), Fail> {
    let path = gpu.join("run");
    fs::write(&path, RUN_SCRIPT).map_err(|e| io_fail("write", &path, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
            .map_err(|e| io_fail("make executable", &path, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::artifacts::Kind;
    use std::path::PathBuf;

    fn program(kind: Kind, name: &str, dir: &str, exe: &str) -> Program {
        Program { kind, name: name.to_string(), package_dir: dir.to_string(), executable: PathBuf::from(exe) }
    }

    #[test]
    fn index_lines_have_four_tab_separated_fields() {
        let test = program(Kind::Test, "cuda_graphs", "tests", "/r/target/release/deps/cuda_graphs-0f1e2d3c");
        let bundled = bundled_name(&test).unwrap();
        assert_eq!(bundled, "test-cuda_graphs-cuda_graphs-0f1e2d3c");
        assert_eq!(
            index_line(&test, &bundled).unwrap(),
            "test\tcuda_graphs\ttests\tbin/test-cuda_graphs-cuda_graphs-0f1e2d3c\n"
        );
        let example =
            program(Kind::Example, "process_probe", "bench", "/r/target/release/examples/process_probe");
        assert_eq!(
            index_line(&example, &bundled_name(&example).unwrap()).unwrap(),
            "example\tprocess_probe\tbench\tbin/example-process_probe-process_probe\n"
        );
        let bin = program(Kind::Bin, "ch12", "examples/ch12", "/r/target/release/ch12");
        assert_eq!(
            index_line(&bin, &bundled_name(&bin).unwrap()).unwrap(),
            "bin\tch12\texamples/ch12\tbin/bin-ch12-ch12\n"
        );
    }

    #[test]
    fn a_field_with_a_tab_is_refused() {
        let odd = program(Kind::Bin, "a", "odd\tdir", "/r/target/release/a");
        let fail = index_line(&odd, "bin-a-a").unwrap_err().to_string();
        assert!(fail.contains("tab or a line break"), "{fail}");
    }

    #[test]
    fn the_stage_holds_the_copies_and_the_index() {
        let dir = crate::wheels::scratch_dir("bundle-stage");
        let exe = dir.join("prog-1234");
        fs::write(&exe, b"not an object file: strip refuses it, which is not an error").unwrap();
        let programs = [
            program(Kind::Test, "t", "pkg", exe.to_str().unwrap()),
            program(Kind::Bin, "t", "pkg/sub", exe.to_str().unwrap()),
        ];
        let stage_dir = dir.join("stage");
        let staged = stage(&stage_dir, &programs).unwrap();
        assert_eq!(staged, Staged { programs: 2, stripped: 0 });
        let index = fs::read_to_string(stage_dir.join("index.tsv")).unwrap();
        assert_eq!(index, "test\tt\tpkg\tbin/test-t-prog-1234\nbin\tt\tpkg/sub\tbin/bin-t-prog-1234\n");
        assert_eq!(fs::read(stage_dir.join("bin/bin-t-prog-1234")).unwrap(), fs::read(&exe).unwrap());

        // The same program twice would overwrite its copy: refused.
        let twice = [programs[0].clone(), programs[0].clone()];
        let fail = stage(&dir.join("stage2"), &twice).unwrap_err().to_string();
        assert!(fail.contains("bundled as bin/test-t-prog-1234"), "{fail}");

        let archive_size = pack(&dir).unwrap();
        assert!(archive_size > 0);
        assert!(!stage_dir.exists(), "the stage is removed once packed");
        crate::wheels::remove_if_present(&dir).unwrap();
    }
}
