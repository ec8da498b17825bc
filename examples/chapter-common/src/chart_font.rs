//! A TrueType font for the charts' text (plotters' `sans-serif`), read at run time from a file
//! (nothing embedded, no fontconfig to link). Feature `charts`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::style::FontStyle;

/// Finds a sans font once (the file named by the environment variable `env_var` first, then
/// DejaVu Sans, Liberation Sans or Noto Sans under the system's font folders) and registers it
/// as `sans-serif`; false when there is none, and the charts then cannot be drawn with text.
///
/// ```
/// if chapter_common::chart_font::load_sans("MY_PROGRAM_FONT") {
///     // plotters can now draw text in ("sans-serif", size)
/// }
/// ```
pub fn load_sans(env_var: &str) -> bool {
    static FOUND: OnceLock<bool> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let mut candidates: Vec<PathBuf> = std::env::var_os(env_var).map(PathBuf::from).into_iter().collect();
        for root in ["/usr/share/fonts", "/usr/local/share/fonts"] {
            collect_fonts(Path::new(root), 3, &mut candidates);
        }
        candidates.into_iter().any(|path| {
            std::fs::read(path).is_ok_and(|bytes| {
                // Registered fonts must live as long as the program: this one copy is leaked.
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
            })
        })
    })
}

/// Sans fonts under `dir` (DejaVu, Liberation, Noto), `depth` folders down, in name order.
fn collect_fonts(dir: &Path, depth: u32, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut found: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    found.sort();
    for path in found {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
        if path.is_dir() && depth > 0 {
            collect_fonts(&path, depth - 1, out);
        } else if ["DejaVuSans.ttf", "LiberationSans-Regular.ttf", "NotoSans-Regular.ttf"]
            .contains(&name.as_str())
        {
            out.push(path);
        }
    }
}
