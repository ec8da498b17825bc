#!/usr/bin/env python3
"""The PyTorch twin of examples/beyond/llama_decode: the same Llama-3.2-1B-shaped model, written
from the architecture gpt-fast style (static bf16 KV cache, batch 1, greedy), with the same
weights (the same integer hash, computed on the GPU with torch int64 operations), the same
prompt, N decode steps after a prefill of the prompt fed one token at a time.

Ways, each timed per decode step (event time over the N steps / N, median of --runs after a
warm-up, CUDA events, the prefill untimed):

- eager: the step's tensor operations from a host loop;
- cuda_graph: one decode step captured with torch.cuda.graph (the argmax and the position's
  advance inside it), replayed N times back to back;
- compile: the step compiled with torch.compile(mode="reduce-overhead", fullgraph=True) (CUDA
  graphs through Inductor), called from a host loop as gpt-fast does.

The fastest is PyTorch's figure. The timed ways compute the LM head in bf16 (as gpt-fast does).

Agreement with the Rust run (its --dump file: prompt, tokens, first step's logits), two eager
generations, each giving tokens and first-step logits:

- at the kernels' precision (the verdict): the same model with fp32 activations, residual,
  attention and logits, the bf16 weights widened to fp32 for each product and K and V rounded
  to bf16 in the cache, as the Rust kernels compute it; its tokens against the Rust run's, and
  its first step's logits against the Rust run's with LOGIT_TOLERANCE. The same first step
  evaluated in float64 (the cache still bf16) is the reference both are measured against: the
  Rust logits must be no farther from it than REFERENCE_FACTOR times the fp32 twin's own
  distance (at least LOGIT_TOLERANCE), i.e. the kernels' fp32 arithmetic about as exact as
  PyTorch's;
- at the timed ways' precision (reported): bf16 activations and residual as the timed ways
  keep them, the LM head in fp32; its gap to the Rust logits (about 0.08 on the full model)
  is bf16's rounding of the activations, against BF16_LOGIT_TOLERANCE.

Printed for each: the tokens equal up to step k, the first differing step and the logit gap
there (twin's logit of its token minus its logit of the Rust token), and the largest absolute
difference of the first step's logits against the stated tolerance.

Usage (on the GPU machine, right after the Rust run):
    python3 torch_twin.py --dump DIR/dump.json --runs 5 --out DIR/torch.json
    python3 torch_twin.py --self-test      # the hash against src/weights.rs's values, CPU only
"""

import argparse
import json
import statistics
import sys

import torch
import torch.nn.functional as F

MASK = 0xFFFFFFFF
HEAD_DIM = 64
# The first step's logits: at the kernels' precision (fp32 sums in other orders) and at the timed
# ways' (bf16 activations).
LOGIT_TOLERANCE = 2e-3
BF16_LOGIT_TOLERANCE = 5e-2
# Against the first step's logits evaluated in float64: the Rust kernels' distance may be at most
# this many times the fp32 twin's own (and at least LOGIT_TOLERANCE).
REFERENCE_FACTOR = 2.0
# SDPA's grouped-query attention without copying the cache (PyTorch 2.5 and later).
GQA_NATIVE = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 5)
# Values 2^k times wider than a projection of their fan-in (src/weights.rs): the embedding, and
# the layers' output projections (wo, down).
EMBEDDING_WIDENING = 2
OUTPUT_WIDENING = 3
# Elements generated at a time (int64 temporaries: 8 bytes each, a few alive at once).
CHUNK = 1 << 24


# ---- the weights' hash (src/weights.rs, kernels/llama.cu ll_init_weights) ---------------------
def mix_int(x):
    x ^= x >> 16
    x = (x * 0x7FEB352D) & MASK
    x ^= x >> 15
    x = (x * 0x68E31DA5) & MASK
    x ^= x >> 16
    return x


def mix(x):
    """The same on an int64 tensor of values below 2^32: every product stays below 2^63."""
    x = x ^ (x >> 16)
    x = (x * 0x7FEB352D) & MASK
    x = x ^ (x >> 15)
    x = (x * 0x68E31DA5) & MASK
    x = x ^ (x >> 16)
    return x


def hash_tensor(seed32, tensor_id, index):
    s = mix_int(seed32 ^ ((tensor_id * 0x27D4EB2F) & MASK))
    return mix(s ^ mix((index + 0x165667B1) & MASK))


def scale_exponent(fan_in):
    bits = (max(fan_in, 2) - 1).bit_length()
    return (bits + 1) // 2


def generate(seed32, tensor_id, n, shift, one, device):
    """n values: a centred 24-bit integer from the hash times 2^-shift (exact in fp32), plus 1 for
    norm weights, rounded to bf16 (to nearest, ties to even)."""
    out = torch.empty(n, dtype=torch.bfloat16, device=device)
    scale = 2.0 ** -shift  # a power of two: exact in fp32
    for start in range(0, n, CHUNK):
        index = torch.arange(start, min(n, start + CHUNK), dtype=torch.int64, device=device)
        centred = (hash_tensor(seed32, tensor_id, index) >> 8) - (1 << 23)
        v = centred.to(torch.float32) * scale
        if one:
            v = v + 1.0
        out[start : start + index.numel()] = v.to(torch.bfloat16)
    return out


def projection(seed32, tensor_id, rows, fan_in, device, extra=0):
    shift = 23 + scale_exponent(fan_in) - extra
    return generate(seed32, tensor_id, rows * fan_in, shift, False, device).view(rows, fan_in)


def norm(seed32, tensor_id, n, device):
    return generate(seed32, tensor_id, n, 23 + 3, True, device)


def inv_freq(cfg):
    """RoPE's inverse frequencies in float64 with Llama 3's scaling, then float32 (config.rs)."""
    import math

    out = []
    for i in range(HEAD_DIM // 2):
        f = 1.0 / cfg["rope_theta"] ** ((2 * i) / HEAD_DIM)
        if cfg["rope_scaling"]:
            factor, low, high, original = 32.0, 1.0, 4.0, 8192.0
            wavelen = 2.0 * math.pi / f
            if wavelen < original / high:
                pass
            elif wavelen > original / low:
                f = f / factor
            else:
                smooth = (original / wavelen - low) / (high - low)
                f = (1.0 - smooth) * f / factor + smooth * f
        out.append(f)
    return torch.tensor(out, dtype=torch.float64).to(torch.float32)


# ---- the model (gpt-fast style) --------------------------------------------------------------
class Layer(torch.nn.Module):
    """One decoder layer's weights and KV cache, as buffers (static addresses for CUDA graphs)."""

    def __init__(self, cfg, seed32, layer, device):
        super().__init__()
        h, qh, kvh, mlp = cfg["hidden"], cfg["q_heads"], cfg["kv_heads"], cfg["mlp"]
        t = 16 + 16 * layer
        wq = projection(seed32, t + 1, qh * HEAD_DIM, h, device)
        wk = projection(seed32, t + 2, kvh * HEAD_DIM, h, device)
        wv = projection(seed32, t + 3, kvh * HEAD_DIM, h, device)
        self.register_buffer("attn_norm", norm(seed32, t + 0, h, device))
        self.register_buffer("wqkv", torch.cat([wq, wk, wv]))
        self.register_buffer("wo", projection(seed32, t + 4, h, qh * HEAD_DIM, device, extra=OUTPUT_WIDENING))
        self.register_buffer("mlp_norm", norm(seed32, t + 5, h, device))
        self.register_buffer("gate", projection(seed32, t + 6, mlp, h, device))
        self.register_buffer("up", projection(seed32, t + 7, mlp, h, device))
        self.register_buffer("down", projection(seed32, t + 8, h, mlp, device, extra=OUTPUT_WIDENING))
        shape = (1, kvh, cfg["max_seq"], HEAD_DIM)
        self.register_buffer("k_cache", torch.zeros(shape, dtype=torch.bfloat16, device=device))
        self.register_buffer("v_cache", torch.zeros(shape, dtype=torch.bfloat16, device=device))


class Model(torch.nn.Module):
    def __init__(self, cfg, seed32, device):
        super().__init__()
        h, vocab = cfg["hidden"], cfg["vocab"]
        self.cfg = cfg
        self.eps = cfg["eps"]
        self.register_buffer("embedding", projection(seed32, 1, vocab, h, device, extra=EMBEDDING_WIDENING))
        self.register_buffer("final_norm", norm(seed32, 2, h, device))
        self.layers = torch.nn.ModuleList([Layer(cfg, seed32, layer, device) for layer in range(cfg["layers"])])
        self.register_buffer("inv_freq", inv_freq(cfg).to(device))
        causal = torch.tril(torch.ones(cfg["max_seq"], cfg["max_seq"], dtype=torch.bool, device=device))
        self.register_buffer("causal", causal)
        self.embedding_f32 = None

    def reset(self):
        for layer in self.layers:
            layer.k_cache.zero_()
            layer.v_cache.zero_()

    def rms_norm(self, x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * w

    def rope(self, t, pos):
        # t: [1, heads, 1, 64]; rotate-half pairs (j, j + 32), angle pos * inv_freq[j] in fp32.
        angle = pos.to(torch.float32)[:, None] * self.inv_freq[None, :]  # [1, 32]
        cos, sin = torch.cos(angle), torch.sin(angle)
        cos = torch.cat([cos, cos], -1)[None, :, None, :].view(1, 1, 1, HEAD_DIM)
        sin = torch.cat([sin, sin], -1)[None, :, None, :].view(1, 1, 1, HEAD_DIM)
        tf = t.float()
        half = HEAD_DIM // 2
        rotated = torch.cat([-tf[..., half:], tf[..., :half]], -1)
        return (tf * cos + rotated * sin).type_as(t)

    def forward(self, token, pos, fp32_logits=False):
        """token: [1] int64, pos: [1] int64 (device tensors). Returns the logits [vocab]."""
        cfg = self.cfg
        qh, kvh = cfg["q_heads"], cfg["kv_heads"]
        q_dim, kv_dim = qh * HEAD_DIM, kvh * HEAD_DIM
        x = F.embedding(token, self.embedding)  # [1, hidden]
        mask = self.causal[pos][:, None, None, :]  # [1, 1, 1, max_seq]
        for layer in self.layers:
            n = self.rms_norm(x, layer.attn_norm)
            qkv = F.linear(n, layer.wqkv)
            q, k, v = qkv.split([q_dim, kv_dim, kv_dim], dim=-1)
            q = self.rope(q.view(1, qh, 1, HEAD_DIM), pos)
            k = self.rope(k.view(1, kvh, 1, HEAD_DIM), pos)
            v = v.view(1, kvh, 1, HEAD_DIM)
            layer.k_cache.index_copy_(2, pos, k)
            layer.v_cache.index_copy_(2, pos, v)
            if GQA_NATIVE:
                att = F.scaled_dot_product_attention(q, layer.k_cache, layer.v_cache, attn_mask=mask, enable_gqa=True)
            else:
                keys = layer.k_cache.repeat_interleave(qh // kvh, dim=1)
                values = layer.v_cache.repeat_interleave(qh // kvh, dim=1)
                att = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
            x = x + F.linear(att.reshape(1, q_dim), layer.wo)
            n = self.rms_norm(x, layer.mlp_norm)
            x = x + F.linear(F.silu(F.linear(n, layer.gate)) * F.linear(n, layer.up), layer.down)
        n = self.rms_norm(x, self.final_norm)
        if fp32_logits:
            if self.embedding_f32 is None:
                self.embedding_f32 = self.embedding.float()
            return F.linear(n.float(), self.embedding_f32)[0]
        return F.linear(n, self.embedding)[0]


def kernel_precision_step(model, token, pos, dtype=torch.float32):
    """One step as the Rust kernels compute it: activations, residual, attention and logits in
    `dtype` (fp32 as the kernels; float64 for the reference evaluation); the bf16 weights
    widened to `dtype` for each product; K and V rounded to bf16 in the cache (the same caches
    as the timed ways). Returns the logits [vocab] in `dtype`."""
    cfg = model.cfg
    qh, kvh = cfg["q_heads"], cfg["kv_heads"]
    q_dim, kv_dim = qh * HEAD_DIM, kvh * HEAD_DIM
    half = HEAD_DIM // 2

    def norm(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + model.eps) * w.to(dtype)

    angle = pos.to(dtype)[:, None] * model.inv_freq.to(dtype)[None, :]  # [1, 32]
    cos = torch.cat([torch.cos(angle), torch.cos(angle)], -1).view(1, 1, 1, HEAD_DIM)
    sin = torch.cat([torch.sin(angle), torch.sin(angle)], -1).view(1, 1, 1, HEAD_DIM)

    def rope(t):  # rotate-half pairs (j, j + 32)
        return t * cos + torch.cat([-t[..., half:], t[..., :half]], -1) * sin

    x = F.embedding(token, model.embedding).to(dtype)  # [1, hidden]
    mask = model.causal[pos][:, None, None, :]  # [1, 1, 1, max_seq]
    for layer in model.layers:
        qkv = F.linear(norm(x, layer.attn_norm), layer.wqkv.to(dtype))
        q, k, v = qkv.split([q_dim, kv_dim, kv_dim], dim=-1)
        q = rope(q.view(1, qh, 1, HEAD_DIM))
        layer.k_cache.index_copy_(2, pos, rope(k.view(1, kvh, 1, HEAD_DIM)).to(torch.bfloat16))
        layer.v_cache.index_copy_(2, pos, v.view(1, kvh, 1, HEAD_DIM).to(torch.bfloat16))
        keys = layer.k_cache.to(dtype).repeat_interleave(qh // kvh, dim=1)  # [1, qh, max_seq, 64]
        values = layer.v_cache.to(dtype).repeat_interleave(qh // kvh, dim=1)
        scores = (q @ keys.transpose(-1, -2)) * (HEAD_DIM**-0.5)  # [1, qh, 1, max_seq]
        scores = scores.masked_fill(~mask, float("-inf"))
        x = x + F.linear((torch.softmax(scores, dim=-1) @ values).reshape(1, q_dim), layer.wo.to(dtype))
        n = norm(x, layer.mlp_norm)
        gated = F.silu(F.linear(n, layer.gate.to(dtype))) * F.linear(n, layer.up.to(dtype))
        x = x + F.linear(gated, layer.down.to(dtype))
    return F.linear(norm(x, model.final_norm), model.embedding.to(dtype))[0]


def run_kernel_precision(model, prompt, n, device, dtype=torch.float32):
    """The prompt (one token at a time) and n greedy steps at the kernels' precision (or in
    `dtype`); returns the tokens and each step's logits."""
    model.reset()
    logits_kept, tokens = [], []
    with torch.no_grad():
        for pos, tok in enumerate(prompt[:-1]):
            kernel_precision_step(model, torch.tensor([tok], device=device), torch.tensor([pos], device=device), dtype)
        token = torch.tensor([prompt[-1]], device=device)
        pos = torch.tensor([len(prompt) - 1], device=device)
        for _ in range(n):
            logits = kernel_precision_step(model, token, pos, dtype)
            logits_kept.append(logits.clone())
            token = torch.argmax(logits).view(1)  # the first largest, as the kernels' pick
            tokens.append(token)
            pos = pos + 1
    return torch.cat(tokens).tolist(), logits_kept


def against_float64(model, prompt, device, rust_first, twin_first):
    """The first step's logits evaluated in float64 (the same model, the cache still bf16): how
    far the Rust kernels' and the fp32 twin's are from it. The verdict: the kernels no farther
    than REFERENCE_FACTOR times the fp32 twin's distance (at least LOGIT_TOLERANCE)."""
    _, logits = run_kernel_precision(model, prompt, 1, device, torch.float64)
    exact = logits[0]
    rust = torch.tensor(rust_first, dtype=torch.float64, device=device)
    rust_gap = (rust - exact).abs().max().item()
    twin_gap = (twin_first.to(torch.float64) - exact).abs().max().item()
    allowed = max(REFERENCE_FACTOR * twin_gap, LOGIT_TOLERANCE)
    return {
        "rust_max_abs_diff": rust_gap,
        "twin_fp32_max_abs_diff": twin_gap,
        "largest_abs_logit": exact.abs().max().item(),
        "allowed": allowed,
        "rust_within": rust_gap <= allowed,
    }


def prefill(model, prompt, device):
    """The prompt's tokens but the last through the step; returns (last token, its position)."""
    model.reset()
    with torch.no_grad():
        for pos, tok in enumerate(prompt[:-1]):
            model(torch.tensor([tok], device=device), torch.tensor([pos], device=device))
    return torch.tensor([prompt[-1]], device=device), torch.tensor([len(prompt) - 1], device=device)


def timed(fn):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    out = fn()
    end.record()
    end.synchronize()
    return out, start.elapsed_time(end)


def run_eager(model, prompt, n, device, fp32_logits=False, keep_logits=False):
    token, pos = prefill(model, prompt, device)
    torch.cuda.synchronize()
    first = []

    def loop():
        nonlocal token, pos
        tokens = []
        with torch.no_grad():
            for i in range(n):
                logits = model(token, pos, fp32_logits)
                if keep_logits:
                    first.append(logits.float().clone())
                token = torch.argmax(logits).view(1)
                tokens.append(token)
                pos = pos + 1
        return torch.cat(tokens)

    tokens, ms = timed(loop)
    return tokens.tolist(), ms, first


def run_cuda_graph(model, prompt, n, device):
    """One decode step captured (argmax and position advance inside), replayed n times."""
    token, pos = prefill(model, prompt, device)
    static_token, static_pos = token.clone(), pos.clone()
    out = torch.zeros(n, dtype=torch.int64, device=device)
    step_index = torch.zeros(1, dtype=torch.int64, device=device)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream), torch.no_grad():
        for _ in range(2):  # warm-up on a side stream, as torch.cuda.graph requires
            model(static_token, static_pos)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        logits = model(static_token, static_pos)
        nxt = torch.argmax(logits).view(1)
        out.index_copy_(0, step_index, nxt)
        static_token.copy_(nxt)
        static_pos.add_(1)
        step_index.add_(1)
    # The warm-up and capture wrote the cache at the first decode position only; start again.
    token, pos = prefill(model, prompt, device)
    static_token.copy_(token)
    static_pos.copy_(pos)
    step_index.zero_()
    torch.cuda.synchronize()

    def loop():
        for _ in range(n):
            graph.replay()

    _, ms = timed(loop)
    return out.tolist(), ms


def decode_one(model, token, pos):
    logits = model(token, pos)
    return torch.argmax(logits).view(1)


def make_compiled():
    # As gpt-fast: the model passed in, its weights and caches module buffers (static addresses).
    return torch.compile(decode_one, mode="reduce-overhead", fullgraph=True)


def run_compiled(compiled, model, prompt, n, device):
    token, pos = prefill(model, prompt, device)
    torch.cuda.synchronize()

    def loop():
        nonlocal token, pos
        tokens = []
        with torch.no_grad():
            for _ in range(n):
                token = compiled(model, token, pos).clone()
                tokens.append(token)
                pos = pos + 1
        return torch.cat(tokens)

    tokens, ms = timed(loop)
    return tokens.tolist(), ms


def agreement(rust, twin_tokens, twin_logits, tolerance):
    """Tokens equal up to which step, the first differing step and the twin's logit gap there,
    and the first step's logits' largest difference."""
    rt = rust["tokens"]
    k = next((i for i, (a, b) in enumerate(zip(rt, twin_tokens)) if a != b), None)
    out = {"steps_compared": min(len(rt), len(twin_tokens))}
    if k is None:
        out["tokens_equal_steps"] = out["steps_compared"]
        out["first_difference"] = None
    else:
        logits = twin_logits[k]
        out["tokens_equal_steps"] = k
        out["first_difference"] = {
            "step": k,
            "rust_token": rt[k],
            "twin_token": twin_tokens[k],
            "twin_logit_gap": float(logits[twin_tokens[k]] - logits[rt[k]]),
        }
    first = torch.tensor(rust["first_logits"], dtype=torch.float32, device=twin_logits[0].device)
    diff = (first - twin_logits[0]).abs().max().item()
    out["first_logits_max_abs_diff"] = diff
    out["first_logits_tolerance"] = tolerance
    out["first_logits_within_tolerance"] = diff <= tolerance
    out["first_token_equal"] = bool(rt and twin_tokens and rt[0] == twin_tokens[0])
    return out


def self_test():
    # The values src/weights.rs's tests assert, here with torch int64 operations on the CPU.
    idx = torch.tensor([0, 12345], dtype=torch.int64)
    got = [int(hash_tensor(0x5EED, 1, idx[:1]).item()), int(hash_tensor(0x5EED, 16, idx[1:]).item())]
    want = [0x81E1CC3C, 0x9DD99000]
    assert got == want, f"hash: {[hex(g) for g in got]} want {[hex(w) for w in want]}"
    assert int(mix(torch.tensor([1])).item()) == 0x1D895F4E
    # bf16 rounding to nearest even, as weights.rs's doctest.
    v = torch.tensor([1.0 + 1.0 / 256.0, 1.0 + 3.0 / 256.0]).to(torch.bfloat16).float().tolist()
    assert v == [1.0, 1.0 + 4.0 / 256.0], v
    assert scale_exponent(2048) == 6 and scale_exponent(8192) == 7 and scale_exponent(256) == 4
    print("self-test: the hash, the bf16 rounding and the scales match src/weights.rs")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dump", help="the Rust run's dump.json (config, prompt, tokens, first logits)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", help="write the figures and the agreement here (JSON)")
    parser.add_argument("--ways", default="eager,cuda_graph,compile", help="comma-separated subset to time")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        self_test()
        return 0
    if not args.dump:
        parser.error("--dump is required (or --self-test)")
    with open(args.dump) as f:
        rust = json.load(f)
    cfg, prompt = rust["config"], rust["prompt"]
    n = len(rust["tokens"])
    device = torch.device("cuda")
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    model = Model(cfg, cfg["seed32"], device)

    # Agreement: at the kernels' precision (the verdict), then at the timed ways' (reported).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    twin_tokens, twin_logits = run_kernel_precision(model, prompt, n, device)
    agree = agreement(rust, twin_tokens, twin_logits, LOGIT_TOLERANCE)
    agree["float64"] = against_float64(model, prompt, device, rust["first_logits"], twin_logits[0])
    del twin_logits
    twin_tokens, _, twin_logits = run_eager(model, prompt, n, device, fp32_logits=True, keep_logits=True)
    agree_bf16 = agreement(rust, twin_tokens, twin_logits, BF16_LOGIT_TOLERANCE)
    del twin_logits
    model.embedding_f32 = None
    torch.cuda.empty_cache()

    ways = [w for w in args.ways.split(",") if w]
    times = {w: [] for w in ways}
    tokens = {}
    compiled = make_compiled() if "compile" in ways else None
    for run in range(args.runs + 1):  # run 0 warms up (and compiles)
        for way in ways:
            if way == "eager":
                toks, ms, _ = run_eager(model, prompt, n, device)
            elif way == "cuda_graph":
                toks, ms = run_cuda_graph(model, prompt, n, device)
            elif way == "compile":
                toks, ms = run_compiled(compiled, model, prompt, n, device)
            else:
                parser.error(f"unknown way {way}")
            tokens[way] = toks
            if run > 0:
                times[way].append(ms * 1e3 / n)
    per_step = {w: statistics.median(v) for w, v in times.items()}
    fastest = min(per_step, key=per_step.get)
    equal_steps = {
        w: next((i for i, (a, b) in enumerate(zip(rust["tokens"], t)) if a != b), min(len(t), n))
        for w, t in tokens.items()
    }
    result = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "tokens": n,
        "runs": args.runs,
        "us_per_step": per_step,
        "us_runs": times,
        "fastest": fastest,
        "fastest_us_per_step": per_step[fastest],
        "timed_ways_tokens_equal_to_rust_steps": equal_steps,
        "agreement": agree,
        "agreement_bf16_activations": agree_bf16,
    }
    print(json.dumps(result, indent=2))
    lines = [f"PyTorch {torch.__version__} on {result['device']}, {n} decode steps, median of {args.runs}:"]
    for w, us in per_step.items():
        lines.append(f"  {w:<11} {us:10.1f} us/step {1e6 / us:9.1f} tokens/s")
    lines.append(f"  fastest: {fastest} {per_step[fastest]:.1f} us/step")
    for name, a in [("at the kernels' precision", agree), ("bf16 activations, fp32 logits", agree_bf16)]:
        fd = a["first_difference"]
        lines.append(
            f"  agreement ({name}, eager): tokens equal for {a['tokens_equal_steps']} of {a['steps_compared']} steps"
            + (f"; first difference at step {fd['step']}: Rust {fd['rust_token']}, twin {fd['twin_token']}, "
               f"twin's logit gap {fd['twin_logit_gap']:.4g}" if fd else "")
        )
        lines.append(
            f"    first step's logits: largest difference {a['first_logits_max_abs_diff']:.3g} "
            f"(tolerance {a['first_logits_tolerance']}: {'within' if a['first_logits_within_tolerance'] else 'NOT within'})"
        )
    f64 = agree["float64"]
    lines.append(
        f"  first step's logits against a float64 evaluation (largest |logit| {f64['largest_abs_logit']:.3g}): "
        f"Rust {f64['rust_max_abs_diff']:.3g}, the fp32 twin {f64['twin_fp32_max_abs_diff']:.3g}; allowed "
        f"{f64['allowed']:.3g} ({REFERENCE_FACTOR:g}x the twin's, at least {LOGIT_TOLERANCE}): "
        f"{'within' if f64['rust_within'] else 'NOT within'}"
    )
    print("\n".join(lines), file=sys.stderr)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
