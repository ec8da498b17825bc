//! Module images for the tests of kernels loaded at run time, built by
//! `cuda_build::ImageBuild` from `kernels/` (empty in a docs-only build).
//!
//! `plain` (`mod_add(uint32_t* data, uint32_t n, uint32_t value)`, `mod_scale(float* data,
//! uint32_t n, float factor)`, `mod_fill(cuda_graph::slice<uint32_t> out, uint32_t value)`)
//! and the global `__device__ uint32_t mod_bias[4]` come as PTX, cubin and fatbin; `conditional` (`mod_double_until(cudaGraphConditionalHandle
//! handle, uint32_t* value, const uint32_t* limit)`) as a fatbin device-linked with the device
//! runtime.
//!
//! ```
//! assert!(module_images::PLAIN_SOURCE.contains("mod_add"));
//! ```

/// `kernels/plain.cu` as PTX text.
pub const PLAIN_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/plain.ptx"));
/// `kernels/plain.cu` as a cubin for the newest architecture of `CUDA_ARCHS`.
pub static PLAIN_CUBIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/plain.cubin"));
/// `kernels/plain.cu` as a fatbin.
pub static PLAIN_FATBIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/plain.fatbin"));
/// `kernels/conditional.cu` as a fatbin, device-linked with the device runtime.
pub static CONDITIONAL_FATBIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/conditional.fatbin"));
/// The source of `plain`, for NVRTC tests (it includes `cuda_graph.cuh`).
pub const PLAIN_SOURCE: &str = include_str!("../kernels/plain.cu");
