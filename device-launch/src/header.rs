//! The device half, `include/device_launch.cuh`, read as text by the tests that hold this
//! crate's definitions to it.

/// The header's text.
pub(crate) const TEXT: &str = include_str!("../include/device_launch.cuh");

/// The members of the header's block that opens with `opening` (`"struct DlQueue {"`), in
/// order, each up to its `;` or `,`: `"uint32_t count"`, `"DL_OP_NONE = 0"`.
pub(crate) fn members(opening: &str) -> Vec<&'static str> {
    TEXT.split(opening)
        .nth(1)
        .unwrap_or_else(|| panic!("`{opening}` missing from device_launch.cuh"))
        .split("};")
        .next()
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().split([';', ',']).next())
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .collect()
}

/// The value the header gives the macro `name`.
pub(crate) fn define(name: &str) -> &'static str {
    TEXT.lines()
        .find_map(|l| l.strip_prefix("#define ").and_then(|r| r.strip_prefix(name)))
        .map(str::trim)
        .unwrap_or_else(|| panic!("{name} missing from device_launch.cuh"))
}
