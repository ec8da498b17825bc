//! `graph_bandwidth`: times device copies and memsets as graph nodes against the same
//! operations queued on a stream, by size; checks the bytes they leave and prints the report
//! (text or `--json`). Exits non-zero when a check fails or CUDA reports an error.

use std::process::ExitCode;

use chapter_common::{main_with, CommonArgs};
use clap::Parser;
use graph_bandwidth::Program;

/// Memcpy and memset nodes in a graph vs the same copies and memsets on a stream: GB/s by size.
#[derive(Debug, Parser)]
#[command(name = "graph_bandwidth", version)]
struct Cli {
    /// Sizes of one copy or memset, comma-separated, in bytes or with a K, M or G suffix
    /// (KiB, MiB, GiB); multiples of 4 (default: 4K,16K,..,256M, or 4K,64K,1M with --quick).
    #[arg(long, value_name = "SIZES", value_delimiter = ',', value_parser = parse_size)]
    sizes: Option<Vec<u64>>,
    /// Operations per graph, and per group queued on the stream (default: 16, or 8 with --quick).
    #[arg(long, value_name = "N")]
    chain: Option<u32>,
    #[command(flatten)]
    common: CommonArgs,
}

/// "4096", "4K", "256M", "1G" as bytes (binary units).
fn parse_size(text: &str) -> Result<u64, String> {
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    main_with::<Program>(&cli.common, |options| {
        if let Some(sizes) = cli.sizes {
            options.sizes = sizes;
        }
        options.chain = cli.chain.unwrap_or(options.chain);
        options.max_ops = options.max_ops.max(options.chain);
    })
}

#[cfg(test)]
mod tests {
    use super::parse_size;

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
