// One step of greedy generation with a two-layer GRU decoder, for a batch of up to 64
// sequences, as four small kernels:
//   gl_gru (layer 0)  embedding of each sequence's last token -> new hidden state of layer 0
//   gl_gru (layer 1)  layer 0's new state -> new hidden state of layer 1
//   gl_logits         layer 1's new state -> one logit per vocabulary entry
//   gl_pick_*         first largest logit (lowest index on ties) and its softmax probability;
//                     records the token, finishes the sequences that emitted the end token or
//                     reached the length limit, counts the step, decides whether to go on.
// Finished sequences are masked: their hidden states, logits and tokens are never written again
// (the dot products of the GRU kernels still run for them, so that every load is issued at once,
// and are dropped). A step that finds every sequence finished changes nothing.
//
// The model's arithmetic is exact (src/model.rs explains why): weights on a 2^-10 grid,
// activations on a 2^-7 grid, so every product and every partial sum of a dot product is a
// multiple of 2^-17 that f32 holds exactly, in any order, fused or not. The warps below sum in
// whatever order suits them and still match the CPU reference bit for bit. The one rounded
// value, the candidate gate's gi_n + r * gh_n, is computed as the reference does: one rounded
// multiply, then one rounded add (__fmul_rn, __fadd_rn: never contracted into an FMA).
//
// Hidden states are double-buffered by the parity of the step counter (state[0]): a step reads
// parity `step & 1` and writes the other, so no kernel writes what another block still reads,
// and the same kernel arguments serve every step (one graph, replayed or looped).
//
// Every kernel reads its weights first, then waits for the kernel before it
// (gl_wait_upstream: cuda_graph::pdl::wait_upstream), and only then reads what that kernel wrote; right
// after, it lets the next kernel start (gl_release_downstream): the next one only loads weights
// before its own wait. Launched plainly, the wait returns at once. Launched with a programmatic
// edge (sm_90), the next kernel's launch and its weight loads overlap the end of this one.
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_graph_pdl.cuh"

#define GL_HIDDEN 128
#define GL_VOCAB 512
#define GL_LAYERS 2
#define GL_MAX_BATCH 64
#define GL_END 0u
#define GL_TABLE_HALF 256
#define GL_TABLE_LEN (2 * GL_TABLE_HALF + 1)
#define GL_FULL_MASK 0xffffffffu
// Hidden units per block of gl_gru: each block runs 6 warps per unit (r, z, n rows of W_ih,
// then of W_hh), so GL_HIDDEN / GL_UNITS blocks of 6 * 32 * GL_UNITS threads.
#define GL_UNITS 2
// Vocabulary rows per block of gl_logits: one warp each.
#define GL_ROWS 8
// Sequences a warp works on at once (independent shuffle chains).
#define GL_ILP 4

// Programmatic dependent launch, device half (cuda-build's header; nothing below sm_90).
// gl_wait_upstream: returns once the kernel before has completed and its writes are visible
// (at once when this kernel has no programmatic dependency). gl_release_downstream: lets the
// kernel after be launched; it still waits for this one's completion in its own wait.
static __device__ __forceinline__ void gl_wait_upstream() {
    cuda_graph::pdl::wait_upstream();
}

static __device__ __forceinline__ void gl_release_downstream() {
    cuda_graph::pdl::launch_dependents();
}

// Hidden state of `layer`, parity `parity`, sequence 0: h is [GL_LAYERS][2][batch][GL_HIDDEN].
static __device__ __forceinline__ float* gl_hidden(float* h, uint32_t layer, uint32_t parity, uint32_t batch) {
    return h + (size_t)((layer * 2u + parity) * batch) * GL_HIDDEN;
}

// The table entry of a pre-activation: clamp(rint(v * 32), -256, 256) + 256 (v * 32 is exact).
static __device__ __forceinline__ uint32_t gl_table_index(float v) {
    const float s = fminf(fmaxf(rintf(v * 32.0f), -(float)GL_TABLE_HALF), (float)GL_TABLE_HALF);
    return (uint32_t)((int)s + GL_TABLE_HALF);
}

// Sums each of the GL_ILP lanes' partial values over the warp (every lane gets the sums).
static __device__ __forceinline__ void gl_warp_sums(float (&part)[GL_ILP]) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
#pragma unroll
        for (int i = 0; i < GL_ILP; ++i) {
            part[i] += __shfl_xor_sync(GL_FULL_MASK, part[i], offset);
        }
    }
}

static __device__ __forceinline__ float gl_dot4(float4 w, float4 x) {
    return w.x * x.x + w.y * x.y + w.z * x.z + w.w * x.w;
}

// One GRU layer for every unfinished sequence. Layer 0 reads the embedding of each sequence's
// last token; layer l > 0 reads layer l-1's new state. Launch: GL_HIDDEN / GL_UNITS blocks of
// 6 * 32 * GL_UNITS threads; batch <= GL_MAX_BATCH; w_* are [3 * GL_HIDDEN][GL_HIDDEN] (rows r,
// z, n), b_* [3 * GL_HIDDEN], tables the sigmoid's then the tanh's GL_TABLE_LEN entries, the
// embedding [GL_VOCAB][GL_HIDDEN], tokens and done [batch], h [GL_LAYERS][2][batch][GL_HIDDEN].
//
// Latency is what counts at this size: after the wait, every global load a thread needs is
// issued at once (a row's address depends only on the step's parity or on the token), and the
// tables sit in shared memory, so the step's chain is two round trips to L2 and a barrier.
extern "C" __global__ void gl_gru(const float* w_ih, const float* b_ih, const float* w_hh, const float* b_hh,
                                  const float* tables, const float* embedding,
                                  const uint32_t* tokens, const uint32_t* done, const uint32_t* state, float* h,
                                  uint32_t layer, uint32_t batch) {
    __shared__ float s_tables[2 * GL_TABLE_LEN];
    __shared__ float s_pre[6][GL_UNITS][GL_MAX_BATCH];
    const uint32_t warp = threadIdx.x >> 5;
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t gate = warp / GL_UNITS;  // 0..2: W_ih rows r, z, n; 3..5: W_hh rows
    const uint32_t unit = warp % GL_UNITS;
    const bool input_side = gate < 3;
    const uint32_t row = (gate % 3u) * GL_HIDDEN + blockIdx.x * GL_UNITS + unit;
    // What no kernel of the step writes (weights, tables): read before waiting.
    const float4 w = reinterpret_cast<const float4*>((input_side ? w_ih : w_hh) + (size_t)row * GL_HIDDEN)[lane];
    const float bias = (input_side ? b_ih : b_hh)[row];
    for (uint32_t i = threadIdx.x; i < 2 * GL_TABLE_LEN; i += blockDim.x) {
        s_tables[i] = tables[i];
    }

    gl_wait_upstream();
    gl_release_downstream();
    const uint32_t parity = state[0] & 1u;
    const float* h_in = gl_hidden(h, layer, parity, batch);
    float* h_out = gl_hidden(h, layer, parity ^ 1u, batch);
    const float* below = layer > 0 ? gl_hidden(h, layer - 1u, parity ^ 1u, batch) : nullptr;
    // The cell's thread for (sequence b, unit u) loads what it needs before the barrier.
    const uint32_t cell_b = threadIdx.x / GL_UNITS;
    const uint32_t k = blockIdx.x * GL_UNITS + threadIdx.x % GL_UNITS;
    const bool cell = cell_b < batch;
    const bool cell_runs = cell && done[cell_b] == 0u;
    const float old = cell ? h_in[(size_t)cell_b * GL_HIDDEN + k] : 0.0f;

    for (uint32_t b0 = 0; b0 < batch; b0 += GL_ILP) {
        float part[GL_ILP];
#pragma unroll
        for (int i = 0; i < GL_ILP; ++i) {
            const uint32_t b = min(b0 + i, batch - 1u);  // past the batch: a repeat, not stored
            const float* v = !input_side ? h_in + (size_t)b * GL_HIDDEN
                             : layer == 0 ? embedding + (size_t)tokens[b] * GL_HIDDEN
                                          : below + (size_t)b * GL_HIDDEN;
            part[i] = gl_dot4(w, reinterpret_cast<const float4*>(v)[lane]);
        }
        gl_warp_sums(part);
        if (lane == 0) {
#pragma unroll
            for (int i = 0; i < GL_ILP; ++i) {
                if (b0 + i < batch) {
                    s_pre[gate][unit][b0 + i] = part[i] + bias;
                }
            }
        }
    }
    __syncthreads();

    if (cell_runs) {  // finished sequences keep their state
        const uint32_t u = threadIdx.x % GL_UNITS;
        const uint32_t b = cell_b;
        const float* sigmoid_table = s_tables;
        const float* tanh_table = s_tables + GL_TABLE_LEN;
        const float r = sigmoid_table[gl_table_index(s_pre[0][u][b] + s_pre[3][u][b])];
        const float z = sigmoid_table[gl_table_index(s_pre[1][u][b] + s_pre[4][u][b])];
        const float n = tanh_table[gl_table_index(__fadd_rn(s_pre[2][u][b], __fmul_rn(r, s_pre[5][u][b])))];
        const float mixed = (1.0f - z) * n + z * old;  // exact on the 2^-14 grid
        h_out[(size_t)b * GL_HIDDEN + k] = rintf(mixed * 128.0f) * (1.0f / 128.0f);
    }
}

// The logits of every unfinished sequence from the last layer's new state:
// logits[b][v] = w_out[v] . h + b_out[v]. Launch: GL_VOCAB / GL_ROWS blocks of 32 * GL_ROWS
// threads; w_out [GL_VOCAB][GL_HIDDEN], logits [batch][GL_VOCAB].
extern "C" __global__ void gl_logits(const float* w_out, const float* b_out, const uint32_t* done,
                                     const uint32_t* state, float* h, float* logits, uint32_t batch) {
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t row = blockIdx.x * GL_ROWS + (threadIdx.x >> 5);
    const float4 w = reinterpret_cast<const float4*>(w_out + (size_t)row * GL_HIDDEN)[lane];
    const float bias = b_out[row];

    gl_wait_upstream();
    gl_release_downstream();
    const float* top = gl_hidden(h, GL_LAYERS - 1u, (state[0] & 1u) ^ 1u, batch);

    for (uint32_t b0 = 0; b0 < batch; b0 += GL_ILP) {
        float part[GL_ILP];
        bool live[GL_ILP];
#pragma unroll
        for (int i = 0; i < GL_ILP; ++i) {
            const uint32_t b = min(b0 + i, batch - 1u);
            live[i] = b0 + i < batch && done[b] == 0u;
            part[i] = gl_dot4(w, reinterpret_cast<const float4*>(top + (size_t)b * GL_HIDDEN)[lane]);
        }
        gl_warp_sums(part);
        if (lane == 0) {
#pragma unroll
            for (int i = 0; i < GL_ILP; ++i) {
                if (live[i]) {  // finished sequences keep their last logits
                    logits[(size_t)(b0 + i) * GL_VOCAB + row] = part[i] + bias;
                }
            }
        }
    }
}

// Picks each unfinished sequence's next token (one warp per sequence) and decides the step.
// state: [0] steps run, [1] whether to go on (some sequence unfinished), [2] unfinished
// sequences. Returns whether to go on in thread 0 (0 elsewhere). A step that finds every
// sequence finished (a WHILE body of several steps, past the last) changes nothing, the step
// count included. Launch: one block of 32 * min(batch, 32) threads; out_tokens and out_probs
// are [batch][max_len].
static __device__ uint32_t gl_pick(const float* logits, uint32_t* tokens, uint32_t* done, uint32_t* out_tokens,
                                   float* out_probs, uint32_t* state, uint32_t batch, uint32_t max_len) {
    constexpr int kPerLane = GL_VOCAB / 32;
    __shared__ uint32_t s_active;
    __shared__ uint32_t s_entered;
    const uint32_t warp = threadIdx.x >> 5;
    const uint32_t lane = threadIdx.x & 31u;
    if (threadIdx.x == 0) {
        s_active = 0;
        s_entered = 0;
    }
    gl_wait_upstream();
    gl_release_downstream();
    const uint32_t step = state[0];
    __syncthreads();

    for (uint32_t b = warp; b < batch; b += blockDim.x >> 5) {
        // Every load of the sequence at once: its logits (lane, lane + 32, ...) and its flag.
        const float* l = logits + (size_t)b * GL_VOCAB;
        float v[kPerLane];
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            v[i] = l[lane + 32 * i];
        }
        if (done[b] != 0u) {
            continue;
        }
        float best = v[0];
        uint32_t best_i = lane;
#pragma unroll
        for (int i = 1; i < kPerLane; ++i) {
            if (v[i] > best) {  // strictly: the lower index keeps a tie
                best = v[i];
                best_i = lane + 32u * i;
            }
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            const float other = __shfl_xor_sync(GL_FULL_MASK, best, offset);
            const uint32_t other_i = __shfl_xor_sync(GL_FULL_MASK, best_i, offset);
            if (other > best || (other == best && other_i < best_i)) {
                best = other;
                best_i = other_i;
            }
        }
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            sum += expf(v[i] - best);
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            sum += __shfl_xor_sync(GL_FULL_MASK, sum, offset);
        }
        if (lane == 0) {
            atomicAdd(&s_entered, 1u);
            out_tokens[(size_t)b * max_len + step] = best_i;
            out_probs[(size_t)b * max_len + step] = 1.0f / sum;
            tokens[b] = best_i;
            if (best_i == GL_END || step + 1u >= max_len) {
                done[b] = 1u;
            } else {
                atomicAdd(&s_active, 1u);
            }
        }
    }
    __syncthreads();
    uint32_t go_on = 0;
    if (threadIdx.x == 0 && s_entered > 0u) {
        go_on = s_active > 0u ? 1u : 0u;
        state[0] = step + 1u;
        state[1] = go_on;
        state[2] = s_active;
    }
    return go_on;
}

// The host-driven loops' last kernel of a step: the host reads state[1] to decide.
extern "C" __global__ void gl_pick_host(const float* logits, uint32_t* tokens, uint32_t* done, uint32_t* out_tokens,
                                        float* out_probs, uint32_t* state, uint32_t batch, uint32_t max_len) {
    (void)gl_pick(logits, tokens, done, out_tokens, out_probs, state, batch, max_len);
}

// (b')'s last kernel: as gl_pick_host, and thread 0 also stores the decision in `flag`, a word of
// mapped host memory, which the host reads in place once the stream is idle (no copy queued).
extern "C" __global__ void gl_pick_mapped(const float* logits, uint32_t* tokens, uint32_t* done,
                                          uint32_t* out_tokens, float* out_probs, uint32_t* state,
                                          uint32_t* flag, uint32_t batch, uint32_t max_len) {
    const uint32_t go_on = gl_pick(logits, tokens, done, out_tokens, out_probs, state, batch, max_len);
    if (threadIdx.x == 0) {
        *(volatile uint32_t*)flag = go_on;
    }
}

// The WHILE body's last kernel: as gl_pick_host, and it ends the loop when no sequence is left.
// The loop's handle defaults to 1 at each launch and holds between body runs, so only the last
// step sets it.
extern "C" __global__ void gl_pick_while(cudaGraphConditionalHandle handle, const float* logits, uint32_t* tokens,
                                         uint32_t* done, uint32_t* out_tokens, float* out_probs, uint32_t* state,
                                         uint32_t batch, uint32_t max_len) {
    const uint32_t go_on = gl_pick(logits, tokens, done, out_tokens, out_probs, state, batch, max_len);
    if (threadIdx.x == 0 && go_on == 0u) {
        cudaGraphSetConditional(handle, 0);
    }
}
