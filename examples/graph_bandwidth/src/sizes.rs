//! Byte sizes as text: the `--sizes` flag's values in, the report's labels out.

/// A KiB.
pub(crate) const KIB: u64 = 1 << 10;
/// A MiB.
pub(crate) const MIB: u64 = 1 << 20;

/// A size flag's value, "4096", "4K", "256M" or "1G", in bytes (binary units).
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, shift) = match text.char_indices().last() {
        Some((i, 'K' | 'k')) => (&text[..i], 10),
        Some((i, 'M' | 'm')) => (&text[..i], 20),
        Some((i, 'G' | 'g')) => (&text[..i], 30),
        _ => (text, 0),
    };
    let value: u64 = digits.parse().map_err(|_| format!("`{text}` is not a size (e.g. 4096, 64K, 256M)"))?;
    value.checked_shl(shift).filter(|v| v >> shift == value).ok_or_else(|| format!("`{text}` is too large"))
}

/// `bytes` as "4 KiB", "256 MiB", or "1000 B".
///
/// ```
/// assert_eq!(graph_bandwidth::human(4096), "4 KiB");
/// assert_eq!(graph_bandwidth::human(256 << 20), "256 MiB");
/// assert_eq!(graph_bandwidth::human(1000), "1000 B");
/// ```
pub fn human(bytes: u64) -> String {
    match bytes {
        b if b >= MIB && b % MIB == 0 => format!("{} MiB", b / MIB),
        b if b >= KIB && b % KIB == 0 => format!("{} KiB", b / KIB),
        b => format!("{b} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("256M"), Ok(256 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert!(parse_size("x").is_err());
        assert!(parse_size("99999999999999G").is_err());
    }
}
