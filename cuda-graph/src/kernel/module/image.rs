//! What a module image is, checked before the driver reads it: the driver takes a pointer,
//! not a length, and reads as far as the image's own headers say (cubins and fatbins) or to
//! the first NUL (PTX). The outer sizes are checked to lie inside the bytes given.
//!
//! These checks are a defence, not a safety boundary. A fatbin's entries, a cubin's sections
//! and what they point at are parsed by the driver, which trusts them: an image cut inside its
//! first entry, its outer size made consistent, was read past its end (SOUNDNESS.md, "Things
//! of other code", item 4). So loading a cubin or fatbin is `unsafe`
//! ([`Module::from_image`](super::Module::from_image));
//! only PTX text, which the driver reads up to the NUL added here, is loaded from safe code
//! ([`prepare_ptx`]).

use std::borrow::Cow;

use crate::error::{CudaError, Result};
use crate::refusal::Refusal;

/// The fatbin magic number (`__cudaFatMAGIC2`), little-endian at the start of a fatbin.
const FATBIN_MAGIC: u32 = 0xBA55_ED50;

/// The format of a module image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    /// An ELF cubin.
    Cubin,
    /// A fatbin (`nvcc -fatbin`).
    Fatbin,
    /// PTX text.
    Ptx,
}

/// The bytes to hand the driver for `image` (with a NUL added to PTX that lacks one), after
/// checking that every size its headers give lies inside it.
pub(super) fn prepare<'a>(call: &'static str, image: &'a [u8]) -> Result<(Format, Cow<'a, [u8]>)> {
    let malformed =
        |format| move |problem| CudaError::refused(call, Refusal::MalformedImage { format, problem });
    if image.starts_with(b"\x7fELF") {
        elf_extent(image).map_err(malformed("cubin"))?;
        return Ok((Format::Cubin, Cow::Borrowed(image)));
    }
    if image.len() >= 4 && u32::from_le_bytes([image[0], image[1], image[2], image[3]]) == FATBIN_MAGIC {
        fatbin_extent(image).map_err(malformed("fatbin"))?;
        return Ok((Format::Fatbin, Cow::Borrowed(image)));
    }
    let text = match image.iter().position(|&b| b == 0) {
        Some(nul) => &image[..nul],
        None => image,
    };
    if std::str::from_utf8(text).is_err() || !text.windows(8).any(|w| w == b".version") {
        return Err(CudaError::refused(call, Refusal::NotAnImage));
    }
    let mut bytes = text.to_vec();
    bytes.push(0);
    Ok((Format::Ptx, Cow::Owned(bytes)))
}

/// The bytes to hand the driver for PTX `text`: cut at its first NUL, with a NUL added, after
/// checking that it is text the driver reads as PTX. The driver tells formats apart by their
/// first bytes, and `\x7fELF` is valid UTF-8: text that does not begin with a printable ASCII
/// character or whitespace is refused, so that it is never parsed as a cubin.
pub(super) fn prepare_ptx<'a>(call: &'static str, text: &'a str) -> Result<Cow<'a, [u8]>> {
    match text.bytes().next() {
        Some(first) if first.is_ascii_graphic() || first.is_ascii_whitespace() => {}
        _ => return Err(CudaError::refused(call, Refusal::PtxFirstByte)),
    }
    match prepare(call, text.as_bytes())? {
        (Format::Ptx, bytes) => Ok(bytes),
        // Not reached: text beginning with a printable character or whitespace has neither
        // the ELF nor the fatbin magic.
        _ => Err(CudaError::refused(call, Refusal::NotPtx)),
    }
}

/// The symbols of `image` (of `format`) that may be named `<prefix><suffix>`, as the prefixes
/// written before `suffix` (the identifier characters before each place it occurs), in one
/// pass over the image; `None` for a fatbin, whose entries may be compressed and so may hold
/// any name. Cubins and PTX hold symbol names in the clear: a kernel `k` whose name ends no
/// prefix listed has no global `k<suffix>` (a string table may share a name's tail with a
/// longer one, hence "ends", not "equals").
pub(super) fn named_before<'a>(format: Format, image: &'a [u8], suffix: &str) -> Option<Vec<&'a [u8]>> {
    if format == Format::Fatbin {
        return None;
    }
    let suffix = suffix.as_bytes();
    let is_name = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$';
    let mut prefixes: Vec<&[u8]> = (0..image.len().saturating_sub(suffix.len().saturating_sub(1)))
        .filter(|&at| image[at..].starts_with(suffix))
        .map(|at| {
            let start = image[..at].iter().rposition(|b| !is_name(b)).map_or(0, |before| before + 1);
            &image[start..at]
        })
        .collect();
    prefixes.sort_unstable();
    prefixes.dedup();
    Some(prefixes)
}

fn read_u16(bytes: &[u8], at: usize) -> std::result::Result<u64, String> {
    bytes.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as u64).ok_or_else(|| truncated(at))
}

fn read_u32(bytes: &[u8], at: usize) -> std::result::Result<u64, String> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64)
        .ok_or_else(|| truncated(at))
}

fn read_u64(bytes: &[u8], at: usize) -> std::result::Result<u64, String> {
    let b = bytes.get(at..at + 8).ok_or_else(|| truncated(at))?;
    Ok(u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
}

fn truncated(at: usize) -> String {
    format!("the image ends before its header field at byte {at}")
}

/// Checks a 64-bit little-endian ELF: its program and section header tables, and every
/// section with contents, lie inside `bytes`.
fn elf_extent(bytes: &[u8]) -> std::result::Result<(), String> {
    if bytes.get(4) != Some(&2) || bytes.get(5) != Some(&1) {
        return Err("the cubin is not a 64-bit little-endian ELF".to_string());
    }
    let len = bytes.len() as u64;
    let inside = |what: &str, start: u64, size: u64| -> std::result::Result<(), String> {
        match start.checked_add(size) {
            Some(end) if end <= len => Ok(()),
            _ => Err(format!("the cubin's {what} ({size} bytes at {start}) runs past its {len} bytes")),
        }
    };
    let (phoff, shoff) = (read_u64(bytes, 0x20)?, read_u64(bytes, 0x28)?);
    let (phentsize, phnum) = (read_u16(bytes, 0x36)?, read_u16(bytes, 0x38)?);
    let (shentsize, shnum) = (read_u16(bytes, 0x3a)?, read_u16(bytes, 0x3c)?);
    inside("program header table", phoff, phentsize * phnum)?;
    inside("section header table", shoff, shentsize * shnum)?;
    for index in 0..shnum {
        let header = (shoff + index * shentsize) as usize;
        let kind = read_u32(bytes, header + 4)?;
        const NOBITS: u64 = 8;
        if kind != NOBITS {
            inside(
                &format!("section {index}"),
                read_u64(bytes, header + 0x18)?,
                read_u64(bytes, header + 0x20)?,
            )?;
        }
    }
    for index in 0..phnum {
        let header = (phoff + index * phentsize) as usize;
        inside(&format!("segment {index}"), read_u64(bytes, header + 8)?, read_u64(bytes, header + 0x20)?)?;
    }
    Ok(())
}

/// Checks a fatbin: its header's size plus the size of what follows lie inside `bytes`.
fn fatbin_extent(bytes: &[u8]) -> std::result::Result<(), String> {
    let header = read_u16(bytes, 6)?;
    let body = read_u64(bytes, 8)?;
    match header.checked_add(body) {
        Some(end) if end <= bytes.len() as u64 => Ok(()),
        _ => Err(format!("the fatbin says it holds {header} + {body} bytes, but {} were given", bytes.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_gets_its_nul_and_text_without_a_version_is_refused() {
        let (format, bytes) = prepare("t", b".version 8.0\n.target sm_90\n").unwrap();
        assert_eq!(format, Format::Ptx);
        assert_eq!(bytes.last(), Some(&0));
        assert!(prepare("t", b"hello").is_err());
        // Text after a NUL is not PTX the driver would read: cut there.
        let (_, bytes) = prepare("t", b".version 8.0\0garbage").unwrap();
        assert_eq!(&bytes[..], b".version 8.0\0");
    }

    #[test]
    fn ptx_text_that_begins_like_a_binary_is_refused() {
        let err = prepare_ptx("t", "\x7fELF .version 8.0").unwrap_err();
        assert_eq!(err.refusal(), Some(&Refusal::PtxFirstByte), "{err}");
        assert!(prepare_ptx("t", "").is_err());
        let err = prepare_ptx("t", "no version here").unwrap_err();
        assert_eq!(err.refusal(), Some(&Refusal::NotAnImage), "{err}");
        let bytes = prepare_ptx("t", "// a comment\n.version 8.0\n").unwrap();
        assert_eq!(bytes.last(), Some(&0));
    }

    #[test]
    fn names_are_looked_for_in_the_clear_except_in_fatbins() {
        const SUFFIX: &str = "__cuda_graph_signature";
        let ptx =
            b".version 8.0\n.global .b8 k__cuda_graph_signature[1];\n.b8 mod_add__cuda_graph_signature[2];\0";
        let found = named_before(Format::Ptx, ptx, SUFFIX).unwrap();
        assert_eq!(found, [&b"k"[..], b"mod_add"]);
        let strtab = b"\x7fELF\0kernel\0mod_add__cuda_graph_signature\0";
        assert_eq!(named_before(Format::Cubin, strtab, SUFFIX).unwrap(), [&b"mod_add"[..]]);
        assert_eq!(named_before(Format::Cubin, b"__cuda_graph_signature", SUFFIX).unwrap(), [&b""[..]]);
        assert!(named_before(Format::Cubin, b"\x7fELF", SUFFIX).unwrap().is_empty());
        assert!(named_before(Format::Ptx, b"", SUFFIX).unwrap().is_empty());
        assert_eq!(named_before(Format::Fatbin, &[], SUFFIX), None);
    }

    #[test]
    fn a_fatbin_longer_than_its_bytes_is_refused() {
        let mut fatbin = Vec::new();
        fatbin.extend_from_slice(&FATBIN_MAGIC.to_le_bytes());
        fatbin.extend_from_slice(&1u16.to_le_bytes());
        fatbin.extend_from_slice(&16u16.to_le_bytes());
        fatbin.extend_from_slice(&100u64.to_le_bytes());
        let err = prepare("t", &fatbin).unwrap_err();
        assert!(matches!(err.refusal(), Some(Refusal::MalformedImage { format: "fatbin", .. })), "{err}");
        assert!(err.to_string().contains("116") || err.to_string().contains("16 + 100"), "{err}");
        fatbin.resize(116, 0);
        assert_eq!(prepare("t", &fatbin).unwrap().0, Format::Fatbin);
    }

    #[test]
    fn a_cubin_whose_section_table_runs_past_the_end_is_refused() {
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf[0x28..0x30].copy_from_slice(&1000u64.to_le_bytes()); // section headers at 1000
        elf[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        elf[0x3c..0x3e].copy_from_slice(&2u16.to_le_bytes());
        let err = prepare("t", &elf).unwrap_err();
        assert!(matches!(err.refusal(), Some(Refusal::MalformedImage { format: "cubin", .. })), "{err}");
        assert!(err.to_string().contains("section header table"), "{err}");
        elf[0x3c..0x3e].copy_from_slice(&0u16.to_le_bytes());
        elf[0x28..0x30].copy_from_slice(&64u64.to_le_bytes());
        assert_eq!(prepare("t", &elf).unwrap().0, Format::Cubin);
    }
}
