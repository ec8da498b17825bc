//! GPU architectures to compile for, from `CUDA_ARCHS`.

use std::fmt;

/// The architectures used when `CUDA_ARCHS` is unset: SASS for sm_80 and sm_90, plus
/// `compute_90` PTX so newer GPUs can JIT the code.
pub const DEFAULT_ARCHS: &str = "80;90";

/// One target architecture, like `90` or `90a`.
///
/// ```
/// let archs = cuda_build::Arch::parse_list("80;90").unwrap();
/// assert_eq!(archs.len(), 2);
/// assert_eq!(archs[1].to_string(), "90");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arch(String);

/// A `CUDA_ARCHS` entry that is not an architecture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadArch(pub String);

impl fmt::Display for BadArch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CUDA_ARCHS entry {:?} is not an architecture: write numbers like `80;90` or `90a`", self.0)
    }
}

impl std::error::Error for BadArch {}

impl Arch {
    /// Parses `80;90` (also `,` or spaces as separators; `sm_90` and `compute_90` are accepted).
    pub fn parse_list(list: &str) -> Result<Vec<Arch>, BadArch> {
        let archs = list
            .split(|c: char| c == ';' || c == ',' || c.is_whitespace())
            .filter(|entry| !entry.is_empty())
            .map(Arch::parse)
            .collect::<Result<Vec<_>, _>>()?;
        if archs.is_empty() {
            return Err(BadArch(list.to_string()));
        }
        Ok(archs)
    }

    fn parse(entry: &str) -> Result<Arch, BadArch> {
        let bare = entry.trim_start_matches("sm_").trim_start_matches("compute_");
        let digits = bare.trim_end_matches(['a', 'f']);
        let valid = (2..=3).contains(&digits.len())
            && digits.chars().all(|c| c.is_ascii_digit())
            && bare.len() - digits.len() <= 1;
        if valid {
            Ok(Arch(bare.to_string()))
        } else {
            Err(BadArch(entry.to_string()))
        }
    }

    /// The nvcc `-gencode` value that emits SASS for this architecture.
    pub fn sass_gencode(&self) -> String {
        format!("arch=compute_{0},code=sm_{0}", self.0)
    }

    /// The nvcc `-gencode` value that embeds PTX for this architecture.
    pub fn ptx_gencode(&self) -> String {
        format!("arch=compute_{0},code=compute_{0}", self.0)
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The `-gencode` values for a list: SASS for each, PTX for the last (the newest).
pub fn gencode_flags(archs: &[Arch]) -> Vec<String> {
    let mut flags: Vec<String> = archs.iter().map(Arch::sass_gencode).collect();
    if let Some(newest) = archs.last() {
        flags.push(newest.ptx_gencode());
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_list_gives_two_sass_and_one_ptx() {
        let flags = gencode_flags(&Arch::parse_list(DEFAULT_ARCHS).unwrap());
        assert_eq!(
            flags,
            ["arch=compute_80,code=sm_80", "arch=compute_90,code=sm_90", "arch=compute_90,code=compute_90"]
        );
    }

    #[test]
    fn accepts_prefixes_suffixes_and_separators() {
        let archs = Arch::parse_list("sm_80, compute_90a 100f").unwrap();
        let names: Vec<String> = archs.iter().map(Arch::to_string).collect();
        assert_eq!(names, ["80", "90a", "100f"]);
    }

    #[test]
    fn refuses_what_is_not_an_architecture() {
        assert_eq!(Arch::parse_list("80;hopper"), Err(BadArch("hopper".into())));
        assert_eq!(Arch::parse_list(" ; "), Err(BadArch(" ; ".into())));
        assert!(Arch::parse_list("9").is_err());
        assert!(Arch::parse_list("90ab").is_err());
    }
}
