//! Device-launch limits, as configuration.

pub use cudadevrt_sys::{DEFAULT_PENDING_LAUNCH_COUNT, FIRE_AND_FORGET_LIMIT, TAIL_LAUNCH_LIMIT};

#[cfg(test)]
mod tests {
    use super::*;

    fn header_define(name: &str) -> u32 {
        include_str!("../include/device_launch.cuh")
            .lines()
            .find_map(|l| l.strip_prefix("#define ").and_then(|r| r.strip_prefix(name)))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} missing from device_launch.cuh"))
    }

    #[test]
    fn the_header_limits_equal_the_rust_constants() {
        assert_eq!(header_define("DL_FIRE_AND_FORGET_LIMIT "), FIRE_AND_FORGET_LIMIT);
        assert_eq!(header_define("DL_TAIL_LAUNCH_LIMIT "), TAIL_LAUNCH_LIMIT);
    }
}
