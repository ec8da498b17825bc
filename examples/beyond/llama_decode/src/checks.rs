//! Each kernel of the step against the CPU reference's operation ([`crate::reference`]), on
//! the GPU's own inputs: after the prefill, the step's kernels run one at a time and each
//! one's output is compared with the reference computed from what the device held before it.
//! Also the weights the GPU generated against the CPU hash. Used by `--quick` and the tests.

use cuda_graph::Result;

use crate::config::HEAD_DIM;
use crate::device::{Decoder, DeviceModel, OnlyOp, Op, Pick, STATE_POS};
use crate::reference::{argmax, attention, gemv, rms_norm, rope, swiglu};
use crate::weights::{f32_of, seed32, Kind, Tensor};

/// One kernel check: what was compared and the first difference beyond tolerance, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelCheck {
    /// What was checked.
    pub name: String,
    /// The largest difference found (for the report).
    pub detail: String,
    /// Whether it held.
    pub held: bool,
}

/// Relative tolerance of fp32 outputs against the reference (sums in other orders, rsqrt).
pub const REL_TOLERANCE: f32 = 1e-3;
/// Relative tolerance of bf16 outputs (one rounding step of bf16 apart: 2^-8, twice).
pub const BF16_TOLERANCE: f32 = 1.0 / 128.0;

/// Compares `got` with `want`: every element within `rel` times the largest |want| (plus a
/// tiny floor), and no NaN.
fn compare(name: &str, got: &[f32], want: &[f32], rel: f32) -> KernelCheck {
    let scale = want.iter().fold(0.0f32, |m, v| m.max(v.abs())).max(1e-6);
    let mut worst = (0.0f32, 0usize);
    let mut held = got.len() == want.len();
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let d = (g - w).abs();
        if !d.is_finite() || d.is_nan() {
            held = false;
            worst = (f32::INFINITY, i);
            break;
        }
        if d > worst.0 {
            worst = (d, i);
        }
    }
    held &= worst.0 <= rel * scale;
    let detail = if got.len() != want.len() {
        format!("{} values, want {}", got.len(), want.len())
    } else {
        let i = worst.1;
        format!(
            "{} values, largest difference {:.3e} at {i} (got {}, want {}), allowed {:.3e} ({rel:e} of the largest |value| {scale:.3e})",
            want.len(),
            worst.0,
            got.get(i).copied().unwrap_or(f32::NAN),
            want.get(i).copied().unwrap_or(f32::NAN),
            rel * scale
        )
    };
    KernelCheck { name: name.to_string(), detail, held }
}

fn bf16s(values: &[u16]) -> Vec<f32> {
    values.iter().map(|&b| f32_of(b)).collect()
}

/// The weights of layer 0, the embedding's first and last rows and the final norm as the GPU
/// generated them, against the CPU hash, bit for bit.
pub fn check_weights(model: &DeviceModel, seed: u64) -> Result<KernelCheck> {
    let c = *model.config();
    let s = seed32(seed);
    let gpu = model.layer(0)?;
    let t = |kind| Tensor::layer(&c, 0, kind).generate(s);
    let mut wqkv = t(Kind::Wq);
    wqkv.extend(t(Kind::Wk));
    wqkv.extend(t(Kind::Wv));
    let pairs: [(&str, Vec<u16>, Vec<u16>); 8] = [
        ("attn_norm", gpu.attn_norm, t(Kind::AttnNorm)),
        ("wqkv", gpu.wqkv, wqkv),
        ("wo", gpu.wo, t(Kind::Wo)),
        ("mlp_norm", gpu.mlp_norm, t(Kind::MlpNorm)),
        ("gate", gpu.gate, t(Kind::Gate)),
        ("up", gpu.up, t(Kind::Up)),
        ("down", gpu.down, t(Kind::Down)),
        ("final_norm", model.final_norm()?, Tensor::final_norm(&c).generate(s)),
    ];
    let mut bad: Vec<String> = pairs
        .iter()
        .filter_map(|(name, got, want)| {
            let at = got.iter().zip(want).position(|(g, w)| g != w);
            match (got.len() == want.len(), at) {
                (false, _) => Some(format!("{name}: {} elements, want {}", got.len(), want.len())),
                (true, Some(i)) => Some(format!("{name}[{i}]: {:#06x}, want {:#06x}", got[i], want[i])),
                (true, None) => None,
            }
        })
        .collect();
    let embedding = model.embedding()?;
    let emb = Tensor::embedding(&c);
    let rows = c.vocab.min(4);
    for index in (0..rows * c.hidden).chain(emb.len - rows * c.hidden..emb.len) {
        let want = emb.value(s, index as u32);
        if embedding[index] != want {
            bad.push(format!("embedding[{index}]: {:#06x}, want {want:#06x}", embedding[index]));
            break;
        }
    }
    let checked: usize = pairs.iter().map(|(_, _, w)| w.len()).sum::<usize>() + 2 * rows * c.hidden;
    Ok(KernelCheck {
        name: "the weights the GPU generated equal the CPU hash".to_string(),
        held: bad.is_empty(),
        detail: if bad.is_empty() {
            format!("{checked} elements bit for bit (layer 0, final norm, embedding's first and last rows)")
        } else {
            bad.join("; ")
        },
    })
}

/// Runs the step's kernels one at a time on `decoder` (after its prefill; the decoder's state
/// is spent afterwards: reset it before a generation) and checks each against the reference.
pub fn check_kernels(
    model: &DeviceModel, decoder: &mut Decoder, stream: &cuda_graph::Stream,
) -> Result<Vec<KernelCheck>> {
    let c = *model.config();
    decoder.reset_and_prefill(model, stream)?;
    stream.synchronize()?;
    let pos = decoder.state().to_vec()?[STATE_POS] as usize;
    let q_dim = c.q_heads * HEAD_DIM;
    let kv_dim = c.kv_heads * HEAD_DIM;
    let inv_freq = c.inv_freq();
    let run = |op: Op| -> Result<()> {
        decoder.step(model, Pick::Host, &mut OnlyOp(stream, op))?;
        stream.synchronize()
    };
    let mut checks = Vec::new();
    let layer = model.layer(0)?;

    // ll_qkv: norm, Q/K/V, RoPE, the cache at pos.
    let x0 = decoder.x()?;
    run(Op::Qkv(0))?;
    let mut qkv = gemv(&layer.wqkv, &rms_norm(&x0, &layer.attn_norm, c.eps));
    for head in qkv[..q_dim + kv_dim].chunks_exact_mut(HEAD_DIM) {
        rope(head, pos, &inv_freq);
    }
    checks.push(compare(
        "ll_qkv: RMSNorm, Q projection and RoPE",
        &decoder.q()?,
        &qkv[..q_dim],
        REL_TOLERANCE,
    ));
    let (k, v) = decoder.cache(0)?;
    let at = |g: usize| (g * c.max_seq + pos) * HEAD_DIM;
    let k_got: Vec<f32> = (0..c.kv_heads).flat_map(|g| bf16s(&k[at(g)..at(g) + HEAD_DIM])).collect();
    let v_got: Vec<f32> = (0..c.kv_heads).flat_map(|g| bf16s(&v[at(g)..at(g) + HEAD_DIM])).collect();
    checks.push(compare(
        "ll_qkv: K with RoPE into the bf16 cache",
        &k_got,
        &qkv[q_dim..q_dim + kv_dim],
        BF16_TOLERANCE,
    ));
    checks.push(compare("ll_qkv: V into the bf16 cache", &v_got, &qkv[q_dim + kv_dim..], BF16_TOLERANCE));

    // ll_attn + ll_oproj: attention over 0..=pos (split in chunks), combined, O projection, residual.
    let q = decoder.q()?;
    run(Op::Attn(0))?;
    run(Op::OProj(0))?;
    let att = attention(&q, &k, &v, pos, c.kv_heads, c.max_seq);
    let want: Vec<f32> = x0.iter().zip(gemv(&layer.wo, &att)).map(|(x, o)| x + o).collect();
    let x1 = decoder.x()?;
    checks.push(compare(
        &format!("ll_attn + ll_oproj: GQA attention over {} positions, O projection, residual", pos + 1),
        &x1,
        &want,
        REL_TOLERANCE,
    ));

    // ll_gate_up: norm, gate and up, SwiGLU.
    run(Op::GateUp(0))?;
    let n = rms_norm(&x1, &layer.mlp_norm, c.eps);
    let want: Vec<f32> =
        gemv(&layer.gate, &n).into_iter().zip(gemv(&layer.up, &n)).map(|(g, u)| swiglu(g, u)).collect();
    let h = decoder.h()?;
    checks.push(compare("ll_gate_up: RMSNorm, gate and up projections, SwiGLU", &h, &want, REL_TOLERANCE));

    // ll_down: down projection, residual.
    run(Op::Down(0))?;
    let want: Vec<f32> = x1.iter().zip(gemv(&layer.down, &h)).map(|(x, d)| x + d).collect();
    checks.push(compare("ll_down: down projection, residual", &decoder.x()?, &want, REL_TOLERANCE));

    // The other layers as they are, then the LM head and the pick.
    for op in decoder.ops().into_iter().filter(|op| !matches!(op, Op::LmHead | Op::Pick)) {
        if !matches!(op, Op::Qkv(0) | Op::Attn(0) | Op::OProj(0) | Op::GateUp(0) | Op::Down(0)) {
            run(op)?;
        }
    }
    let x = decoder.x()?;
    run(Op::LmHead)?;
    let embedding = model.embedding()?;
    let want = gemv(&embedding, &rms_norm(&x, &model.final_norm()?, c.eps));
    let logits = decoder.logits()?;
    checks.push(compare(
        "ll_lm_head: final RMSNorm, logits over the tied embedding",
        &logits,
        &want,
        REL_TOLERANCE,
    ));

    run(Op::Pick)?;
    let token = argmax(&logits);
    let seq = decoder.sequence()?;
    let state = decoder.state().to_vec()?;
    let x_next = decoder.x()?;
    let row = &embedding[token * c.hidden..(token + 1) * c.hidden];
    let held = seq[pos + 1] as usize == token && state[STATE_POS] as usize == pos + 1 && x_next == bf16s(row);
    checks.push(KernelCheck {
        name: "ll_lm_head + ll_pick: two-stage argmax, next token, position, next embedding".to_string(),
        detail: format!(
            "token {} (want {token}, the first largest logit), position {} (want {}), x {} the token's embedding",
            seq[pos + 1],
            state[STATE_POS],
            pos + 1,
            if x_next == bf16s(row) { "equals" } else { "differs from" }
        ),
        held,
    });
    Ok(checks)
}

/// The argmax's tie rule on the device: the pick over hand-written block maxima, with ties
/// between blocks, must choose the lowest index among the largest.
pub fn check_argmax_ties(
    model: &DeviceModel, decoder: &mut Decoder, stream: &cuda_graph::Stream,
) -> Result<KernelCheck> {
    decoder.reset_and_prefill(model, stream)?;
    stream.synchronize()?;
    let pos = decoder.state().to_vec()?[STATE_POS] as usize;
    let parts = decoder.parts();
    let mut max = vec![-1.0f32; parts];
    let mut idx: Vec<u32> = (0..parts as u32).map(|i| (i * 7 + 3) % model.config().vocab as u32).collect();
    // The largest value three times, at decreasing indices; the first largest is the lowest.
    let spots = [parts - 1, parts / 2, 0];
    for (n, &at) in spots.iter().enumerate() {
        max[at] = 2.5;
        idx[at] = (3 - n as u32) * 5;
    }
    decoder.write_parts(&max, &idx)?;
    decoder.step(model, Pick::Host, &mut OnlyOp(stream, Op::Pick))?;
    stream.synchronize()?;
    let got = decoder.sequence()?[pos + 1];
    let want = 5;
    Ok(KernelCheck {
        name: "ll_pick: ties go to the lowest index".to_string(),
        detail: format!(
            "{parts} block maxima, three tied at 2.5 with indices 15, 10, 5: chose {got}, want {want}"
        ),
        held: got == want,
    })
}
