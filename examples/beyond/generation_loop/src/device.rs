//! The decoder on the GPU: its weights, one batch's buffers, and the step's four kernels, as
//! stream launches or as graph nodes.

pub use chapter_common::Chain;
use chapter_common::KernelChain;
use cuda_graph::graph::{AsNode, GraphBuilder, KernelNode};
use cuda_graph::kernel::{Kernel, KernelArgs, LaunchConfig};
use cuda_graph::{ConditionalHandle, DeviceBuffer, DeviceConstPtr, DevicePtr, Result, Stream};

use crate::model::{Model, HIDDEN, LAYERS, MAX_BATCH, VOCAB};
use crate::reference::{Generation, PAD};

// SAFETY: every kernel below indexes its pointers only within the sizes that `Batch::new` and
// `DeviceModel::new` allocate for the `batch` and `max_len` it is given (see kernels/decoder.cu):
// weights and tables by the model's fixed shapes; tokens, done, h, logits by `batch`
// (<= MAX_BATCH); the output rows by `batch * max_len`, at the step counter `state[0]`, which
// `gl_pick_*` writes only for a sequence still running, and every sequence stops before the
// counter reaches `max_len`; the embedding by a token, which is a start token (< VOCAB) or one
// the pick chose (< VOCAB); `gl_pick_mapped` also writes one word at `flag`, a `MappedBuffer`
// of one word that the graph holding the node keeps alive. The declarations are private to this
// module, whose launches pass exactly those buffers and sizes.
cuda_graph::kernels! {
    /// One GRU layer for every unfinished sequence.
    unsafe fn gl_gru(
        w_ih: DeviceConstPtr<f32>,
        b_ih: DeviceConstPtr<f32>,
        w_hh: DeviceConstPtr<f32>,
        b_hh: DeviceConstPtr<f32>,
        tables: DeviceConstPtr<f32>,
        embedding: DeviceConstPtr<f32>,
        tokens: DeviceConstPtr<u32>,
        done: DeviceConstPtr<u32>,
        state: DeviceConstPtr<u32>,
        h: DevicePtr<f32>,
        layer: u32,
        batch: u32,
    );
    /// The logits of every unfinished sequence.
    unsafe fn gl_logits(
        w_out: DeviceConstPtr<f32>,
        b_out: DeviceConstPtr<f32>,
        done: DeviceConstPtr<u32>,
        state: DeviceConstPtr<u32>,
        h: DevicePtr<f32>,
        logits: DevicePtr<f32>,
        batch: u32,
    );
    /// The next tokens and the step's decision, stored for the host.
    unsafe fn gl_pick_host(
        logits: DeviceConstPtr<f32>,
        tokens: DevicePtr<u32>,
        done: DevicePtr<u32>,
        out_tokens: DevicePtr<u32>,
        out_probs: DevicePtr<f32>,
        state: DevicePtr<u32>,
        batch: u32,
        max_len: u32,
    );
    /// The same, and it also stores the decision in `flag` (a word of mapped host memory).
    unsafe fn gl_pick_mapped(
        logits: DeviceConstPtr<f32>,
        tokens: DevicePtr<u32>,
        done: DevicePtr<u32>,
        out_tokens: DevicePtr<u32>,
        out_probs: DevicePtr<f32>,
        state: DevicePtr<u32>,
        flag: DevicePtr<u32>,
        batch: u32,
        max_len: u32,
    );
    /// The same, and it ends the WHILE loop when no sequence is left.
    unsafe fn gl_pick_while(
        handle: ConditionalHandle,
        logits: DeviceConstPtr<f32>,
        tokens: DevicePtr<u32>,
        done: DevicePtr<u32>,
        out_tokens: DevicePtr<u32>,
        out_probs: DevicePtr<f32>,
        state: DevicePtr<u32>,
        batch: u32,
        max_len: u32,
    );
}

/// Hidden units per block of `gl_gru` (`GL_UNITS` in the kernels).
const GRU_UNITS: u32 = 2;
/// Vocabulary rows per block of `gl_logits` (`GL_ROWS` in the kernels).
const LOGIT_ROWS: u32 = 8;
/// Index of the go-on flag in the state words.
pub const STATE_GO_ON: usize = 1;
/// State words: steps run, go on, unfinished sequences, spare.
pub const STATE_WORDS: usize = 4;

/// One GRU layer's weights on the device.
struct DeviceLayer {
    w_ih: DeviceBuffer<f32>,
    b_ih: DeviceBuffer<f32>,
    w_hh: DeviceBuffer<f32>,
    b_hh: DeviceBuffer<f32>,
}

/// The model's weights on the device.
pub struct DeviceModel {
    embedding: DeviceBuffer<f32>,
    layers: Vec<DeviceLayer>,
    w_out: DeviceBuffer<f32>,
    b_out: DeviceBuffer<f32>,
    /// The sigmoid's table, then the tanh's.
    tables: DeviceBuffer<f32>,
}

impl DeviceModel {
    /// Uploads `model`.
    pub fn new(model: &Model) -> Result<DeviceModel> {
        let layers = model
            .layers
            .iter()
            .map(|layer| {
                Ok(DeviceLayer {
                    w_ih: DeviceBuffer::from_slice(&layer.w_ih)?,
                    b_ih: DeviceBuffer::from_slice(&layer.b_ih)?,
                    w_hh: DeviceBuffer::from_slice(&layer.w_hh)?,
                    b_hh: DeviceBuffer::from_slice(&layer.b_hh)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let tables: Vec<f32> = model.sigmoid.iter().chain(&model.tanh).copied().collect();
        Ok(DeviceModel {
            embedding: DeviceBuffer::from_slice(&model.embedding)?,
            layers,
            w_out: DeviceBuffer::from_slice(&model.w_out)?,
            b_out: DeviceBuffer::from_slice(&model.b_out)?,
            tables: DeviceBuffer::from_slice(&tables)?,
        })
    }
}

/// Which last kernel a step ends with.
#[derive(Debug, Clone)]
pub enum Pick {
    /// `gl_pick_host`: the host reads the decision.
    Host,
    /// `gl_pick_mapped`: the decision also goes to this word of mapped host memory.
    Mapped(DevicePtr<u32>),
    /// `gl_pick_while`: the kernel ends the loop of this handle.
    While(ConditionalHandle),
}

/// Where the step's kernels go: launched on a stream, or added to a graph.
trait StepSink {
    /// Takes one kernel of the step, in order.
    fn kernel<A: KernelArgs>(&mut self, kernel: &Kernel<A>, config: LaunchConfig, args: A) -> Result<()>;
}

/// Launches each kernel on the stream.
struct OnStream<'s>(&'s Stream);

impl StepSink for OnStream<'_> {
    fn kernel<A: KernelArgs>(&mut self, kernel: &Kernel<A>, config: LaunchConfig, args: A) -> Result<()> {
        kernel.launch(self.0, config, args)
    }
}

/// A step's kernels into a graph, as a chain.
struct IntoGraph<'g, 'd>(KernelChain<'g, 'd>);

impl StepSink for IntoGraph<'_, '_> {
    fn kernel<A: KernelArgs>(&mut self, kernel: &Kernel<A>, config: LaunchConfig, args: A) -> Result<()> {
        self.0.add(kernel, config, args)
    }
}

/// One batch of sequences on the device: the state every step reads and writes.
pub struct Batch {
    batch: u32,
    max_len: u32,
    starts: DeviceBuffer<u32>,
    tokens: DeviceBuffer<u32>,
    done: DeviceBuffer<u32>,
    state: DeviceBuffer<u32>,
    hidden: DeviceBuffer<f32>,
    logits: DeviceBuffer<f32>,
    out_tokens: DeviceBuffer<u32>,
    out_probs: DeviceBuffer<f32>,
}

impl Batch {
    /// Buffers for `starts.len()` sequences (1..=MAX_BATCH) of at most `max_len` tokens.
    pub fn new(starts: &[u32], max_len: u32) -> Result<Batch> {
        let batch = starts.len();
        let refuse = |what, value: usize, min: usize, max: usize| cuda_graph::CudaError::InvalidArgument {
            call: "Batch::new",
            reason: cuda_graph::Refusal::OutOfRange {
                what,
                value: value as u64,
                min: min as u64,
                max: max as u64,
            },
        };
        if !(1..=MAX_BATCH).contains(&batch) {
            return Err(refuse("sequences", batch, 1, MAX_BATCH));
        }
        if max_len == 0 {
            return Err(refuse("max_len", 0, 1, u32::MAX as usize));
        }
        if let Some(&token) = starts.iter().find(|&&token| token as usize >= VOCAB) {
            return Err(refuse("start token", token as usize, 0, VOCAB - 1));
        }
        let rows = batch * max_len as usize;
        Ok(Batch {
            batch: batch as u32,
            max_len,
            starts: DeviceBuffer::from_slice(starts)?,
            tokens: DeviceBuffer::from_slice(starts)?,
            done: DeviceBuffer::zeroed(batch)?,
            state: DeviceBuffer::zeroed(STATE_WORDS)?,
            hidden: DeviceBuffer::zeroed(LAYERS * 2 * batch * HIDDEN)?,
            logits: DeviceBuffer::zeroed(batch * VOCAB)?,
            out_tokens: DeviceBuffer::zeroed(rows)?,
            out_probs: DeviceBuffer::zeroed(rows)?,
        })
    }

    /// The state words (steps run, go on, unfinished sequences, spare).
    pub fn state(&self) -> &DeviceBuffer<u32> {
        &self.state
    }

    /// Queues the start of a generation on `stream`: start tokens, nothing finished, zero hidden
    /// states and step counter, every output slot [`PAD`].
    pub fn reset(&mut self, stream: &Stream) -> Result<()> {
        self.tokens.copy_from_device_async(&self.starts, stream)?;
        self.done.memset_async(0, stream)?;
        self.state.memset_async(0, stream)?;
        self.hidden.memset_async(0, stream)?;
        debug_assert_eq!(PAD, u32::MAX);
        self.out_tokens.memset_async(0xff, stream)?;
        self.out_probs.memset_async(0, stream)
    }

    /// What the last generation produced (waits for the device), and its step count.
    pub fn read(&self) -> Result<(Generation, u32)> {
        let tokens = self.out_tokens.to_vec()?;
        let probs = self.out_probs.to_vec()?;
        let steps = self.state.to_vec()?[0];
        Ok((Generation::from_rows(&tokens, &probs, self.batch as usize, self.max_len as usize), steps))
    }

    /// The launch geometry of the step's kernels, in order: one per GRU layer, the logits, the
    /// pick.
    pub fn configs(&self) -> Vec<LaunchConfig> {
        let gru = LaunchConfig::new(HIDDEN as u32 / GRU_UNITS, 6 * 32 * GRU_UNITS);
        let mut configs = vec![gru; LAYERS];
        configs.push(LaunchConfig::new(VOCAB as u32 / LOGIT_ROWS, 32 * LOGIT_ROWS));
        configs.push(LaunchConfig::new(1, 32 * self.batch.min(32)));
        configs
    }

    /// Gives `sink` the step's kernels in order: layer 0, layer 1, logits, pick.
    fn step(&self, model: &DeviceModel, pick: Pick, sink: &mut impl StepSink) -> Result<()> {
        let b = self.batch;
        let configs = self.configs();
        for (index, layer) in model.layers.iter().enumerate() {
            let args = (
                layer.w_ih.const_ptr(),
                layer.b_ih.const_ptr(),
                layer.w_hh.const_ptr(),
                layer.b_hh.const_ptr(),
                model.tables.const_ptr(),
                model.embedding.const_ptr(),
                self.tokens.const_ptr(),
                self.done.const_ptr(),
                self.state.const_ptr(),
                self.hidden.ptr(),
                index as u32,
                b,
            );
            sink.kernel(gl_gru(), configs[index], args)?;
        }
        let (w_out, b_out) = (model.w_out.const_ptr(), model.b_out.const_ptr());
        let logit_args = (
            w_out,
            b_out,
            self.done.const_ptr(),
            self.state.const_ptr(),
            self.hidden.ptr(),
            self.logits.ptr(),
            b,
        );
        sink.kernel(gl_logits(), configs[LAYERS], logit_args)?;
        let config = configs[LAYERS + 1];
        let (logits, tokens, done) = (self.logits.const_ptr(), self.tokens.ptr(), self.done.ptr());
        let (out_tokens, out_probs, state) = (self.out_tokens.ptr(), self.out_probs.ptr(), self.state.ptr());
        match pick {
            Pick::Host => {
                let args = (logits, tokens, done, out_tokens, out_probs, state, b, self.max_len);
                sink.kernel(gl_pick_host(), config, args)
            }
            Pick::Mapped(flag) => {
                let args = (logits, tokens, done, out_tokens, out_probs, state, flag, b, self.max_len);
                sink.kernel(gl_pick_mapped(), config, args)
            }
            Pick::While(handle) => {
                let args = (handle, logits, tokens, done, out_tokens, out_probs, state, b, self.max_len);
                sink.kernel(gl_pick_while(), config, args)
            }
        }
    }

    /// Queues one step on `stream` (four launches) ending with `gl_pick_host`.
    pub fn launch_step(&self, model: &DeviceModel, stream: &Stream) -> Result<()> {
        self.step(model, Pick::Host, &mut OnStream(stream))
    }

    /// Adds one step to `graph` as a chain of four kernel nodes joined by `chain`'s edges, after
    /// `deps`; returns the last.
    pub fn add_step(
        &self, model: &DeviceModel, graph: &GraphBuilder, pick: Pick, chain: Chain, deps: &[&dyn AsNode],
    ) -> Result<KernelNode> {
        let mut sink = IntoGraph(KernelChain::new(graph, deps, chain));
        self.step(model, pick, &mut sink)?;
        Ok(sink.0.into_last().expect("a step has four kernels"))
    }
}

/// The kernels declared here against their C++ parameter types (no GPU needed).
#[cfg(test)]
mod kernel_declarations {
    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! { super::gl_gru, super::gl_logits, super::gl_pick_host, super::gl_pick_mapped, super::gl_pick_while }
    }
}
