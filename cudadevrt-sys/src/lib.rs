//! Links the CUDA device runtime (`libcudadevrt.a`), which kernels need to launch kernels
//! (dynamic parallelism, CDP2) and graphs (device graph launch) from the device, and carries
//! the device-runtime constants that the host side needs.
//!
//! Device code gets the same numbers from `cudadevrt_limits.cuh`, whose folder this crate
//! publishes through its `links = "cudadevrt"` metadata: a build script of a crate that
//! depends on this one reads it as `DEP_CUDADEVRT_INCLUDE`. These are the limits' one home:
//! `device-launch` re-exports the constants and its `device_launch.cuh` includes the header,
//! and the tests here check that the header's numbers equal the constants.
//!
//! ```
//! use cudadevrt_sys::{FIRE_AND_FORGET_LIMIT, TAIL_LAUNCH_LIMIT};
//! assert!(FIRE_AND_FORGET_LIMIT < TAIL_LAUNCH_LIMIT);
//! ```
#![no_std]

/// Distinct graphs one launching kernel may fire-and-forget (sibling launches included);
/// the next device-side `cudaGraphLaunch` returns `cudaErrorInvalidValue` (measured on
/// CUDA 13.0).
pub const FIRE_AND_FORGET_LIMIT: u32 = 120;

/// Graphs one launching kernel may tail-launch; the next returns `cudaErrorInvalidValue`.
pub const TAIL_LAUNCH_LIMIT: u32 = 255;

/// Default of `cudaLimitDevRuntimePendingLaunchCount`: dynamic-parallelism launches buffered
/// before further launches fail with `cudaErrorLaunchPendingCountExceeded`.
pub const DEFAULT_PENDING_LAUNCH_COUNT: u32 = 2048;

/// The device-side stream handle for a tail launch of a graph (`cudaStreamGraphTailLaunch`).
pub const STREAM_GRAPH_TAIL_LAUNCH: usize = 0x0100_0000_0000_0000;
/// The device-side stream handle for a fire-and-forget graph launch
/// (`cudaStreamGraphFireAndForget`).
pub const STREAM_GRAPH_FIRE_AND_FORGET: usize = 0x0200_0000_0000_0000;
/// The device-side stream handle for a sibling launch
/// (`cudaStreamGraphFireAndForgetAsSibling`).
pub const STREAM_GRAPH_FIRE_AND_FORGET_AS_SIBLING: usize = 0x0300_0000_0000_0000;

/// The folder holding `cudadevrt_limits.cuh` (in this crate's source).
pub const INCLUDE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/include");

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::String;

    fn header() -> String {
        String::from(include_str!("../include/cudadevrt_limits.cuh"))
    }

    fn define(text: &str, name: &str) -> u32 {
        text.lines()
            .find_map(|l| l.strip_prefix("#define ").and_then(|rest| rest.strip_prefix(name)))
            .unwrap_or_else(|| panic!("{name} missing from cudadevrt_limits.cuh"))
            .trim()
            .parse()
            .unwrap()
    }

    #[test]
    fn the_header_and_the_rust_constants_agree() {
        let text = header();
        assert_eq!(define(&text, "CUDADEVRT_FIRE_AND_FORGET_LIMIT "), super::FIRE_AND_FORGET_LIMIT);
        assert_eq!(define(&text, "CUDADEVRT_TAIL_LAUNCH_LIMIT "), super::TAIL_LAUNCH_LIMIT);
        assert_eq!(
            define(&text, "CUDADEVRT_DEFAULT_PENDING_LAUNCH_COUNT "),
            super::DEFAULT_PENDING_LAUNCH_COUNT
        );
    }

    #[test]
    fn the_stream_handles_match_the_toolkit_header() {
        let text = include_str!(concat!(env!("CUDADEVRT_SYS_CUDA_INCLUDE"), "/cuda_device_runtime_api.h"));
        let value = |name: &str| -> usize {
            let line = text
                .lines()
                .find(|l| l.starts_with("#define") && l.split_whitespace().nth(1) == Some(name))
                .unwrap();
            let hex = line.split("0x").nth(1).unwrap();
            let digits: String = hex.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
            usize::from_str_radix(&digits, 16).unwrap()
        };
        assert_eq!(value("cudaStreamGraphTailLaunch"), super::STREAM_GRAPH_TAIL_LAUNCH);
        assert_eq!(value("cudaStreamGraphFireAndForget"), super::STREAM_GRAPH_FIRE_AND_FORGET);
        assert_eq!(
            value("cudaStreamGraphFireAndForgetAsSibling"),
            super::STREAM_GRAPH_FIRE_AND_FORGET_AS_SIBLING
        );
    }
}
