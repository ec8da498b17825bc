//! Each kernel of the step against the CPU reference at the tiny size, on a real GPU (skipped
//! without one): the weights the GPU generates equal the CPU hash bit for bit; the QKV kernel
//! (norm, projection, RoPE, cache write), the attention with the O projection, the gate/up
//! with SwiGLU, the down projection, the LM head and the pick (argmax, next token, position,
//! next embedding) each match the reference computed from the device's own inputs; ties in
//! the argmax go to the lowest index.

use llama_decode::checks::{check_argmax_ties, check_kernels, check_weights};
use llama_decode::config::Config;
use llama_decode::device::{Decoder, DeviceModel, Grid};

const SEED: u64 = 0x5eed;

fn tiny() -> (DeviceModel, Decoder, cuda_graph::Stream) {
    let (_device, properties) = chapter_common::device_zero().expect("device 0");
    tiny_on(Grid::new(properties.multiprocessors as usize))
}

fn tiny_on(grid: Grid) -> (DeviceModel, Decoder, cuda_graph::Stream) {
    let config = Config::tiny();
    let model = DeviceModel::new(&config, SEED).expect("the weights on the device");
    let prompt = llama_decode::prompt(&config, SEED);
    let decoder = Decoder::new(&config, grid, &prompt, 16).expect("the decoder");
    (model, decoder, cuda_graph::Stream::new().expect("a stream"))
}

/// Every kernel check of `check_kernels` holds on `grid`.
fn assert_kernels_match(grid: Grid) {
    let (model, mut decoder, stream) = tiny_on(grid);
    let checks = check_kernels(&model, &mut decoder, &stream).expect("CUDA");
    assert_eq!(checks.len(), 8, "{checks:?}");
    let failed: Vec<String> =
        checks.iter().filter(|c| !c.held).map(|c| format!("{}: {}", c.name, c.detail)).collect();
    assert!(failed.is_empty(), "{grid:?}: {failed:#?}");
}

#[test]
fn gpu_weights_equal_the_cpu_hash() {
    gpu_test_support::require_gpu!();
    let (model, _, _) = tiny();
    let check = check_weights(&model, SEED).expect("CUDA");
    assert!(check.held, "{}: {}", check.name, check.detail);
}

#[test]
fn every_kernel_matches_the_cpu_reference() {
    gpu_test_support::require_gpu!();
    let (model, mut decoder, stream) = tiny();
    let checks = check_kernels(&model, &mut decoder, &stream).expect("CUDA");
    assert_eq!(checks.len(), 8, "{checks:?}");
    let failed: Vec<String> =
        checks.iter().filter(|c| !c.held).map(|c| format!("{}: {}", c.name, c.detail)).collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn the_gemvs_match_the_cpu_reference_on_small_grids_and_plain() {
    gpu_test_support::require_gpu!();
    // One or three blocks: many passes per block (both of the pipelined kernels' buffers, an
    // odd and an even number of passes, a block whose last pass has no next row).
    for (sms, pipelined) in [(1, true), (3, true), (1, false), (3, false)] {
        assert_kernels_match(Grid { sms, blocks_per_sm: 1, lm_head_blocks_per_sm: 1, pipelined });
    }
    let (_device, properties) = chapter_common::device_zero().expect("device 0");
    assert_kernels_match(Grid { pipelined: false, ..Grid::new(properties.multiprocessors as usize) });
}

#[test]
fn argmax_ties_go_to_the_lowest_index() {
    gpu_test_support::require_gpu!();
    let (model, mut decoder, stream) = tiny();
    let check = check_argmax_ties(&model, &mut decoder, &stream).expect("CUDA");
    assert!(check.held, "{}: {}", check.name, check.detail);
}
