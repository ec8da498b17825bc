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
    let config = Config::tiny();
    let model = DeviceModel::new(&config, SEED).expect("the weights on the device");
    let prompt = llama_decode::prompt(&config, SEED);
    let decoder = Decoder::new(&config, Grid::new(properties.multiprocessors as usize), &prompt, 16)
        .expect("the decoder");
    (model, decoder, cuda_graph::Stream::new().expect("a stream"))
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
fn argmax_ties_go_to_the_lowest_index() {
    gpu_test_support::require_gpu!();
    let (model, mut decoder, stream) = tiny();
    let check = check_argmax_ties(&model, &mut decoder, &stream).expect("CUDA");
    assert!(check.held, "{}: {}", check.name, check.detail);
}
