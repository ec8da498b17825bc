// One decode step of a Llama-3.2-style model at batch 1, as kernels over bf16 weights (stored
// as uint16_t bit patterns) with fp32 accumulation, a bf16 KV cache and an fp32 residual:
//
//   per layer:
//     ll_qkv      RMSNorm(x) (recomputed by every block) -> Q, K, V rows; RoPE on Q and K;
//                 K and V written to the cache at the position, Q kept in fp32
//     ll_attn     attention of each query head over positions 0..=pos, in chunks of 64
//                 positions (one block per head and chunk): per chunk its max, its sum of
//                 exponentials and its unnormalised output (flash-decoding partials)
//     ll_oproj    the partials combined into the attention output (every block), then the
//                 O projection, added to the residual x
//     ll_gate_up  RMSNorm(x) -> gate and up rows -> SwiGLU, h = silu(gate) * up
//     ll_down     h -> down projection, added to the residual x
//   then:
//     ll_lm_head  RMSNorm(x) -> logits over the vocabulary (the tied embedding), and each
//                 block's largest logit (the first on ties)
//     ll_pick     the first largest of the blocks' (argmax), or the next prompt token while
//                 the prompt lasts; writes it into the sequence, advances the position and the
//                 step count, and gathers the token's embedding into x for the next step;
//                 ll_pick_while also ends the WHILE loop once fewer steps are left than its
//                 loop's body runs (ll_loop_gate opens each loop only for a whole body)
//
// Every position-dependent value comes from device memory (the state words), so the same
// kernel arguments serve every step: one graph, replayed or looped.
//
// Programmatic edges: every kernel reads what the kernel before wrote only after
// cuda_graph::pdl::wait_upstream(). Before it, it loads what no kernel writes (its first weight
// rows, norm weights) and what only kernels that completed before the kernel before passed
// its own wait wrote: each kernel here calls launch_dependents() only after its wait, so a
// kernel launches only once every kernel two or more before it has completed and its writes
// are visible (the O projection's position and residual, the attention's earlier cache rows,
// the pick's state words and sequence). Launched plainly, the wait returns at once.
//
// GEMV layout: one weight row per warp at a time; a lane loads 16 bytes (8 bf16) per load,
// lanes adjacent in memory, LL_VEC loads per lane in flight per row; the input vector sits in
// shared memory as fp32. Row lengths must be multiples of 256 (32 lanes x 8). The rows wait in
// registers, but for the O projection's, which wait in shared memory (cp.async) so that the
// kernel fits in 64 registers and the gate/up kernel after it gets a block onto every SM early.
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_graph_pdl.cuh"

#define LL_FULL_MASK 0xffffffffu
#define LL_WARPS 8
#define LL_THREADS (32 * LL_WARPS)
#define LL_HEAD_DIM 64
#define LL_HALF_DIM 32
// Largest row length of the norm-fused kernels' input (hidden) and of ll_down's (mlp).
#define LL_MAX_HIDDEN 2048
#define LL_MAX_MLP 8192
// 16-byte loads per lane per row in flight: a row of LL_MAX_HIDDEN bf16 is 256 x 16 bytes.
#define LL_VEC (LL_MAX_HIDDEN / 256)
// Positions per attention chunk (one block of as many threads).
#define LL_CHUNK 64
// Floats per attention partial: LL_HEAD_DIM outputs, the max, the sum, two unused (so that every
// partial starts 16-byte aligned; src/config.rs PARTIAL).
#define LL_PARTIAL (LL_HEAD_DIM + 4)
#define LL_PARTIAL_MAX LL_HEAD_DIM
#define LL_PARTIAL_SUM (LL_HEAD_DIM + 1)
// Elements per row of ll_attn's value rows in shared memory: 64 and 8 of padding (144 bytes,
// so 8 threads' 16-byte stores of their rows start 4 banks apart).
#define LL_ATTN_V_STRIDE (LL_HEAD_DIM + 8)
// Chunks whose partials ll_combine loads at once: 3, because with 4 the O projection, held to
// 64 registers a thread (see ll_oproj), spills.
#define LL_COMBINE_BATCH 3
// The state words (src/device.rs STATE_*): position of the token the next step reads, decode
// steps run, steps at which the WHILE loop ends, prompt length.
#define LL_POS 0
#define LL_STEPS 1
#define LL_TARGET 2
#define LL_PROMPT 3

// ---- weights from a hash ----------------------------------------------------------------
// The same integer hash as src/hash.rs and torch_twin.py: 32-bit state, every product wraps
// modulo 2^32 (the twin masks with 0xFFFFFFFF after each multiply), constants below 2^31.
static __device__ __forceinline__ uint32_t ll_mix(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x68e31da5u;
    x ^= x >> 16;
    return x;
}

static __device__ __forceinline__ uint32_t ll_hash(uint32_t seed, uint32_t tensor, uint32_t index) {
    const uint32_t s = ll_mix(seed ^ (tensor * 0x27d4eb2fu));
    return ll_mix(s ^ ll_mix(index + 0x165667b1u));
}

// fp32 -> bf16 bits, round to nearest even (finite inputs).
static __device__ __forceinline__ uint16_t ll_to_bf16(float v) {
    const uint32_t bits = __float_as_uint(v);
    return (uint16_t)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// out[offset + i] for i < count: a centred 24-bit integer from the hash times 2^-shift (exact
// in fp32), plus 1 for norm weights (`one` = 1), rounded to bf16.
extern "C" __global__ void ll_init_weights(uint16_t* out, uint64_t offset, uint32_t count, uint32_t seed,
                                           uint32_t tensor, uint32_t shift, uint32_t one) {
    const float scale = ldexpf(1.0f, -(int)shift);
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        const int centred = (int)(ll_hash(seed, tensor, i) >> 8) - (1 << 23);
        float v = (float)centred * scale;
        if (one != 0u) {
            v = 1.0f + v;
        }
        out[offset + i] = ll_to_bf16(v);
    }
}

// ---- shared pieces -------------------------------------------------------------------------
static __device__ __forceinline__ float ll_warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_xor_sync(LL_FULL_MASK, v, offset);
    }
    return v;
}

// The dot product of 8 bf16 (a uint4) with 8 fp32 of shared memory at `x` (16-byte aligned).
static __device__ __forceinline__ float ll_dot8(uint4 w, const float* x, float acc) {
    const float4 a = reinterpret_cast<const float4*>(x)[0];
    const float4 b = reinterpret_cast<const float4*>(x)[1];
    acc = fmaf(__uint_as_float(w.x << 16), a.x, acc);
    acc = fmaf(__uint_as_float(w.x & 0xffff0000u), a.y, acc);
    acc = fmaf(__uint_as_float(w.y << 16), a.z, acc);
    acc = fmaf(__uint_as_float(w.y & 0xffff0000u), a.w, acc);
    acc = fmaf(__uint_as_float(w.z << 16), b.x, acc);
    acc = fmaf(__uint_as_float(w.z & 0xffff0000u), b.y, acc);
    acc = fmaf(__uint_as_float(w.w << 16), b.z, acc);
    acc = fmaf(__uint_as_float(w.w & 0xffff0000u), b.w, acc);
    return acc;
}

// Loads the lane's 16-byte pieces of a row of `n` bf16 (n / 256 of them, at most LL_VEC).
static __device__ __forceinline__ void ll_load_row(const uint16_t* row, uint32_t n, uint32_t lane, uint4 (&w)[LL_VEC]) {
    const uint4* r = reinterpret_cast<const uint4*>(row);
#pragma unroll
    for (int c = 0; c < LL_VEC; ++c) {
        if ((uint32_t)c * 256u < n) {
            w[c] = __ldg(r + c * 32 + lane);
        }
    }
}

// The lane's part of the dot product of a row loaded by ll_load_row with x (shared, n floats).
static __device__ __forceinline__ float ll_dot_row(const uint4 (&w)[LL_VEC], const float* x, uint32_t n, uint32_t lane) {
    float acc = 0.0f;
#pragma unroll
    for (int c = 0; c < LL_VEC; ++c) {
        if ((uint32_t)c * 256u < n) {
            acc = ll_dot8(w[c], x + (c * 32 + lane) * 8, acc);
        }
    }
    return acc;
}

// Where element i of a vector sits in shared memory: at i (Interleaved false), or interleaved
// as ll_interleaved says.
static __device__ __forceinline__ uint32_t ll_interleaved(uint32_t i);
template <bool Interleaved>
static __device__ __forceinline__ uint32_t ll_at(uint32_t i) {
    return Interleaved ? ll_interleaved(i) : i;
}

// Stores v[0..8], elements first .. first + 7 of a vector (first a multiple of 8), into s as
// ll_at places them: two 16-byte stores (both layouts keep 4 consecutive elements together).
template <bool Interleaved>
static __device__ __forceinline__ void ll_store8(float* s, uint32_t first, const float (&v)[8]) {
    reinterpret_cast<float4*>(s + ll_at<Interleaved>(first))[0] = make_float4(v[0], v[1], v[2], v[3]);
    reinterpret_cast<float4*>(s + ll_at<Interleaved>(first + 4u))[0] = make_float4(v[4], v[5], v[6], v[7]);
}

// The calling thread's 8 norm weights (elements 8 t .. 8 t + 7 of n, t the thread; zeros past
// n), loaded before the kernel waits for the kernel before it: the weights are no kernel's
// output, and loaded then their round trip to memory overlaps what comes before.
static __device__ __forceinline__ uint4 ll_norm_weights(const uint16_t* norm_w, uint32_t n) {
    const uint32_t first = threadIdx.x * 8u;
    return first < n ? __ldg(reinterpret_cast<const uint4*>(norm_w + first)) : make_uint4(0u, 0u, 0u, 0u);
}

// RMSNorm with the scale deferred: s_x[i] = x[i] * norm_w[i] for i < n (n a multiple of 256 and
// at most 8 * LL_THREADS), placed as ll_at says, and returns r = rsqrt(mean(x^2) + eps), by
// which the caller multiplies each dot product with s_x (r (w . (x * norm_w)) is
// w . RMSNorm(x) * norm_w). nw: ll_norm_weights(norm_w, n). Thread t takes elements 8 t ..
// 8 t + 7: its loads of x are two 16-byte loads issued together (one round trip to memory, not
// one per element). The weighted vector and the warps' sums of squares share one barrier, so
// the dot products start without a second one for the reduction. A block of LL_THREADS
// threads; ends with a barrier; `scratch` (LL_WARPS floats) must not be written again by the
// block.
template <bool Interleaved>
static __device__ float ll_load_weighted_as(const float* x, uint4 nw, uint32_t n, float eps, float* s_x,
                                            float* scratch) {
    const uint32_t first = threadIdx.x * 8u;
    float sq = 0.0f;
    if (first < n) {
        const float4 a = reinterpret_cast<const float4*>(x + first)[0];
        const float4 b = reinterpret_cast<const float4*>(x + first)[1];
        float v[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
        const uint32_t w[4] = {nw.x, nw.y, nw.z, nw.w};
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            sq = fmaf(v[k], v[k], sq);
        }
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            v[2 * k] *= __uint_as_float(w[k] << 16);
            v[2 * k + 1] *= __uint_as_float(w[k] & 0xffff0000u);
        }
        ll_store8<Interleaved>(s_x, first, v);
    }
    sq = ll_warp_sum(sq);
    if ((threadIdx.x & 31u) == 0) {
        scratch[threadIdx.x >> 5] = sq;
    }
    __syncthreads();
    float total = 0.0f;
#pragma unroll
    for (int i = 0; i < LL_WARPS; ++i) {
        total += scratch[i];
    }
    return rsqrtf(total / (float)n + eps);
}

static __device__ float ll_load_weighted(const float* x, uint4 nw, uint32_t n, float eps, float* s_x, float* scratch) {
    return ll_load_weighted_as<false>(x, nw, n, eps, s_x, scratch);
}

// s[i] = v[i] for i < n (n a multiple of 4, at most LL_MAX_MLP), placed as ll_at
// says: thread t takes the 16-byte pieces t, t + LL_THREADS, ..., every load issued before any
// store (one round trip to memory). A block of LL_THREADS threads; ends with a barrier.
template <bool Interleaved>
static __device__ void ll_load_vector(const float* v, uint32_t n, float* s) {
    constexpr int PIECES = LL_MAX_MLP / (4 * LL_THREADS);
    float4 got[PIECES];
#pragma unroll
    for (int c = 0; c < PIECES; ++c) {
        const uint32_t at = (threadIdx.x + (uint32_t)c * LL_THREADS) * 4u;
        if (at < n) {
            got[c] = reinterpret_cast<const float4*>(v + at)[0];
        }
    }
#pragma unroll
    for (int c = 0; c < PIECES; ++c) {
        const uint32_t at = (threadIdx.x + (uint32_t)c * LL_THREADS) * 4u;
        if (at < n) {
            reinterpret_cast<float4*>(s + ll_at<Interleaved>(at))[0] = got[c];
        }
    }
    __syncthreads();
}

// ---- the step's kernels --------------------------------------------------------------------
// x[i] = embedding[token][i] for i < hidden (a multiple of 8, at most 8 * blockDim.x): thread t
// takes elements 8 t .. 8 t + 7, one 16-byte load.
static __device__ __forceinline__ void ll_gather_embedding(const uint16_t* embedding, uint32_t token, uint32_t hidden,
                                                           float* x) {
    const uint32_t first = threadIdx.x * 8u;
    if (first >= hidden) {
        return;
    }
    const uint4 e = __ldg(reinterpret_cast<const uint4*>(embedding + (size_t)token * hidden + first));
    float4* out = reinterpret_cast<float4*>(x + first);
    out[0] = make_float4(__uint_as_float(e.x << 16), __uint_as_float(e.x & 0xffff0000u), __uint_as_float(e.y << 16),
                         __uint_as_float(e.y & 0xffff0000u));
    out[1] = make_float4(__uint_as_float(e.z << 16), __uint_as_float(e.z & 0xffff0000u), __uint_as_float(e.w << 16),
                         __uint_as_float(e.w & 0xffff0000u));
}

// x = embedding[seq[pos]] (one block of LL_THREADS). Run before a generation's first step;
// later steps get their x from ll_pick.
extern "C" __global__ void ll_embed(const uint16_t* embedding, const uint32_t* seq, const uint32_t* state, float* x,
                                    uint32_t hidden) {
    cuda_graph::pdl::wait_upstream();
    ll_gather_embedding(embedding, seq[state[LL_POS]], hidden, x);
}

// Q, K, V of one layer (heads: q_heads in its low 16 bits, kv_heads in its high 16).
// w: [(q_heads + 2 kv_heads) * 64][hidden] (the rows of wq, then wk, then wv); inv_freq: [32]; q: [q_heads * 64] fp32; k_cache, v_cache: the layer's [kv_heads][max_seq][64].
// Launch: (q_heads + 2 kv_heads) * 4 blocks of LL_THREADS; block (head, quarter), warp w
// computes rows j and j + 32 of the head, j = quarter * 8 + w, and rotates them together
// (RoPE, rotate-half pairs: dimension j with j + 32, angle pos * inv_freq[j]).
extern "C" __global__ void __launch_bounds__(LL_THREADS) ll_qkv(
    const uint16_t* w, const uint16_t* norm_w, const float* x, const float* inv_freq, const uint32_t* state,
    float* q, uint16_t* k_cache, uint16_t* v_cache, uint32_t hidden, uint32_t heads, uint32_t max_seq, float eps) {
    const uint32_t q_heads = heads & 0xffffu;
    const uint32_t kv_heads = heads >> 16;
    __shared__ __align__(16) float s_x[LL_MAX_HIDDEN];
    __shared__ float s_scratch[LL_WARPS];
    const uint32_t warp = threadIdx.x >> 5;
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t head = blockIdx.x >> 2;
    const uint32_t j = (blockIdx.x & 3u) * LL_WARPS + warp;
    const uint32_t row = head * LL_HEAD_DIM + j;
    uint4 wa[LL_VEC];
    uint4 wb[LL_VEC];
    ll_load_row(w + (size_t)row * hidden, hidden, lane, wa);
    ll_load_row(w + (size_t)(row + LL_HALF_DIM) * hidden, hidden, lane, wb);
    const float freq = inv_freq[j];
    const uint4 nw = ll_norm_weights(norm_w, hidden);

    cuda_graph::pdl::wait_upstream();
    cuda_graph::pdl::launch_dependents();
    // Read now, so that its round trip overlaps the norm's.
    const uint32_t pos = state[LL_POS];
    const float r = ll_load_weighted(x, nw, hidden, eps, s_x, s_scratch);
    const float a = r * ll_warp_sum(ll_dot_row(wa, s_x, hidden, lane));
    const float b = r * ll_warp_sum(ll_dot_row(wb, s_x, hidden, lane));
    if (lane != 0) {
        return;
    }
    if (head >= q_heads + kv_heads) {  // V: no rotation
        const size_t at = ((size_t)(head - q_heads - kv_heads) * max_seq + pos) * LL_HEAD_DIM;
        v_cache[at + j] = ll_to_bf16(a);
        v_cache[at + j + LL_HALF_DIM] = ll_to_bf16(b);
        return;
    }
    float s, c;
    sincosf((float)pos * freq, &s, &c);
    const float ra = a * c - b * s;
    const float rb = b * c + a * s;
    if (head < q_heads) {
        q[head * LL_HEAD_DIM + j] = ra;
        q[head * LL_HEAD_DIM + j + LL_HALF_DIM] = rb;
    } else {
        const size_t at = ((size_t)(head - q_heads) * max_seq + pos) * LL_HEAD_DIM;
        k_cache[at + j] = ll_to_bf16(ra);
        k_cache[at + j + LL_HALF_DIM] = ll_to_bf16(rb);
    }
}

// Attention partials of one layer: block (head, chunk) covers positions chunk * 64 .. + 63 that
// are <= pos, thread t position chunk * 64 + t. partial: [q_heads][max_seq / 64][LL_PARTIAL]:
// the chunk's sum of exp(score - m) * v, its largest score m and sum of exp(score - m) (chunks
// past pos are not written). Scores are q . k / 8 (head dimension 64). Thread t loads its
// position's whole key and value rows at once (16 loads of 16 bytes in flight), so the chunk
// costs one round trip to memory, and for the positions before pos it does so before the
// programmatic wait; the values go to shared memory as loaded, and thread t sums dimension t
// over the chunk's positions, weighted. Launch: q_heads * (max_seq / 64) blocks of 64 threads.
extern "C" __global__ void __launch_bounds__(LL_CHUNK) ll_attn(
    const float* q, const uint16_t* k_cache, const uint16_t* v_cache, const uint32_t* state, float* partial,
    uint32_t q_heads, uint32_t kv_heads, uint32_t max_seq) {
    __shared__ __align__(16) float s_q[LL_HEAD_DIM];
    // The chunk's value rows as loaded (bf16), padded so that the threads' 16-byte stores of
    // their rows fall in distinct banks; rows past pos are zeros.
    __shared__ __align__(16) uint16_t s_v[LL_CHUNK][LL_ATTN_V_STRIDE];
    __shared__ float s_p[LL_CHUNK];
    __shared__ float s_red[2];
    __shared__ float s_sum[2];
    const uint32_t chunks = max_seq / LL_CHUNK;
    const uint32_t head = blockIdx.x / chunks;
    const uint32_t chunk = blockIdx.x % chunks;
    const uint32_t kv = head / (q_heads / kv_heads);
    const uint32_t t = threadIdx.x;

    // Before the wait: the position (the step before's pick wrote it, and that pick completed
    // before the QKV kernel upstream passed its own wait, so before this kernel launched) and
    // the cache rows of the earlier positions (earlier steps wrote them), the values straight
    // into shared memory. This step's QKV writes only the row at `pos`, read after the wait
    // with q.
    const uint32_t pos = state[LL_POS];
    const uint32_t first = chunk * LL_CHUNK;
    if (first > pos) {
        return;
    }
    const uint32_t at = first + t;
    const bool live = at <= pos;
    const size_t row = ((size_t)kv * max_seq + at) * LL_HEAD_DIM;
    const uint4* kr = reinterpret_cast<const uint4*>(k_cache + row);
    const uint4* vr = reinterpret_cast<const uint4*>(v_cache + row);
    uint4* sv = reinterpret_cast<uint4*>(&s_v[t][0]);
    uint4 k[LL_HEAD_DIM / 8];
    if (at != pos) {
#pragma unroll
        for (int c = 0; c < LL_HEAD_DIM / 8; ++c) {
            k[c] = live ? kr[c] : make_uint4(0u, 0u, 0u, 0u);
            sv[c] = live ? vr[c] : make_uint4(0u, 0u, 0u, 0u);
        }
    }

    cuda_graph::pdl::wait_upstream();
    cuda_graph::pdl::launch_dependents();
    if (at == pos) {
#pragma unroll
        for (int c = 0; c < LL_HEAD_DIM / 8; ++c) {
            k[c] = kr[c];
            sv[c] = vr[c];
        }
    }
    s_q[t] = q[head * LL_HEAD_DIM + t];
    __syncthreads();
    float score = -INFINITY;
    if (live) {
        float acc = 0.0f;
#pragma unroll
        for (int c = 0; c < LL_HEAD_DIM / 8; ++c) {
            acc = ll_dot8(k[c], s_q + c * 8, acc);
        }
        score = acc * 0.125f;
    }
    // The chunk's largest score (two warps), then each position's weight and their sum.
    float m = score;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        m = fmaxf(m, __shfl_xor_sync(LL_FULL_MASK, m, offset));
    }
    if ((t & 31u) == 0) {
        s_red[t >> 5] = m;
    }
    __syncthreads();
    m = fmaxf(s_red[0], s_red[1]);
    const float p = live ? expf(score - m) : 0.0f;
    s_p[t] = p;
    const float warp_sum = ll_warp_sum(p);
    if ((t & 31u) == 0) {
        s_sum[t >> 5] = warp_sum;
    }
    __syncthreads();
    // Thread t: output dimension t, over the chunk's positions in order (the rows past pos
    // weigh 0 and hold zeros).
    float out = 0.0f;
#pragma unroll 16
    for (uint32_t i = 0; i < LL_CHUNK; ++i) {
        out = fmaf(s_p[i], __uint_as_float((uint32_t)s_v[i][t] << 16), out);
    }
    float* dst = partial + ((size_t)head * chunks + chunk) * LL_PARTIAL;
    dst[t] = out;
    if (t == 0) {
        dst[LL_PARTIAL_MAX] = m;
        dst[LL_PARTIAL_SUM] = s_sum[0] + s_sum[1];
    }
}

// One batch of ll_combine: the partials of chunks base .. base + LL_COMBINE_BATCH - 1 below
// `limit` (their maxima and sums, and outputs d .. d + 7) of one head's partials `p`.
struct LlCombineBatch {
    float2 ms[LL_COMBINE_BATCH];
    float4 lo[LL_COMBINE_BATCH];
    float4 hi[LL_COMBINE_BATCH];
};

static __device__ __forceinline__ void ll_combine_load(const float* p, uint32_t d, uint32_t base, uint32_t limit,
                                                       LlCombineBatch& batch) {
#pragma unroll
    for (int k = 0; k < LL_COMBINE_BATCH; ++k) {
        if (base + k < limit) {
            const float* pc = p + (base + k) * LL_PARTIAL;
            batch.ms[k] = reinterpret_cast<const float2*>(pc + LL_PARTIAL_MAX)[0];
            batch.lo[k] = reinterpret_cast<const float4*>(pc + d)[0];
            batch.hi[k] = reinterpret_cast<const float4*>(pc + d)[1];
        }
    }
}

// Adds the batch's chunks below `live` to the running max m, sum and outputs: m raised to the
// batch's max and what was summed so far scaled down to it, then the chunks summed in order.
static __device__ __forceinline__ void ll_combine_add(const LlCombineBatch& batch, uint32_t base, uint32_t live,
                                                      float& m, float& sum, float (&out)[8]) {
    float batch_max = m;
#pragma unroll
    for (int k = 0; k < LL_COMBINE_BATCH; ++k) {
        if (base + k < live) {
            batch_max = fmaxf(batch_max, batch.ms[k].x);
        }
    }
    if (batch_max != m) {
        // Zero on the first batch (m is -inf), where sum and out are still zero.
        const float down = expf(m - batch_max);
        sum *= down;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            out[j] *= down;
        }
        m = batch_max;
    }
#pragma unroll
    for (int k = 0; k < LL_COMBINE_BATCH; ++k) {
        if (base + k < live) {
            const float scale = expf(batch.ms[k].x - m);
            sum = fmaf(batch.ms[k].y, scale, sum);
            const float4 lo = batch.lo[k];
            const float4 hi = batch.hi[k];
            const float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                out[j] = fmaf(v[j], scale, out[j]);
            }
        }
    }
}

// The attention output (q_heads * 64 fp32) from the partials, into s_in (a block of LL_THREADS).
// Thread t computes outputs 8t .. 8t + 7, all of one head (q_heads * 64 is a multiple of 256),
// LL_COMBINE_BATCH chunks at a time (ll_combine_load, ll_combine_add): their maxima, sums and 8
// outputs loaded together (16-byte loads: one round trip to L2 per batch). With one batch
// (positions below LL_COMBINE_BATCH * 64) that is the plain two-pass arithmetic: the max over
// every chunk, then the sums in chunk order.
static __device__ void ll_combine(const float* partial, uint32_t pos, uint32_t q_heads, uint32_t max_seq,
                                  float* s_in) {
    const uint32_t chunks = max_seq / LL_CHUNK;
    const uint32_t live = pos / LL_CHUNK + 1u;
    for (uint32_t first = threadIdx.x * 8u; first < q_heads * LL_HEAD_DIM; first += LL_THREADS * 8u) {
        const uint32_t head = first / LL_HEAD_DIM;
        const uint32_t d = first % LL_HEAD_DIM;
        const float* p = partial + (size_t)head * chunks * LL_PARTIAL;
        LlCombineBatch batch;
        ll_combine_load(p, d, 0, live, batch);
        float m = -INFINITY;
        float sum = 0.0f;
        float out[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            out[k] = 0.0f;
        }
        ll_combine_add(batch, 0, live, m, sum, out);
        for (uint32_t base = LL_COMBINE_BATCH; base < live; base += LL_COMBINE_BATCH) {
            ll_combine_load(p, d, base, live, batch);
            ll_combine_add(batch, base, live, m, sum, out);
        }
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            s_in[first + k] = out[k] / sum;
        }
    }
    __syncthreads();
}

// A warp's row of n elements (n a multiple of 256, at most LL_VEC * 256) staged into `slot` (its
// LL_VEC * 32 pieces of 16 bytes, laid out as ll_load_row's registers) with cp.async (sm_80 and
// later; plain loads and stores before): the loads are in flight without holding registers.
// Each lane copies, and later reads back (ll_unstage_row), only its own pieces.
static __device__ __forceinline__ void ll_stage_row(const uint16_t* row, uint32_t n, uint32_t lane, uint4* slot) {
    const uint4* r = reinterpret_cast<const uint4*>(row);
#pragma unroll
    for (int c = 0; c < LL_VEC; ++c) {
        if ((uint32_t)c * 256u < n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
            const uint32_t to = (uint32_t)__cvta_generic_to_shared(slot + c * 32 + lane);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to), "l"(r + c * 32 + lane) : "memory");
#else
            slot[c * 32 + lane] = __ldg(r + c * 32 + lane);
#endif
        }
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits for the lane's staged pieces (ll_stage_row) and reads them into w.
static __device__ __forceinline__ void ll_unstage_row(const uint4* slot, uint32_t n, uint32_t lane,
                                                      uint4 (&w)[LL_VEC]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
#pragma unroll
    for (int c = 0; c < LL_VEC; ++c) {
        if ((uint32_t)c * 256u < n) {
            w[c] = slot[c * 32 + lane];
        }
    }
}

// x[r] += wo[r] . attention for the rows r of the grid's warps (grid-stride). wo: [hidden][in],
// in = q_heads * 64 <= LL_MAX_HIDDEN. Each warp's row waits in shared memory (ll_stage_row), so
// that the combine runs in few registers: the kernel fits in 64 registers a thread, and the
// gate/up kernel after it finds room on each SM for one of its blocks while this one runs, which
// so loads its first rows during this kernel's combine. Launch: any number of blocks of
// LL_THREADS.
extern "C" __global__ void __launch_bounds__(LL_THREADS, 4) ll_oproj(
    const uint16_t* wo, const float* partial, const uint32_t* state, float* x, uint32_t hidden, uint32_t q_heads,
    uint32_t max_seq) {
    __shared__ __align__(16) float s_in[LL_MAX_HIDDEN];
    __shared__ __align__(16) uint4 s_w[LL_WARPS][LL_VEC * 32];
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t warps = gridDim.x * LL_WARPS;
    const uint32_t in = q_heads * LL_HEAD_DIM;
    uint32_t row = blockIdx.x * LL_WARPS + (threadIdx.x >> 5);
    uint4* slot = s_w[threadIdx.x >> 5];
    if (row < hidden) {
        ll_stage_row(wo + (size_t)row * in, in, lane, slot);
    }
    // Before the wait: the position and the residual of the warp's row, which no kernel since
    // this layer's QKV passed its wait has written (the step before's pick, the layer before's
    // down projection), so after the wait the combine's loads are the only round trip. The
    // residual is loaded a row ahead throughout (its round trip overlaps the work before its
    // add, not after).
    const uint32_t pos = state[LL_POS];
    float x_row = row < hidden ? x[row] : 0.0f;

    cuda_graph::pdl::wait_upstream();
    cuda_graph::pdl::launch_dependents();
    ll_combine(partial, pos, q_heads, max_seq, s_in);
    for (; row < hidden; row += warps) {
        // The row's dot product, then the next row staged (the lane's pieces of this one are
        // read by then), then the warp's sum: the loads are in flight during the shuffles.
        uint4 w[LL_VEC];
        ll_unstage_row(slot, in, lane, w);
        const float part = ll_dot_row(w, s_in, in, lane);
        if (row + warps < hidden) {
            ll_stage_row(wo + (size_t)(row + warps) * in, in, lane, slot);
        }
        const float dot = ll_warp_sum(part);
        const float x_here = x_row;
        if (row + warps < hidden) {
            x_row = x[row + warps];
        }
        if (lane == 0) {
            x[row] = x_here + dot;
        }
    }
}

// h[r] = silu(gate[r] . n) * (up[r] . n), n = RMSNorm(x) * norm_w, for r < mlp (grid-stride
// over the grid's warps). w_gate, w_up: [mlp][hidden]. Launch: any number of blocks of LL_THREADS.
extern "C" __global__ void __launch_bounds__(LL_THREADS) ll_gate_up(
    const uint16_t* w_gate, const uint16_t* w_up, const uint16_t* norm_w, const float* x, float* h,
    uint32_t hidden, uint32_t mlp, float eps) {
    __shared__ __align__(16) float s_x[LL_MAX_HIDDEN];
    __shared__ float s_scratch[LL_WARPS];
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t warps = gridDim.x * LL_WARPS;
    uint32_t row = blockIdx.x * LL_WARPS + (threadIdx.x >> 5);
    uint4 wg[LL_VEC];
    uint4 wu[LL_VEC];
    if (row < mlp) {
        ll_load_row(w_gate + (size_t)row * hidden, hidden, lane, wg);
        ll_load_row(w_up + (size_t)row * hidden, hidden, lane, wu);
    }
    const uint4 nw = ll_norm_weights(norm_w, hidden);

    cuda_graph::pdl::wait_upstream();
    cuda_graph::pdl::launch_dependents();
    const float r = ll_load_weighted(x, nw, hidden, eps, s_x, s_scratch);
    for (; row < mlp; row += warps) {
        const float gate_part = ll_dot_row(wg, s_x, hidden, lane);
        const float up_part = ll_dot_row(wu, s_x, hidden, lane);
        if (row + warps < mlp) {
            ll_load_row(w_gate + (size_t)(row + warps) * hidden, hidden, lane, wg);
            ll_load_row(w_up + (size_t)(row + warps) * hidden, hidden, lane, wu);
        }
        const float g = r * ll_warp_sum(gate_part);
        const float u = r * ll_warp_sum(up_part);
        if (lane == 0) {
            h[row] = g / (1.0f + expf(-g)) * u;
        }
    }
}

// x[r] += w_down[r] . h for r < hidden (grid-stride over the grid's warps). w_down: [hidden][mlp],
// mlp <= LL_MAX_MLP, a multiple of 256; each row streamed LL_VEC * 256 elements at a time.
// Launch: any number of blocks of LL_THREADS.
extern "C" __global__ void __launch_bounds__(LL_THREADS) ll_down(
    const uint16_t* w_down, const float* h, float* x, uint32_t hidden, uint32_t mlp) {
    __shared__ __align__(16) float s_h[LL_MAX_MLP];
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t warps = gridDim.x * LL_WARPS;
    const uint32_t piece = LL_VEC * 256u;
    uint32_t row = blockIdx.x * LL_WARPS + (threadIdx.x >> 5);
    uint4 w[LL_VEC];
    if (row < hidden) {
        ll_load_row(w_down + (size_t)row * mlp, min(mlp, piece), lane, w);
    }

    // The residual of the warp's row, loaded a row ahead (as in ll_oproj), the first before the
    // wait: the O projection, two kernels before, wrote it.
    float x_row = row < hidden ? x[row] : 0.0f;

    cuda_graph::pdl::wait_upstream();
    cuda_graph::pdl::launch_dependents();
    ll_load_vector<false>(h, mlp, s_h);
    for (; row < hidden; row += warps) {
        const uint16_t* r = w_down + (size_t)row * mlp;
        float acc = 0.0f;
        for (uint32_t start = 0; start < mlp; start += piece) {
            const uint32_t n = min(mlp - start, piece);
            acc += ll_dot_row(w, s_h + start, n, lane);
            if (start + piece < mlp) {
                ll_load_row(r + start + piece, min(mlp - start - piece, piece), lane, w);
            } else if (row + warps < hidden) {
                ll_load_row(w_down + (size_t)(row + warps) * mlp, min(mlp, piece), lane, w);
            }
        }
        acc = ll_warp_sum(acc);
        const float x_here = x_row;
        if (row + warps < hidden) {
            x_row = x[row + warps];
        }
        if (lane == 0) {
            x[row] = x_here + acc;
        }
    }
}

// ---- pipelined GEMVs: two rows in flight per warp -------------------------------------------
// ll_gate_up and ll_down above issue a warp's next loads only after its current row's dot
// product, so a warp has nothing in flight while it computes, and ll_down streams each 16 KB row
// as four pieces one after the other. The kernels below hold two register buffers per warp and
// refill a buffer right after its dot product: while a warp computes on one row, the next is
// already on its way. To keep a warp's registers to two buffers of one row piece each (LL_VEC
// 16-byte loads per lane), a block splits its rows over its warps and combines the warps' sums
// through shared memory after one barrier per pass (the slots alternate by pass parity, so a
// slot is written again only after the barrier that follows its read). Their input vector sits
// in shared memory interleaved (ll_interleaved), free of bank conflicts.

// The shared vectors of the pipelined kernels are interleaved by 256-element column group, so
// that a lane's two float4 reads of its 8 elements hit no bank twice: in a group, element
// lane * 8 + k sits at (k / 4) * 128 + lane * 4 + k % 4 (a quarter warp's float4 reads are 128
// contiguous bytes; at i they would be 256 bytes apart in pairs, a 2-way conflict).
static __device__ __forceinline__ uint32_t ll_interleaved(uint32_t i) {
    return (i & ~255u) | (((i >> 2) & 1u) << 7) | (((i >> 3) & 31u) << 2) | (i & 3u);
}

// The dot product of 8 bf16 (a uint4) with the lane's 8 fp32 of an interleaved group at `g`.
static __device__ __forceinline__ float ll_dot8_interleaved(uint4 w, const float* g, uint32_t lane, float acc) {
    const float4 a = reinterpret_cast<const float4*>(g)[lane];
    const float4 b = reinterpret_cast<const float4*>(g + 128)[lane];
    acc = fmaf(__uint_as_float(w.x << 16), a.x, acc);
    acc = fmaf(__uint_as_float(w.x & 0xffff0000u), a.y, acc);
    acc = fmaf(__uint_as_float(w.y << 16), a.z, acc);
    acc = fmaf(__uint_as_float(w.y & 0xffff0000u), a.w, acc);
    acc = fmaf(__uint_as_float(w.z << 16), b.x, acc);
    acc = fmaf(__uint_as_float(w.z & 0xffff0000u), b.y, acc);
    acc = fmaf(__uint_as_float(w.w << 16), b.z, acc);
    acc = fmaf(__uint_as_float(w.w & 0xffff0000u), b.w, acc);
    return acc;
}

// Loads the lane's 16-byte pieces of the 256-element column groups first, first + step, ... of
// a row of `n` bf16 (those below n; at most LL_VEC of them).
static __device__ __forceinline__ void ll_load_groups(const uint16_t* row, uint32_t n, uint32_t first, uint32_t step,
                                                      uint32_t lane, uint4 (&w)[LL_VEC]) {
    const uint4* r = reinterpret_cast<const uint4*>(row);
#pragma unroll
    for (int c = 0; c < LL_VEC; ++c) {
        const uint32_t g = first + (uint32_t)c * step;
        if (g * 256u < n) {
            w[c] = __ldg(r + g * 32u + lane);
        }
    }
}

// The lane's part of the dot product of groups loaded by ll_load_groups with x (shared,
// interleaved).
static __device__ __forceinline__ float ll_dot_groups(const uint4 (&w)[LL_VEC], const float* x, uint32_t n,
                                                      uint32_t first, uint32_t step, uint32_t lane) {
    float acc = 0.0f;
#pragma unroll
    for (int c = 0; c < LL_VEC; ++c) {
        const uint32_t g = first + (uint32_t)c * step;
        if (g * 256u < n) {
            acc = ll_dot8_interleaved(w[c], x + g * 256u, lane, acc);
        }
    }
    return acc;
}

// Rows of a pipelined ll_gate_up_pipe block per pass: warp 2p computes gate row p, warp 2p + 1
// up row p (src/device.rs GATE_UP_ROWS_PER_BLOCK).
#define LL_GATE_UP_ROWS (LL_WARPS / 2)

// As ll_gate_up (same arguments and result), pipelined. mlp a multiple of LL_GATE_UP_ROWS.
// Launch: any number of blocks of LL_THREADS; block b computes rows b * 4 + p + k * grid * 4.
extern "C" __global__ void __launch_bounds__(LL_THREADS) ll_gate_up_pipe(
    const uint16_t* w_gate, const uint16_t* w_up, const uint16_t* norm_w, const float* x, float* h,
    uint32_t hidden, uint32_t mlp, float eps) {
    __shared__ __align__(16) float s_x[LL_MAX_HIDDEN];
    __shared__ float s_scratch[LL_WARPS];
    __shared__ float s_dot[2][LL_WARPS];
    const uint32_t warp = threadIdx.x >> 5;
    const uint32_t lane = threadIdx.x & 31u;
    const uint16_t* w = (warp & 1u) ? w_up : w_gate;
    const uint32_t pair = warp >> 1;
    const uint32_t stride = gridDim.x * LL_GATE_UP_ROWS;
    // The block's first row of each pass: uniform over the block, so every warp meets the
    // same barriers.
    uint32_t base = blockIdx.x * LL_GATE_UP_ROWS;
    uint4 wa[LL_VEC];
    uint4 wb[LL_VEC];
    if (base < mlp) {
        ll_load_groups(w + (size_t)(base + pair) * hidden, hidden, 0, 1, lane, wa);
    }
    if (base + stride < mlp) {
        ll_load_groups(w + (size_t)(base + stride + pair) * hidden, hidden, 0, 1, lane, wb);
    }
    const uint4 nw = ll_norm_weights(norm_w, hidden);

    cuda_graph::pdl::wait_upstream();
    cuda_graph::pdl::launch_dependents();
    const float r = ll_load_weighted_as<true>(x, nw, hidden, eps, s_x, s_scratch);
    for (; base < mlp; base += 2u * stride) {
        // Pass with wa (row base + pair); wb's row is in flight.
        float part = ll_dot_groups(wa, s_x, hidden, 0, 1, lane);
        if (base + 2u * stride < mlp) {
            ll_load_groups(w + (size_t)(base + 2u * stride + pair) * hidden, hidden, 0, 1, lane, wa);
        }
        float dot = r * ll_warp_sum(part);
        if (lane == 0) {
            s_dot[0][warp] = dot;
        }
        __syncthreads();
        if (threadIdx.x < LL_GATE_UP_ROWS) {
            const float g = s_dot[0][2 * threadIdx.x];
            const float u = s_dot[0][2 * threadIdx.x + 1];
            h[base + threadIdx.x] = g / (1.0f + expf(-g)) * u;
        }
        if (base + stride >= mlp) {
            break;
        }
        // Pass with wb (row base + stride + pair); wa's next row is in flight.
        part = ll_dot_groups(wb, s_x, hidden, 0, 1, lane);
        if (base + 3u * stride < mlp) {
            ll_load_groups(w + (size_t)(base + 3u * stride + pair) * hidden, hidden, 0, 1, lane, wb);
        }
        dot = r * ll_warp_sum(part);
        if (lane == 0) {
            s_dot[1][warp] = dot;
        }
        __syncthreads();
        if (threadIdx.x < LL_GATE_UP_ROWS) {
            const float g = s_dot[1][2 * threadIdx.x];
            const float u = s_dot[1][2 * threadIdx.x + 1];
            h[base + stride + threadIdx.x] = g / (1.0f + expf(-g)) * u;
        }
    }
}

// Warps sharing one row of ll_down_pipe, and its rows per block per pass (src/device.rs
// DOWN_ROWS_PER_BLOCK).
#define LL_DOWN_SPLIT 4
#define LL_DOWN_ROWS (LL_WARPS / LL_DOWN_SPLIT)

// As ll_down (same arguments and result), pipelined: warp q of a row's LL_DOWN_SPLIT takes its
// column groups q, q + 4, ... (LL_MAX_MLP / 256 = 32 groups: at most LL_VEC each); the row's
// sum is its warps' in order (the same every run). hidden a multiple of LL_DOWN_ROWS.
// Launch: any number of blocks of LL_THREADS; block b computes rows b * 2 + r + k * grid * 2.
extern "C" __global__ void __launch_bounds__(LL_THREADS) ll_down_pipe(
    const uint16_t* w_down, const float* h, float* x, uint32_t hidden, uint32_t mlp) {
    __shared__ __align__(16) float s_h[LL_MAX_MLP];
    __shared__ float s_dot[2][LL_WARPS];
    const uint32_t warp = threadIdx.x >> 5;
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t sub = warp / LL_DOWN_SPLIT;
    const uint32_t q = warp % LL_DOWN_SPLIT;
    const uint32_t stride = gridDim.x * LL_DOWN_ROWS;
    // The block's first row of each pass: uniform over the block (barriers).
    uint32_t base = blockIdx.x * LL_DOWN_ROWS;
    uint4 wa[LL_VEC];
    uint4 wb[LL_VEC];
    if (base < hidden) {
        ll_load_groups(w_down + (size_t)(base + sub) * mlp, mlp, q, LL_DOWN_SPLIT, lane, wa);
    }
    if (base + stride < hidden) {
        ll_load_groups(w_down + (size_t)(base + stride + sub) * mlp, mlp, q, LL_DOWN_SPLIT, lane, wb);
    }

    // The residuals of the rows threads 0 .. LL_DOWN_ROWS - 1 add to, loaded a pass of each
    // buffer ahead (x_a for wa's rows, x_b for wb's): their round trips overlap the passes, not
    // the add after each barrier, which every warp of the block would wait for. The first two
    // before the wait: the O projection, two kernels before, wrote them.
    const bool adds = threadIdx.x < LL_DOWN_ROWS;
    float x_a = adds && base < hidden ? x[base + threadIdx.x] : 0.0f;
    float x_b = adds && base + stride < hidden ? x[base + stride + threadIdx.x] : 0.0f;

    cuda_graph::pdl::wait_upstream();
    cuda_graph::pdl::launch_dependents();
    ll_load_vector<true>(h, mlp, s_h);
    for (; base < hidden; base += 2u * stride) {
        // Pass with wa (row base + sub); wb's row is in flight.
        float part = ll_dot_groups(wa, s_h, mlp, q, LL_DOWN_SPLIT, lane);
        if (base + 2u * stride < hidden) {
            ll_load_groups(w_down + (size_t)(base + 2u * stride + sub) * mlp, mlp, q, LL_DOWN_SPLIT, lane, wa);
        }
        float dot = ll_warp_sum(part);
        if (lane == 0) {
            s_dot[0][warp] = dot;
        }
        __syncthreads();
        if (threadIdx.x < LL_DOWN_ROWS) {
            float sum = 0.0f;
#pragma unroll
            for (int k = 0; k < LL_DOWN_SPLIT; ++k) {
                sum += s_dot[0][threadIdx.x * LL_DOWN_SPLIT + k];
            }
            x[base + threadIdx.x] = x_a + sum;
            if (base + 2u * stride < hidden) {
                x_a = x[base + 2u * stride + threadIdx.x];
            }
        }
        if (base + stride >= hidden) {
            break;
        }
        // Pass with wb (row base + stride + sub); wa's next row is in flight.
        part = ll_dot_groups(wb, s_h, mlp, q, LL_DOWN_SPLIT, lane);
        if (base + 3u * stride < hidden) {
            ll_load_groups(w_down + (size_t)(base + 3u * stride + sub) * mlp, mlp, q, LL_DOWN_SPLIT, lane, wb);
        }
        dot = ll_warp_sum(part);
        if (lane == 0) {
            s_dot[1][warp] = dot;
        }
        __syncthreads();
        if (threadIdx.x < LL_DOWN_ROWS) {
            float sum = 0.0f;
#pragma unroll
            for (int k = 0; k < LL_DOWN_SPLIT; ++k) {
                sum += s_dot[1][threadIdx.x * LL_DOWN_SPLIT + k];
            }
            x[base + stride + threadIdx.x] = x_b + sum;
            if (base + 3u * stride < hidden) {
                x_b = x[base + 3u * stride + threadIdx.x];
            }
        }
    }
}

// The better of two (value, index) candidates: the larger value, the lower index on ties.
static __device__ __forceinline__ void ll_better(float& v, uint32_t& i, float ov, uint32_t oi) {
    if (ov > v || (ov == v && oi < i)) {
        v = ov;
        i = oi;
    }
}

// The block's best candidate (the larger value, the lower index on ties) of every thread's
// (best, best_i), left in thread 0's; s_best, s_best_i: LL_WARPS each. Every thread of the block
// calls it (it has a barrier).
static __device__ __forceinline__ void ll_block_best(float& best, uint32_t& best_i, float* s_best, uint32_t* s_best_i) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        const float ov = __shfl_xor_sync(LL_FULL_MASK, best, offset);
        const uint32_t oi = __shfl_xor_sync(LL_FULL_MASK, best_i, offset);
        ll_better(best, best_i, ov, oi);
    }
    if ((threadIdx.x & 31u) == 0) {
        s_best[threadIdx.x >> 5] = best;
        s_best_i[threadIdx.x >> 5] = best_i;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int i = 1; i < LL_WARPS; ++i) {
            ll_better(best, best_i, s_best[i], s_best_i[i]);
        }
    }
}

// logits[r] = embedding[r] . n, n = RMSNorm(x) * norm_w, for r < vocab (grid-stride over the
// grid's warps), and each block's largest logit and its index (the first on ties) in
// part_max[block], part_idx[block]. Launch: any number of blocks of LL_THREADS (four fit an SM).
extern "C" __global__ void __launch_bounds__(LL_THREADS, 4) ll_lm_head(
    const uint16_t* embedding, const uint16_t* norm_w, const float* x, float* logits, float* part_max,
    uint32_t* part_idx, uint32_t hidden, uint32_t vocab, float eps) {
    __shared__ __align__(16) float s_x[LL_MAX_HIDDEN];
    __shared__ float s_scratch[LL_WARPS];
    __shared__ float s_best[LL_WARPS];
    __shared__ uint32_t s_best_i[LL_WARPS];
    const uint32_t warp = threadIdx.x >> 5;
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t warps = gridDim.x * LL_WARPS;
    uint32_t row = blockIdx.x * LL_WARPS + warp;
    uint4 w[LL_VEC];
    if (row < vocab) {
        ll_load_row(embedding + (size_t)row * hidden, hidden, lane, w);
    }
    const uint4 nw = ll_norm_weights(norm_w, hidden);

    cuda_graph::pdl::wait_upstream();
    cuda_graph::pdl::launch_dependents();
    const float r = ll_load_weighted(x, nw, hidden, eps, s_x, s_scratch);
    float best = -INFINITY;
    uint32_t best_i = 0xffffffffu;
    for (; row < vocab; row += warps) {
        const float part = ll_dot_row(w, s_x, hidden, lane);
        if (row + warps < vocab) {
            ll_load_row(embedding + (size_t)(row + warps) * hidden, hidden, lane, w);
        }
        const float logit = r * ll_warp_sum(part);
        if (lane == 0) {
            logits[row] = logit;
        }
        ll_better(best, best_i, logit, row);
    }
    ll_block_best(best, best_i, s_best, s_best_i);
    if (threadIdx.x == 0) {
        part_max[blockIdx.x] = best;
        part_idx[blockIdx.x] = best_i;
    }
}

// Parts per thread whose loads ll_pick_step issues at once.
#define LL_PICK_BATCH 4

// Decode steps left at position `pos` after `steps` steps: the target's remaining count, and
// the room left in the sequence (a step writes seq[pos + 1]).
static __device__ uint32_t ll_left(uint32_t pos, uint32_t steps, uint32_t target, uint32_t max_seq) {
    const uint32_t by_target = steps < target ? target - steps : 0u;
    const uint32_t by_room = pos + 1u < max_seq ? max_seq - 1u - pos : 0u;
    return min(by_target, by_room);
}

// The same from the state words.
static __device__ uint32_t ll_steps_left(const uint32_t* state, uint32_t max_seq) {
    return ll_left(state[LL_POS], state[LL_STEPS], state[LL_TARGET], max_seq);
}

// The step's end (one block of LL_THREADS): the argmax of the parts; the next token (the next
// prompt token while the prompt lasts); seq[pos + 1] = it, pos + 1, steps + 1; x = its
// embedding. Returns, in every thread, the steps left after this one (0 when the step had no
// room: nothing is written then but x).
static __device__ uint32_t ll_pick_step(const float* part_max, const uint32_t* part_idx, uint32_t parts,
                                        const uint16_t* embedding, uint32_t* seq, uint32_t* state, float* x,
                                        uint32_t hidden, uint32_t vocab, uint32_t max_seq) {
    __shared__ float s_best[LL_WARPS];
    __shared__ uint32_t s_best_i[LL_WARPS];
    __shared__ uint32_t s_token;
    __shared__ uint32_t s_left;
    // Before the wait: the state words and the sequence, which only the picks write (the step
    // before's completed before this step's first kernel passed its wait).
    uint32_t pos = 0u;
    uint32_t prompt = 0u;
    uint32_t steps = 0u;
    uint32_t target = 0u;
    uint32_t stay = 0u;
    uint32_t next = 0u;
    if (threadIdx.x == 0) {
        pos = state[LL_POS];
        prompt = state[LL_PROMPT];
        steps = state[LL_STEPS];
        target = state[LL_TARGET];
        stay = seq[min(pos, max_seq - 1u)];
        next = pos + 1u < max_seq ? seq[pos + 1u] : 0u;
    }

    cuda_graph::pdl::wait_upstream();
    cuda_graph::pdl::launch_dependents();
    // The parts' loads issued LL_PICK_BATCH per thread at once (one round trip for up to
    // LL_PICK_BATCH * LL_THREADS parts); ll_better's order does not matter (ties go to the
    // lower index whatever the order).
    float best = -INFINITY;
    uint32_t best_i = 0xffffffffu;
    for (uint32_t base = 0; base < parts; base += LL_PICK_BATCH * LL_THREADS) {
        float m[LL_PICK_BATCH];
        uint32_t ix[LL_PICK_BATCH];
#pragma unroll
        for (int k = 0; k < LL_PICK_BATCH; ++k) {
            const uint32_t i = base + (uint32_t)k * LL_THREADS + threadIdx.x;
            m[k] = i < parts ? part_max[i] : -INFINITY;
            ix[k] = i < parts ? part_idx[i] : 0xffffffffu;
        }
#pragma unroll
        for (int k = 0; k < LL_PICK_BATCH; ++k) {
            ll_better(best, best_i, m[k], ix[k]);
        }
    }
    ll_block_best(best, best_i, s_best, s_best_i);
    if (threadIdx.x == 0) {
        uint32_t left = 0u;
        uint32_t token = stay;
        if (pos + 1u < max_seq) {
            // No largest logit (every one NaN): token 0, which the checks then catch.
            token = pos + 1u < prompt ? next : (best_i < vocab ? best_i : 0u);
            seq[pos + 1u] = token;
            state[LL_POS] = pos + 1u;
            state[LL_STEPS] = steps + 1u;
            left = ll_left(pos + 1u, steps + 1u, target, max_seq);
        }
        s_token = token;
        s_left = left;
    }
    __syncthreads();
    ll_gather_embedding(embedding, s_token, hidden, x);
    return s_left;
}

extern "C" __global__ void __launch_bounds__(LL_THREADS) ll_pick(
    const float* part_max, const uint32_t* part_idx, uint32_t parts, const uint16_t* embedding, uint32_t* seq,
    uint32_t* state, float* x, uint32_t hidden, uint32_t vocab, uint32_t max_seq) {
    (void)ll_pick_step(part_max, part_idx, parts, embedding, seq, state, x, hidden, vocab, max_seq);
}

// The WHILE body's last kernel: as ll_pick, and it ends the loop of `handle` once fewer than
// `ahead` steps are left (the body runs `ahead` steps; ll_loop_gate opened the loop, so every
// step of an iteration has its room and its count).
extern "C" __global__ void __launch_bounds__(LL_THREADS) ll_pick_while(
    cudaGraphConditionalHandle handle, uint32_t ahead, const float* part_max, const uint32_t* part_idx,
    uint32_t parts, const uint16_t* embedding, uint32_t* seq, uint32_t* state, float* x, uint32_t hidden,
    uint32_t vocab, uint32_t max_seq) {
    const uint32_t left = ll_pick_step(part_max, part_idx, parts, embedding, seq, state, x, hidden, vocab, max_seq);
    if (threadIdx.x == 0 && left < ahead) {
        cudaGraphSetConditional(handle, 0);
    }
}

// Before a WHILE loop whose body runs `ahead` steps (one thread): opens the loop of `handle`
// when at least `ahead` steps are left, else keeps it shut.
extern "C" __global__ void ll_loop_gate(cudaGraphConditionalHandle handle, const uint32_t* state, uint32_t max_seq,
                                        uint32_t ahead) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        cudaGraphSetConditional(handle, ll_steps_left(state, max_seq) >= ahead ? 1u : 0u);
    }
}
