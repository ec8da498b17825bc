//! The model on the GPU: its weights (generated there from the seed), the decoder's buffers
//! (KV cache, residual, state words), and the step's kernels, launched on a stream or added to a
//! graph (see `kernels/llama.cu` for what each computes).

pub use chapter_common::Chain;
use chapter_common::KernelChain;
use cuda_graph::graph::{AsNode, GraphBuilder, KernelNode};
use cuda_graph::kernel::{Kernel, KernelArgs, LaunchConfig};
use cuda_graph::{ConditionalHandle, DeviceBuffer, DeviceConstPtr, DevicePtr, Result, Stream};

use crate::config::{Config, CHUNK, HEAD_DIM, PARTIAL};
use crate::weights::{seed32, Kind, Tensor};

// SAFETY: every kernel below indexes its pointers only within the sizes that `DeviceModel::new`
// and `Decoder::new` allocate for the `Config` they are given, whose shape `Config::unsupported`
// accepted (rows multiples of 256 within the kernels' shared arrays, so the pipelined GEMVs'
// passes of 2 or 4 rows end at the last row, head dimension 64, the
// cache a multiple of 64 positions): weights by the config's shapes; `ll_init_weights` writes
// `offset .. offset + count` of a buffer that long; the caches and `seq` at the position
// `state[0]`, which `ll_pick*` advances only while `pos + 1 < max_seq`; the attention partials
// by head and chunk (`q_heads * max_seq / 64` of them); the embedding by a token, a prompt token
// (checked below vocab by `Decoder::new`) or an argmax (below vocab); the argmax parts by the
// LM head's block count, which is the `parts` passed to the pick; `ll_loop_gate` reads the four
// state words and sets the handle it is given. The declarations are private
// to this module, whose launches pass exactly those buffers and sizes.
cuda_graph::kernels! {
    /// Elements `offset .. offset + count` of a weight buffer from the hash.
    unsafe fn ll_init_weights(out: DevicePtr<u16>, offset: u64, count: u32, seed: u32, tensor: u32, shift: u32, one: u32);
    /// x = the embedding of `seq[pos]`.
    unsafe fn ll_embed(embedding: DeviceConstPtr<u16>, seq: DeviceConstPtr<u32>, state: DeviceConstPtr<u32>, x: DevicePtr<f32>, hidden: u32);
    /// Norm, Q/K/V, RoPE, cache write (`heads`: q_heads | kv_heads << 16).
    unsafe fn ll_qkv(
        w: DeviceConstPtr<u16>, norm_w: DeviceConstPtr<u16>, x: DeviceConstPtr<f32>, inv_freq: DeviceConstPtr<f32>,
        state: DeviceConstPtr<u32>, q: DevicePtr<f32>, k_cache: DevicePtr<u16>, v_cache: DevicePtr<u16>,
        hidden: u32, heads: u32, max_seq: u32, eps: f32,
    );
    /// Attention partials per head and chunk of 64 positions.
    unsafe fn ll_attn(
        q: DeviceConstPtr<f32>, k_cache: DeviceConstPtr<u16>, v_cache: DeviceConstPtr<u16>, state: DeviceConstPtr<u32>,
        partial: DevicePtr<f32>, q_heads: u32, kv_heads: u32, max_seq: u32,
    );
    /// Partials combined, O projection, residual add.
    unsafe fn ll_oproj(
        wo: DeviceConstPtr<u16>, partial: DeviceConstPtr<f32>, state: DeviceConstPtr<u32>, x: DevicePtr<f32>,
        hidden: u32, q_heads: u32, max_seq: u32,
    );
    /// Norm, gate and up projections, SwiGLU.
    unsafe fn ll_gate_up(
        w_gate: DeviceConstPtr<u16>, w_up: DeviceConstPtr<u16>, norm_w: DeviceConstPtr<u16>, x: DeviceConstPtr<f32>,
        h: DevicePtr<f32>, hidden: u32, mlp: u32, eps: f32,
    );
    /// Down projection, residual add.
    unsafe fn ll_down(w_down: DeviceConstPtr<u16>, h: DeviceConstPtr<f32>, x: DevicePtr<f32>, hidden: u32, mlp: u32);
    /// As `ll_gate_up`, two rows in flight per warp (gate and up rows on different warps).
    unsafe fn ll_gate_up_pipe(
        w_gate: DeviceConstPtr<u16>, w_up: DeviceConstPtr<u16>, norm_w: DeviceConstPtr<u16>, x: DeviceConstPtr<f32>,
        h: DevicePtr<f32>, hidden: u32, mlp: u32, eps: f32,
    );
    /// As `ll_down`, two row pieces in flight per warp (a row split over four warps).
    unsafe fn ll_down_pipe(w_down: DeviceConstPtr<u16>, h: DeviceConstPtr<f32>, x: DevicePtr<f32>, hidden: u32, mlp: u32);
    /// Final norm, logits, each block's best.
    unsafe fn ll_lm_head(
        embedding: DeviceConstPtr<u16>, norm_w: DeviceConstPtr<u16>, x: DeviceConstPtr<f32>, logits: DevicePtr<f32>,
        part_max: DevicePtr<f32>, part_idx: DevicePtr<u32>, hidden: u32, vocab: u32, eps: f32,
    );
    /// Argmax, next token, position, step count, next x.
    unsafe fn ll_pick(
        part_max: DeviceConstPtr<f32>, part_idx: DeviceConstPtr<u32>, parts: u32, embedding: DeviceConstPtr<u16>,
        seq: DevicePtr<u32>, state: DevicePtr<u32>, x: DevicePtr<f32>, hidden: u32, vocab: u32, max_seq: u32,
    );
    /// The same, ending the WHILE loop of `handle` once fewer than `ahead` steps are left.
    unsafe fn ll_pick_while(
        handle: ConditionalHandle, ahead: u32, part_max: DeviceConstPtr<f32>, part_idx: DeviceConstPtr<u32>,
        parts: u32, embedding: DeviceConstPtr<u16>, seq: DevicePtr<u32>, state: DevicePtr<u32>,
        x: DevicePtr<f32>, hidden: u32, vocab: u32, max_seq: u32,
    );
    /// Opens the WHILE loop of `handle` when at least `ahead` steps are left (one thread).
    unsafe fn ll_loop_gate(handle: ConditionalHandle, state: DeviceConstPtr<u32>, max_seq: u32, ahead: u32);
}

/// Threads of the GEMV-shaped kernels' blocks (`LL_THREADS`: 8 warps).
const THREADS: u32 = 256;
/// Rows a GEMV block covers per pass (one per warp).
const ROWS_PER_BLOCK: usize = 8;
/// Rows an `ll_gate_up_pipe` block covers per pass (`LL_GATE_UP_ROWS`: a gate and an up warp
/// per row).
const GATE_UP_ROWS_PER_BLOCK: usize = 4;
/// Rows an `ll_down_pipe` block covers per pass (`LL_DOWN_ROWS`: four warps per row).
const DOWN_ROWS_PER_BLOCK: usize = 2;
/// Default blocks per SM at most for the grid-stride GEMVs (gate/up, down, O projection; one
/// wave: the later rows stream while the first are summed): two blocks of the gate/up kernels
/// fit an SM (plain 96 registers a thread, pipelined 100 and down's 115; three would need 80 at
/// most, which spills).
pub const BLOCKS_PER_SM: usize = 2;
/// The default for the LM head, whose blocks are lighter (62 registers a thread, 8 KB of shared
/// memory): four fit an SM, twice the loads in flight over its 128,256 rows.
pub const LM_HEAD_BLOCKS_PER_SM: usize = 4;

/// How the grid-stride GEMVs launch: at most `blocks_per_sm` (gate/up, down, O projection) or
/// `lm_head_blocks_per_sm` (LM head) blocks per SM of a device of `sms` SMs, and whether gate/up
/// and down are the pipelined kernels (`ll_gate_up_pipe`, `ll_down_pipe`: a warp's next row is
/// in flight while it computes on the current one) or the plain ones. More blocks than fit an
/// SM at once still compute the same rows (a second wave), only slower.
///
/// ```
/// let grid = llama_decode::device::Grid::new(132);
/// assert_eq!((grid.blocks_per_sm, grid.lm_head_blocks_per_sm, grid.pipelined), (2, 4, true));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    /// SMs of the device.
    pub sms: usize,
    /// Blocks per SM at most of gate/up, down and the O projection.
    pub blocks_per_sm: usize,
    /// Blocks per SM at most of the LM head.
    pub lm_head_blocks_per_sm: usize,
    /// Gate/up and down as the pipelined kernels (else the plain ones).
    pub pipelined: bool,
}

impl Grid {
    /// The defaults ([`BLOCKS_PER_SM`], [`LM_HEAD_BLOCKS_PER_SM`]) on `sms` SMs.
    pub fn new(sms: usize) -> Grid {
        Grid {
            sms,
            blocks_per_sm: BLOCKS_PER_SM,
            lm_head_blocks_per_sm: LM_HEAD_BLOCKS_PER_SM,
            pipelined: true,
        }
    }

    /// Blocks of a GEMV over `rows` rows, `per_block` rows per block per pass (the LM head's
    /// cap where `lm_head`).
    fn blocks(&self, rows: usize, per_block: usize, lm_head: bool) -> u32 {
        let per_sm = if lm_head { self.lm_head_blocks_per_sm } else { self.blocks_per_sm };
        gemv_blocks(rows, per_block, self.sms, per_sm)
    }
}

/// State word: position of the token the next step reads.
pub const STATE_POS: usize = 0;
/// State word: decode steps run.
pub const STATE_STEPS: usize = 1;
/// State word: the step count at which the WHILE loop ends.
pub const STATE_TARGET: usize = 2;
/// State word: the prompt's length.
pub const STATE_PROMPT: usize = 3;
/// State words.
pub const STATE_WORDS: usize = 4;

/// One layer's weights on the device (bf16 bits).
struct DeviceLayer {
    attn_norm: DeviceBuffer<u16>,
    wqkv: DeviceBuffer<u16>,
    wo: DeviceBuffer<u16>,
    mlp_norm: DeviceBuffer<u16>,
    gate: DeviceBuffer<u16>,
    up: DeviceBuffer<u16>,
    down: DeviceBuffer<u16>,
}

/// The model's weights on the device, generated there from the seed.
pub struct DeviceModel {
    config: Config,
    embedding: DeviceBuffer<u16>,
    final_norm: DeviceBuffer<u16>,
    layers: Vec<DeviceLayer>,
    inv_freq: DeviceBuffer<f32>,
}

/// Fills `buffer[offset ..]` with `tensor` on `stream`.
fn fill(buffer: &DeviceBuffer<u16>, offset: usize, tensor: Tensor, seed: u32, stream: &Stream) -> Result<()> {
    let count = tensor.len as u32;
    let blocks = (tensor.len.div_ceil(THREADS as usize)).min(4096) as u32;
    let args = (buffer.ptr(), offset as u64, count, seed, tensor.id, tensor.shift, u32::from(tensor.one));
    ll_init_weights().launch(stream, LaunchConfig::new(blocks, THREADS), args)
}

/// A buffer of `tensors` one after the other, generated on `stream`.
fn generated(tensors: &[Tensor], seed: u32, stream: &Stream) -> Result<DeviceBuffer<u16>> {
    let buffer = DeviceBuffer::zeroed(tensors.iter().map(|t| t.len).sum())?;
    let mut offset = 0;
    for &tensor in tensors {
        fill(&buffer, offset, tensor, seed, stream)?;
        offset += tensor.len;
    }
    Ok(buffer)
}

impl DeviceModel {
    /// Every weight of `config` generated on the GPU from `seed` (waits for it).
    pub fn new(config: &Config, seed: u64) -> Result<DeviceModel> {
        let stream = Stream::new()?;
        let s = seed32(seed);
        let layers = (0..config.layers)
            .map(|l| {
                let t = |kind| Tensor::layer(config, l, kind);
                Ok(DeviceLayer {
                    attn_norm: generated(&[t(Kind::AttnNorm)], s, &stream)?,
                    wqkv: generated(&[t(Kind::Wq), t(Kind::Wk), t(Kind::Wv)], s, &stream)?,
                    wo: generated(&[t(Kind::Wo)], s, &stream)?,
                    mlp_norm: generated(&[t(Kind::MlpNorm)], s, &stream)?,
                    gate: generated(&[t(Kind::Gate)], s, &stream)?,
                    up: generated(&[t(Kind::Up)], s, &stream)?,
                    down: generated(&[t(Kind::Down)], s, &stream)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let model = DeviceModel {
            config: *config,
            embedding: generated(&[Tensor::embedding(config)], s, &stream)?,
            final_norm: generated(&[Tensor::final_norm(config)], s, &stream)?,
            layers,
            inv_freq: DeviceBuffer::from_slice(&config.inv_freq())?,
        };
        stream.synchronize()?;
        Ok(model)
    }

    /// The shape.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The embedding as generated (bf16 bits; for the tests).
    pub fn embedding(&self) -> Result<Vec<u16>> {
        self.embedding.to_vec()
    }

    /// Layer `layer`'s weights as generated: attention norm, wqkv, wo, MLP norm, gate, up,
    /// down (bf16 bits; for the tests).
    pub fn layer(&self, layer: usize) -> Result<crate::reference::Layer> {
        let l = &self.layers[layer];
        Ok(crate::reference::Layer {
            attn_norm: l.attn_norm.to_vec()?,
            wqkv: l.wqkv.to_vec()?,
            wo: l.wo.to_vec()?,
            mlp_norm: l.mlp_norm.to_vec()?,
            gate: l.gate.to_vec()?,
            up: l.up.to_vec()?,
            down: l.down.to_vec()?,
        })
    }

    /// The final norm's weight as generated.
    pub fn final_norm(&self) -> Result<Vec<u16>> {
        self.final_norm.to_vec()
    }
}

/// Which last kernel a step ends with.
#[derive(Debug, Clone, Copy)]
pub enum Pick {
    /// `ll_pick`: the host decides how many steps run.
    Host,
    /// `ll_pick_while`: the kernel ends the WHILE loop of this handle once fewer steps are
    /// left than the loop's body runs (the `u32`).
    While(ConditionalHandle, u32),
}

/// The step's kernels, in order, by what they do (for the profile and the per-kernel tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `ll_qkv` of a layer.
    Qkv(usize),
    /// `ll_attn` of a layer.
    Attn(usize),
    /// `ll_oproj` of a layer.
    OProj(usize),
    /// `ll_gate_up` of a layer.
    GateUp(usize),
    /// `ll_down` of a layer.
    Down(usize),
    /// `ll_lm_head`.
    LmHead,
    /// `ll_pick` (or `ll_pick_while`).
    Pick,
}

impl Op {
    /// The kernel's name without its layer.
    pub fn name(self) -> &'static str {
        match self {
            Op::Qkv(_) => "qkv",
            Op::Attn(_) => "attn",
            Op::OProj(_) => "oproj",
            Op::GateUp(_) => "gate_up",
            Op::Down(_) => "down",
            Op::LmHead => "lm_head",
            Op::Pick => "pick",
        }
    }
}

/// Where the step's kernels go: launched on a stream, or added to a graph.
pub trait StepSink {
    /// Takes one kernel of the step, in order.
    fn kernel<A: KernelArgs>(
        &mut self, op: Op, kernel: &Kernel<A>, config: LaunchConfig, args: A,
    ) -> Result<()>;
}

/// Launches each kernel on the stream.
pub struct OnStream<'s>(pub &'s Stream);

impl StepSink for OnStream<'_> {
    fn kernel<A: KernelArgs>(
        &mut self, _: Op, kernel: &Kernel<A>, config: LaunchConfig, args: A,
    ) -> Result<()> {
        kernel.launch(self.0, config, args)
    }
}

/// Launches only the kernel of one op on the stream (the per-kernel tests and timings).
pub struct OnlyOp<'s>(pub &'s Stream, pub Op);

impl StepSink for OnlyOp<'_> {
    fn kernel<A: KernelArgs>(
        &mut self, op: Op, kernel: &Kernel<A>, config: LaunchConfig, args: A,
    ) -> Result<()> {
        if op == self.1 {
            kernel.launch(self.0, config, args)?;
        }
        Ok(())
    }
}

/// A step's kernels into a graph, as a chain.
struct IntoGraph<'g, 'd>(KernelChain<'g, 'd>);

impl StepSink for IntoGraph<'_, '_> {
    fn kernel<A: KernelArgs>(
        &mut self, _: Op, kernel: &Kernel<A>, config: LaunchConfig, args: A,
    ) -> Result<()> {
        self.0.add(kernel, config, args)
    }
}

/// The decoder's state on the device: the sequence, the state words, the KV cache, the
/// residual and the step's intermediate buffers.
pub struct Decoder {
    config: Config,
    grid: Grid,
    prompt_len: usize,
    /// The prompt then zeros, `[max_seq]`: what `seq` is reset to.
    seq_start: DeviceBuffer<u32>,
    /// State words before the prefill, and after it (the decode's start).
    state_prefill: DeviceBuffer<u32>,
    state_decode: DeviceBuffer<u32>,
    seq: DeviceBuffer<u32>,
    state: DeviceBuffer<u32>,
    x: DeviceBuffer<f32>,
    q: DeviceBuffer<f32>,
    caches: Vec<(DeviceBuffer<u16>, DeviceBuffer<u16>)>,
    partial: DeviceBuffer<f32>,
    h: DeviceBuffer<f32>,
    logits: DeviceBuffer<f32>,
    part_max: DeviceBuffer<f32>,
    part_idx: DeviceBuffer<u32>,
}

/// Blocks of a grid-stride GEMV over `rows` rows, `per_block` rows per block per pass, on `sms`
/// SMs, at most `per_sm` a SM.
fn gemv_blocks(rows: usize, per_block: usize, sms: usize, per_sm: usize) -> u32 {
    rows.div_ceil(per_block).min(sms.max(1) * per_sm.max(1)).max(1) as u32
}

impl Decoder {
    /// Buffers for `config`, launched as `grid` says, to generate `tokens` tokens after
    /// `prompt` (the prompt plus the tokens must fit the cache; every token below the vocabulary).
    pub fn new(config: &Config, grid: Grid, prompt: &[u32], tokens: usize) -> Result<Decoder> {
        let refuse = |what, value: usize, min: usize, max: usize| cuda_graph::CudaError::InvalidArgument {
            call: "Decoder::new",
            reason: cuda_graph::Refusal::OutOfRange {
                what,
                value: value as u64,
                min: min as u64,
                max: max as u64,
            },
        };
        if prompt.is_empty() || prompt.len() + tokens > config.max_seq {
            return Err(refuse("prompt + tokens", prompt.len() + tokens, 1, config.max_seq));
        }
        if tokens == 0 {
            return Err(refuse("tokens", 0, 1, config.max_seq));
        }
        if let Some(&token) = prompt.iter().find(|&&t| t as usize >= config.vocab) {
            return Err(refuse("prompt token", token as usize, 0, config.vocab - 1));
        }
        let mut seq_start = prompt.to_vec();
        seq_start.resize(config.max_seq, 0);
        let p = prompt.len() as u32;
        let cache = || DeviceBuffer::<u16>::zeroed(config.kv_heads * config.max_seq * HEAD_DIM);
        let parts = grid.blocks(config.vocab, ROWS_PER_BLOCK, true) as usize;
        Ok(Decoder {
            config: *config,
            grid,
            prompt_len: prompt.len(),
            seq: DeviceBuffer::from_slice(&seq_start)?,
            seq_start: DeviceBuffer::from_slice(&seq_start)?,
            state_prefill: DeviceBuffer::from_slice(&[0, 0, p.saturating_sub(1), p])?,
            state_decode: DeviceBuffer::from_slice(&[p - 1, 0, tokens as u32, p])?,
            state: DeviceBuffer::zeroed(STATE_WORDS)?,
            x: DeviceBuffer::zeroed(config.hidden)?,
            q: DeviceBuffer::zeroed(config.q_heads * HEAD_DIM)?,
            caches: (0..config.layers).map(|_| Ok((cache()?, cache()?))).collect::<Result<Vec<_>>>()?,
            partial: DeviceBuffer::zeroed(config.q_heads * (config.max_seq / CHUNK) * PARTIAL)?,
            h: DeviceBuffer::zeroed(config.mlp)?,
            logits: DeviceBuffer::zeroed(config.vocab)?,
            part_max: DeviceBuffer::zeroed(parts)?,
            part_idx: DeviceBuffer::zeroed(parts)?,
        })
    }

    /// The prompt's length.
    pub fn prompt_len(&self) -> usize {
        self.prompt_len
    }

    /// The state words (position, steps, target, prompt length).
    pub fn state(&self) -> &DeviceBuffer<u32> {
        &self.state
    }

    /// Queues a generation's start on `stream`: the prompt in the sequence, the prompt's
    /// tokens but the last fed through the step (stream launches: the prefill, not timed),
    /// then the state of the first decode step (position prompt − 1, no steps run).
    pub fn reset_and_prefill(&mut self, model: &DeviceModel, stream: &Stream) -> Result<()> {
        self.seq.copy_from_device_async(&self.seq_start, stream)?;
        self.state.copy_from_device_async(&self.state_prefill, stream)?;
        let args = (
            model.embedding.const_ptr(),
            self.seq.const_ptr(),
            self.state.const_ptr(),
            self.x.ptr(),
            self.config.hidden as u32,
        );
        ll_embed().launch(stream, LaunchConfig::new(1, THREADS), args)?;
        for _ in 1..self.prompt_len {
            self.step(model, Pick::Host, &mut OnStream(stream))?;
        }
        self.state.copy_from_device_async(&self.state_decode, stream)
    }

    /// The generated tokens (after the prompt) of the last generation, and its step count
    /// (waits for the device).
    pub fn read(&self) -> Result<(Vec<u32>, u32)> {
        let seq = self.seq.to_vec()?;
        let state = self.state.to_vec()?;
        let end = (state[STATE_POS] as usize + 1).min(seq.len());
        Ok((seq[self.prompt_len.min(end)..end].to_vec(), state[STATE_STEPS]))
    }

    /// The logits of the last step run (waits for the device).
    pub fn logits(&self) -> Result<Vec<f32>> {
        self.logits.to_vec()
    }

    /// The residual stream x (waits for the device).
    pub fn x(&self) -> Result<Vec<f32>> {
        self.x.to_vec()
    }

    /// The roped queries of the last `ll_qkv` run (waits for the device).
    pub fn q(&self) -> Result<Vec<f32>> {
        self.q.to_vec()
    }

    /// The MLP activation h of the last `ll_gate_up` run (waits for the device).
    pub fn h(&self) -> Result<Vec<f32>> {
        self.h.to_vec()
    }

    /// Layer `layer`'s key and value caches (waits for the device).
    pub fn cache(&self, layer: usize) -> Result<(Vec<u16>, Vec<u16>)> {
        Ok((self.caches[layer].0.to_vec()?, self.caches[layer].1.to_vec()?))
    }

    /// The whole sequence buffer, prompt included (waits for the device).
    pub fn sequence(&self) -> Result<Vec<u32>> {
        self.seq.to_vec()
    }

    /// Blocks of the LM head: the argmax's parts.
    pub fn parts(&self) -> usize {
        self.part_max.len()
    }

    /// Writes the argmax's parts (block maxima and their indices; for the tie test). Waits
    /// for the device first.
    pub fn write_parts(&mut self, max: &[f32], idx: &[u32]) -> Result<()> {
        self.part_max.copy_from_host(max)?;
        self.part_idx.copy_from_host(idx)
    }

    /// The step's kernels in order.
    pub fn ops(&self) -> Vec<Op> {
        let mut ops: Vec<Op> = (0..self.config.layers)
            .flat_map(|l| [Op::Qkv(l), Op::Attn(l), Op::OProj(l), Op::GateUp(l), Op::Down(l)])
            .collect();
        ops.extend([Op::LmHead, Op::Pick]);
        ops
    }

    /// The launch geometry of `op`.
    pub fn launch_config(&self, op: Op) -> LaunchConfig {
        let c = &self.config;
        match op {
            Op::Qkv(_) => LaunchConfig::new(((c.q_heads + 2 * c.kv_heads) * 4) as u32, THREADS),
            Op::Attn(_) => LaunchConfig::new((c.q_heads * (c.max_seq / CHUNK)) as u32, CHUNK as u32),
            Op::OProj(_) => LaunchConfig::new(self.grid.blocks(c.hidden, ROWS_PER_BLOCK, false), THREADS),
            Op::Down(_) => {
                let per_block = if self.grid.pipelined { DOWN_ROWS_PER_BLOCK } else { ROWS_PER_BLOCK };
                LaunchConfig::new(self.grid.blocks(c.hidden, per_block, false), THREADS)
            }
            Op::GateUp(_) => {
                let per_block = if self.grid.pipelined { GATE_UP_ROWS_PER_BLOCK } else { ROWS_PER_BLOCK };
                LaunchConfig::new(self.grid.blocks(c.mlp, per_block, false), THREADS)
            }
            Op::LmHead => LaunchConfig::new(self.grid.blocks(c.vocab, ROWS_PER_BLOCK, true), THREADS),
            Op::Pick => LaunchConfig::new(1, THREADS),
        }
    }

    /// Gives `sink` the step's kernels in order (five per layer, the LM head, the pick).
    pub fn step(&self, model: &DeviceModel, pick: Pick, sink: &mut impl StepSink) -> Result<()> {
        let c = &self.config;
        let (hidden, q_heads, kv_heads, max_seq) =
            (c.hidden as u32, c.q_heads as u32, c.kv_heads as u32, c.max_seq as u32);
        let (mlp, eps, vocab) = (c.mlp as u32, c.eps, c.vocab as u32);
        let state = || self.state.const_ptr();
        for (l, (layer, (k, v))) in model.layers.iter().zip(&self.caches).enumerate() {
            let op = Op::Qkv(l);
            let args = (
                layer.wqkv.const_ptr(),
                layer.attn_norm.const_ptr(),
                self.x.const_ptr(),
                model.inv_freq.const_ptr(),
                state(),
                self.q.ptr(),
                k.ptr(),
                v.ptr(),
                hidden,
                q_heads | kv_heads << 16,
                max_seq,
                eps,
            );
            sink.kernel(op, ll_qkv(), self.launch_config(op), args)?;
            let op = Op::Attn(l);
            let args = (
                self.q.const_ptr(),
                k.const_ptr(),
                v.const_ptr(),
                state(),
                self.partial.ptr(),
                q_heads,
                kv_heads,
                max_seq,
            );
            sink.kernel(op, ll_attn(), self.launch_config(op), args)?;
            let op = Op::OProj(l);
            let args = (
                layer.wo.const_ptr(),
                self.partial.const_ptr(),
                state(),
                self.x.ptr(),
                hidden,
                q_heads,
                max_seq,
            );
            sink.kernel(op, ll_oproj(), self.launch_config(op), args)?;
            let op = Op::GateUp(l);
            let args = (
                layer.gate.const_ptr(),
                layer.up.const_ptr(),
                layer.mlp_norm.const_ptr(),
                self.x.const_ptr(),
                self.h.ptr(),
                hidden,
                mlp,
                eps,
            );
            let gate_up = if self.grid.pipelined { ll_gate_up_pipe() } else { ll_gate_up() };
            sink.kernel(op, gate_up, self.launch_config(op), args)?;
            let op = Op::Down(l);
            let args = (layer.down.const_ptr(), self.h.const_ptr(), self.x.ptr(), hidden, mlp);
            let down = if self.grid.pipelined { ll_down_pipe() } else { ll_down() };
            sink.kernel(op, down, self.launch_config(op), args)?;
        }
        let lm = self.launch_config(Op::LmHead);
        let args = (
            model.embedding.const_ptr(),
            model.final_norm.const_ptr(),
            self.x.const_ptr(),
            self.logits.ptr(),
            self.part_max.ptr(),
            self.part_idx.ptr(),
            hidden,
            vocab,
            eps,
        );
        sink.kernel(Op::LmHead, ll_lm_head(), lm, args)?;
        let parts = lm.grid.x;
        let (part_max, part_idx, embedding) =
            (self.part_max.const_ptr(), self.part_idx.const_ptr(), model.embedding.const_ptr());
        let (seq, state, x, config) =
            (self.seq.ptr(), self.state.ptr(), self.x.ptr(), self.launch_config(Op::Pick));
        match pick {
            Pick::Host => sink.kernel(
                Op::Pick,
                ll_pick(),
                config,
                (part_max, part_idx, parts, embedding, seq, state, x, hidden, vocab, max_seq),
            ),
            Pick::While(handle, ahead) => {
                let args = (
                    handle, ahead, part_max, part_idx, parts, embedding, seq, state, x, hidden, vocab,
                    max_seq,
                );
                sink.kernel(Op::Pick, ll_pick_while(), config, args)
            }
        }
    }

    /// Adds one step to `graph` as a chain of its kernels joined by `chain`'s edges, after
    /// `deps`; returns the last.
    pub fn add_step(
        &self, model: &DeviceModel, graph: &GraphBuilder, pick: Pick, chain: Chain, deps: &[&dyn AsNode],
    ) -> Result<KernelNode> {
        self.add_steps(model, graph, 1, pick, chain, deps)
    }

    /// Adds `steps` steps to `graph` as one chain of their kernels joined by `chain`'s edges
    /// (a step's first kernel after the step before's last by the same kind of edge), after
    /// `deps`; the last step ends with `last_pick`, the others with `ll_pick`. Returns the last.
    pub fn add_steps(
        &self, model: &DeviceModel, graph: &GraphBuilder, steps: u32, last_pick: Pick, chain: Chain,
        deps: &[&dyn AsNode],
    ) -> Result<KernelNode> {
        let mut sink = IntoGraph(KernelChain::new(graph, deps, chain));
        for step in 1..=steps {
            self.step(model, if step == steps { last_pick } else { Pick::Host }, &mut sink)?;
        }
        Ok(sink.0.into_last().expect("a step has kernels"))
    }

    /// Adds `ll_loop_gate` for the WHILE loop of `handle`, whose body runs `ahead` steps, after
    /// `deps`.
    pub fn add_loop_gate(
        &self, graph: &GraphBuilder, handle: &ConditionalHandle, ahead: u32, deps: &[&dyn AsNode],
    ) -> Result<KernelNode> {
        let args = (*handle, self.state.const_ptr(), self.config.max_seq as u32, ahead);
        graph.add_kernel(ll_loop_gate(), LaunchConfig::new(1, 32), args, deps)
    }
}

/// The kernels declared here against their C++ parameter types (no GPU needed).
#[cfg(test)]
mod kernel_declarations {
    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! {
            super::ll_init_weights, super::ll_embed, super::ll_qkv, super::ll_attn, super::ll_oproj,
            super::ll_gate_up, super::ll_down, super::ll_gate_up_pipe, super::ll_down_pipe, super::ll_lm_head,
            super::ll_pick, super::ll_pick_while, super::ll_loop_gate
        }
    }
}
