// Mixture-of-experts routing, dispatched from the device (the device-launch guide's MoE
// example) or from the host.
//
// Data (all uint32_t, wrapping integer arithmetic so that the CPU model in src/model.rs
// matches bit for bit):
//   x[t * d + j]            token t's features (T tokens of d features)
//   gate[e * d + j]         the gate's weights wg, then gate[experts * d + e] its biases:
//                           score(t, e) = bias[e] + sum_j x[t, j] * wg[e * d + j]
//   w[(e * d + i) * d + j]  expert e's weights: a d x d matrix
// Routing: each token picks its top_k (1 or 2) experts by score, ties to the lower index.
// Pick k of token t is the pair p = t * top_k + k, with gate gates[p] = its score. Expert e's
// pairs are listed in lists[e * T .. e * T + counts[e]) (in no particular order).
// Expert e writes, for each of its pairs p and each i < d:
//   out[p * d + i] = moe_mix(e + sum_j w[e, i, j] * x[t, j])
// The combine writes y[t * d + i] = sum_k gates[t * top_k + k] * out[(t * top_k + k) * d + i].
// Bookkeeping lives in one `counters` array (layout below, shared with src/lib.rs): this step's
// count per expert, the running totals, the experts' own counts, the router's ticket, the
// fire-and-forget launches accepted and the steps completed.
//
// moe_route_dispatch: the device way. Every block routes its tokens; the last block to finish
//     (a ticket counter) fire-and-forgets the graph of every expert that received tokens (at
//     most one launch per expert graph per step, at most 64 experts: within CUDA's 120
//     fire-and-forget launches per launching kernel) and tail-launches the combine graph, which
//     runs after the router's graph and all the expert graphs. Run it inside a graph
//     (device_launch::Launcher). Every launch goes through device_launch.cuh, so a refusal
//     lands in the DlErrorSlot.
// moe_route: the same routing without launches (the host-driven way reads counts back and
//     launches moe_expert itself).
// moe_expert: the body of an expert's graph; a grid-stride loop over counts[e] * d outputs, so
//     a graph of fixed shape serves any count.
// moe_combine -> moe_finalize: the combine graph. moe_finalize adds the step's counts into the
//     running totals, clears them and the ticket for the next step, and counts the step.
#include <device_launch.cuh>
#include <stdint.h>

// Launch geometry shared with src/lib.rs.
#define MOE_ROUTE_THREADS 128u    // moe_route / moe_route_dispatch: a thread per token
#define MOE_MAX_EXPERTS 64u       // experts per step (each a fire-and-forget launch)

// The counters array (src/lib.rs: `Counters`).
#define MOE_COUNTS 0u                          // [e]: pairs routed to expert e this step
#define MOE_TOTALS (MOE_MAX_EXPERTS)           // [e]: sum of the counts of all finished steps
#define MOE_PROCESSED (2u * MOE_MAX_EXPERTS)   // [e]: pairs expert e's kernel processed
#define MOE_TICKET (3u * MOE_MAX_EXPERTS)      // blocks of the router that finished this step
#define MOE_LAUNCHED (MOE_TICKET + 1u)         // expert graphs fire-and-forgotten (accepted)
#define MOE_STEPS (MOE_TICKET + 2u)            // steps whose combine finished
#define MOE_COUNTERS (MOE_TICKET + 3u)         // length of the array

// What an expert does to its accumulated sum (src/model.rs: `mix`).
static __device__ __forceinline__ uint32_t moe_mix(uint32_t x) {
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    return x;
}

// Routes token t: scores every expert, keeps the top_k (ties to the lower index), appends each
// pick to its expert's list and records its gate.
static __device__ void moe_route_token(const uint32_t* x, const uint32_t* gate, uint32_t tokens, uint32_t d,
                                       uint32_t experts, uint32_t top_k, uint32_t t, uint32_t* counters,
                                       uint32_t* lists, uint32_t* gates) {
    const uint32_t* row = x + (size_t)t * d;
    const uint32_t* bias = gate + (size_t)experts * d;
    uint32_t best[2] = {UINT32_MAX, UINT32_MAX};
    uint32_t best_score[2] = {0, 0};
    for (uint32_t e = 0; e < experts; ++e) {
        uint32_t score = bias[e];
        const uint32_t* g = gate + (size_t)e * d;
        for (uint32_t j = 0; j < d; ++j) score += row[j] * g[j];
        // Strict comparisons while e ascends: a tie keeps the lower index first.
        if (best[0] == UINT32_MAX || score > best_score[0]) {
            best[1] = best[0];
            best_score[1] = best_score[0];
            best[0] = e;
            best_score[0] = score;
        } else if (best[1] == UINT32_MAX || score > best_score[1]) {
            best[1] = e;
            best_score[1] = score;
        }
    }
    for (uint32_t k = 0; k < top_k; ++k) {
        const uint32_t e = best[k];
        const uint32_t p = t * top_k + k;
        const uint32_t slot = atomicAdd(&counters[MOE_COUNTS + e], 1u);
        lists[(size_t)e * tokens + slot] = p;
        gates[p] = best_score[k];
    }
}

// The host-driven router: a thread per token, no launches.
extern "C" __global__ void moe_route(const uint32_t* x, const uint32_t* gate, uint32_t tokens, uint32_t d,
                                     uint32_t experts, uint32_t top_k, uint32_t* counters, uint32_t* lists,
                                     uint32_t* gates) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < tokens) moe_route_token(x, gate, tokens, d, experts, top_k, t, counters, lists, gates);
}

// The device router: routes like moe_route, then the last block to finish dispatches the step.
// Launch ceil(tokens / MOE_ROUTE_THREADS) blocks of MOE_ROUTE_THREADS threads, inside a graph.
extern "C" __global__ void moe_route_dispatch(const uint32_t* x, const uint32_t* gate, uint32_t tokens, uint32_t d,
                                              uint32_t experts, uint32_t top_k, uint32_t* counters,
                                              uint32_t* lists, uint32_t* gates, const cudaGraphExec_t* expert_graphs,
                                              cudaGraphExec_t combine, DlErrorSlot* slot) {
    __shared__ bool last_block;
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < tokens) moe_route_token(x, gate, tokens, d, experts, top_k, t, counters, lists, gates);
    // Every thread's list and gate writes are visible device-wide before the block's ticket.
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last_block = atomicAdd(&counters[MOE_TICKET], 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last_block) return;
    // The last block's thread 0 dispatches (as the guide's router does): every other block's
    // writes were fenced before its ticket, which this block has seen; the counts are final.
    if (threadIdx.x != 0) return;
    __threadfence();
    uint32_t launched = 0;
    for (uint32_t e = 0; e < experts && e < MOE_MAX_EXPERTS; ++e) {
        if (*(volatile const uint32_t*)&counters[MOE_COUNTS + e] == 0) continue;  // skip idle experts
        // Fire-and-forget: the expert's graph starts at once. One launch per expert graph per
        // step, so no graph is ever pending twice.
        launched += DL_FIRE_AND_FORGET(expert_graphs[e], slot) ? 1u : 0u;
    }
    counters[MOE_LAUNCHED] += launched;
    // Tail launch: the combine runs after this graph and every expert graph it launched
    // (issued before or after them), so it sees their outputs without any device-side wait.
    DL_TAIL_LAUNCH(combine, slot);
}

// An expert: for each of its counts[expert] pairs and each output feature, one dot product.
extern "C" __global__ void moe_expert(const uint32_t* x, const uint32_t* w, const uint32_t* lists,
                                      uint32_t* counters, uint32_t expert, uint32_t tokens, uint32_t d,
                                      uint32_t top_k, uint32_t* out) {
    const uint32_t count = counters[MOE_COUNTS + expert];
    const uint32_t* list = lists + (size_t)expert * tokens;
    const uint32_t* we = w + (size_t)expert * d * d;
    const uint32_t total = count * d;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        const uint32_t p = list[i / d];
        const uint32_t row = i % d;
        const uint32_t* xt = x + (size_t)(p / top_k) * d;
        const uint32_t* wr = we + (size_t)row * d;
        uint32_t acc = expert;
        for (uint32_t j = 0; j < d; ++j) acc += wr[j] * xt[j];
        out[(size_t)p * d + row] = moe_mix(acc);
    }
    // The expert's own count of the tokens it processed (checked against the CPU model).
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(&counters[MOE_PROCESSED + expert], count);
}

// The combine: every token's output is the gate-weighted sum of its experts' outputs.
extern "C" __global__ void moe_combine(const uint32_t* out, const uint32_t* gates, uint32_t tokens, uint32_t d,
                                       uint32_t top_k, uint32_t* y) {
    const uint32_t total = tokens * d;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        const uint32_t t = i / d;
        const uint32_t row = i % d;
        uint32_t acc = 0;
        for (uint32_t k = 0; k < top_k; ++k) {
            const uint32_t p = t * top_k + k;
            acc += gates[p] * out[(size_t)p * d + row];
        }
        y[i] = acc;
    }
}

// After the combine (one block of MOE_MAX_EXPERTS threads): totals[e] += counts[e], the counts
// and the router's ticket back to 0 for the next step, and one more step counted.
extern "C" __global__ void moe_finalize(uint32_t* counters, uint32_t experts) {
    const uint32_t e = threadIdx.x;
    if (e < experts) {
        counters[MOE_TOTALS + e] += counters[MOE_COUNTS + e];
        counters[MOE_COUNTS + e] = 0;
    }
    if (e == 0) {
        counters[MOE_TICKET] = 0;
        counters[MOE_STEPS] += 1;
    }
}
