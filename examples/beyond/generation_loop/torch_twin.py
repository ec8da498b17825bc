#!/usr/bin/env python3
"""The PyTorch twin of examples/beyond/generation_loop: the same decoder, weights and stopping rule,
run the ways a PyTorch user would write it.

The bit-exact twin (the example's table activations, op by op), driven from the host:

- eager: each step's tensor operations, then `.item()` on a "go on" flag (a sync per step);
- CUDA graph: one step captured with torch.cuda.graph, replayed per step, then `.item()`.

The model as a PyTorch user writes it (`nn.Embedding`, two `nn.GRUCell`, `nn.Linear`, argmax;
sigmoid and tanh computed, not looked up, so its tokens may differ from the example's), run for
the example's step count with the end token not stopping the loop (finished sequences masked),
so no step needs the host:

- GRUCell, one CUDA graph per step, the step count's replays queued back to back;
- GRUCell, the whole decode captured as one CUDA graph;
- the same step compiled with `torch.compile` (Inductor, fullgraph), one CUDA graph per step;
- the compiled step, the whole decode captured as one CUDA graph.

Their tokens are compared with the example's (how many steps agree; the largest logit
difference from the bit-exact twin while they do) and printed; the example's goal is judged
against the fastest way of all.

It reads what `generation_loop --out DIR` wrote (model.json, weights.bin, expected.json),
asserts that every way produces the example's tokens (token for token; probabilities within
1e-4), and prints its timings as one JSON object (also written to DIR/torch.json): for each
batch size and way, the median µs per step and tokens per second over --runs timed runs after
a warm-up, timed with CUDA events.

Why the tokens match: every sum is exact (weights on a 2^-10 grid, activations on a 2^-7 grid:
see src/model.rs), so cuBLAS's order gives the example's bits; the activations are the
example's tables, indexed by round-half-to-even (torch.round); the one rounded value,
gi_n + r * gh_n, is one multiply then one add here as there.
"""

import argparse
import datetime
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F

PROB_TOLERANCE = 1e-4


def load(directory, device):
    with open(os.path.join(directory, "model.json")) as f:
        header = json.load(f)
    with open(os.path.join(directory, header["file"]), "rb") as f:
        flat = torch.frombuffer(bytearray(f.read()), dtype=torch.float32)  # little-endian, as written
    weights = {}
    for t in header["tensors"]:
        weights[t["name"]] = flat[t["offset"] : t["offset"] + t["len"]].reshape(t["shape"]).to(device)
    with open(os.path.join(directory, "expected.json")) as f:
        expected = json.load(f)
    return header, weights, expected


class Twin:
    """One batch: static tensors every step reads and writes in place (so a captured step can
    be replayed), finished sequences masked with torch.where."""

    def __init__(self, header, weights, starts, max_len, device):
        self.h = header
        self.w = weights
        self.max_len = max_len
        self.batch = len(starts)
        self.starts = torch.tensor(starts, dtype=torch.long, device=device)
        b, hidden = self.batch, header["hidden"]
        self.tok = self.starts.clone()
        self.hidden = [torch.zeros(b, hidden, device=device) for _ in range(header["layers"])]
        self.done = torch.zeros(b, dtype=torch.bool, device=device)
        self.step_count = torch.zeros(1, dtype=torch.long, device=device)
        self.go_on = torch.ones((), dtype=torch.bool, device=device)
        self.out_tokens = torch.full((b, max_len), -1, dtype=torch.long, device=device)
        self.out_probs = torch.zeros(b, max_len, device=device)
        self.layers = [
            tuple(weights[f"gru.{i}.{name}"] for name in ("w_ih", "b_ih", "w_hh", "b_hh"))
            for i in range(header["layers"])
        ]

    def reset(self):
        self.tok.copy_(self.starts)
        for h in self.hidden:
            h.zero_()
        self.done.zero_()
        self.step_count.zero_()
        self.go_on.fill_(True)
        self.out_tokens.fill_(-1)
        self.out_probs.zero_()

    def lookup(self, table, v):
        half = self.h["table_half"]
        index = torch.clamp(torch.round(v * self.h["table_scale"]), -half, half).long() + half
        return self.w[table][index]

    def gru(self, layer, x, h):
        w_ih, b_ih, w_hh, b_hh = self.layers[layer]
        gi = F.linear(x, w_ih, b_ih)  # exact
        gh = F.linear(h, w_hh, b_hh)  # exact
        hidden = h.shape[1]
        r, z = self.lookup("table.sigmoid", gi[:, : 2 * hidden] + gh[:, : 2 * hidden]).chunk(2, dim=1)
        n = self.lookup("table.tanh", gi[:, 2 * hidden :] + r * gh[:, 2 * hidden :])  # rounded multiply, rounded add
        scale = self.h["act_scale"]
        return torch.round(((1 - z) * n + z * h) * scale) / scale

    def step(self):
        """One step on the device: no host sync, no shape that depends on data."""
        active = ~self.done
        x = self.w["embedding"][self.tok]
        for layer, h in enumerate(self.hidden):
            h.copy_(torch.where(active[:, None], self.gru(layer, x, h), h))
            x = h
        logits = F.linear(x, self.w["out.w"], self.w["out.b"])
        self.last_logits = logits
        probs = torch.softmax(logits, dim=1)
        nxt = torch.argmax(logits, dim=1)  # the first maximal value: lowest index on ties
        p = probs.gather(1, nxt[:, None])
        # A running sequence's step is below max_len; the clamp only keeps finished batches'
        # (masked) writes in bounds.
        column = torch.clamp(self.step_count, max=self.max_len - 1).expand(self.batch)[:, None]
        self.out_tokens.scatter_(1, column, torch.where(active[:, None], nxt[:, None], self.out_tokens.gather(1, column)))
        self.out_probs.scatter_(1, column, torch.where(active[:, None], p, self.out_probs.gather(1, column)))
        self.tok.copy_(torch.where(active, nxt, self.tok))
        stop = (nxt == self.h["end_token"]) | (self.step_count + 1 >= self.max_len)
        self.done |= active & stop
        self.step_count += 1
        self.go_on.copy_(~self.done.all())

    def capture(self):
        """A CUDA graph of one step (warmed up on a side stream first, as PyTorch asks)."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                self.step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.step()
        self.reset()
        return graph

    def generated(self):
        """Each sequence's tokens and probabilities, up to its first unwritten slot."""
        tokens, probs = self.out_tokens.cpu().tolist(), self.out_probs.cpu().tolist()
        out = []
        for row, prow in zip(tokens, probs):
            n = row.index(-1) if -1 in row else len(row)
            out.append((row[:n], prow[:n]))
        return out


class Practitioner:
    """The decoder as a PyTorch user writes it, for one batch: modules holding the example's
    weights, and static tensors every step reads and writes in place (so that one step, or the
    whole decode, can be captured and replayed). A step masks finished sequences; the end token
    finishes a sequence but does not stop the loop, which runs a fixed step count."""

    def __init__(self, header, weights, starts, steps, device):
        hidden, vocab = header["hidden"], header["vocab"]
        self.end_token = header["end_token"]
        self.steps = steps
        self.batch = len(starts)
        self.embedding = torch.nn.Embedding.from_pretrained(weights["embedding"]).to(device)
        self.cells = torch.nn.ModuleList()
        for i in range(header["layers"]):
            cell = torch.nn.GRUCell(hidden, hidden).to(device)
            with torch.no_grad():
                cell.weight_ih.copy_(weights[f"gru.{i}.w_ih"])
                cell.bias_ih.copy_(weights[f"gru.{i}.b_ih"])
                cell.weight_hh.copy_(weights[f"gru.{i}.w_hh"])
                cell.bias_hh.copy_(weights[f"gru.{i}.b_hh"])
            self.cells.append(cell)
        self.out = torch.nn.Linear(hidden, vocab).to(device)
        with torch.no_grad():
            self.out.weight.copy_(weights["out.w"])
            self.out.bias.copy_(weights["out.b"])
        b = self.batch
        self.starts = torch.tensor(starts, dtype=torch.long, device=device)
        self.tok = self.starts.clone()
        self.hidden = [torch.zeros(b, hidden, device=device) for _ in range(header["layers"])]
        self.done = torch.zeros(b, dtype=torch.bool, device=device)
        self.step_count = torch.zeros(1, dtype=torch.long, device=device)
        self.out_tokens = torch.full((b, steps), -1, dtype=torch.long, device=device)
        self.logits = torch.zeros(b, vocab, device=device)

    def reset(self):
        self.tok.copy_(self.starts)
        for h in self.hidden:
            h.zero_()
        self.done.zero_()
        self.step_count.zero_()
        self.out_tokens.fill_(-1)

    def step(self):
        """One step, on the device only (no host sync, no shape that depends on data)."""
        active = ~self.done
        x = self.embedding(self.tok)
        for cell, h in zip(self.cells, self.hidden):
            h.copy_(torch.where(active[:, None], cell(x, h), h))
            x = h
        logits = self.out(x)
        self.logits.copy_(logits)
        nxt = torch.argmax(logits, dim=1)
        column = torch.clamp(self.step_count, max=self.steps - 1).expand(self.batch)[:, None]
        self.out_tokens.scatter_(1, column, torch.where(active, nxt, -1)[:, None])
        self.tok.copy_(torch.where(active, nxt, self.tok))
        self.done |= active & (nxt == self.end_token)
        self.step_count += 1


def warmed_up(step_fn, count=3):
    """Runs `step_fn` a few times on a side stream, as PyTorch asks before a capture (and so
    that torch.compile has compiled it)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(count):
            step_fn()
    torch.cuda.current_stream().wait_stream(side)


def capture(step_fn, times):
    """One CUDA graph of `times` calls of `step_fn` (warmed up first)."""
    warmed_up(step_fn)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(times):
            step_fn()
    return graph


def practitioner_ways(header, weights, starts, steps, device, errors):
    """The practitioner's four ways for one batch: (key, label, model, run), where run() queues
    one whole decode of `steps` steps without a host sync. A model that fails to compile or
    capture is left out, its error appended to `errors` (the script then fails)."""
    eager = Practitioner(header, weights, starts, steps, device)
    compiled = Practitioner(header, weights, starts, steps, device)
    compiled_step = torch.compile(compiled.step, fullgraph=True, dynamic=False)
    ways, steppers = [], {}
    for model, step_fn, name, label in (
        (eager, eager.step, "gru", "PyTorch nn.GRUCell"),
        (compiled, compiled_step, "compiled", "PyTorch nn.GRUCell, torch.compile"),
    ):
        try:
            per_step = capture(step_fn, 1)
            whole = capture(step_fn, steps)
        except Exception as error:  # reported and failing the run, not hidden
            errors.append(f"{label}, batch {len(starts)}: {type(error).__name__}: {error}")
            continue
        model.reset()
        steppers[name] = (model, step_fn)

        def replay_each(graph=per_step):
            for _ in range(steps):
                graph.replay()

        ways.append((f"torch_{name}_step_graphs", f"{label}, CUDA graph per step", model, replay_each))
        ways.append((f"torch_{name}_decode_graph", f"{label}, whole decode in one CUDA graph", model, whole.replay))
    return ways, steppers


def agreement(model, step_fn, twin, expected, batch, steps):
    """How the practitioner's tokens compare with the example's, from a run of `steps` eager
    calls of `step_fn` beside the bit-exact twin: each sequence's agreeing prefix (the shortest
    and the median), the tokens equal, and the largest logit difference from the twin over the
    running sequences whose tokens have all agreed so far (so that both saw the same inputs)."""
    model.reset()
    twin.reset()
    agree = torch.ones(batch, dtype=torch.bool, device=model.done.device)
    max_diff = 0.0
    for _ in range(steps):
        running = agree & ~twin.done
        column = int(model.step_count.item())
        step_fn()
        twin.step()
        if bool(running.any()):
            rows = (model.logits - twin.last_logits).abs().max(dim=1).values[running]
            max_diff = max(max_diff, float(rows.max()))
        agree &= model.out_tokens[:, column] == twin.out_tokens[:, column]
    got = model.out_tokens.cpu().tolist()
    prefixes, equal, total = [], 0, 0
    for b in range(batch):
        want = expected["tokens"][b]
        n = 0
        while n < len(want) and got[b][n] == want[n]:
            n += 1
        prefixes.append(n)
        equal += sum(1 for i, t in enumerate(want) if got[b][i] == t)
        total += len(want)
    return {"exact": equal == total, "steps": steps, "steps_agreeing": min(prefixes),
            "median_prefix": statistics.median(prefixes), "tokens_equal": equal, "tokens": total,
            "max_logit_diff": max_diff}


def timed_run(twin, step_fn):
    twin.reset()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(twin.max_len + 1):
        step_fn()
        if not twin.go_on.item():
            break
    end.record()
    end.synchronize()
    return start.elapsed_time(end), int(twin.step_count.item())


def difference(got, expected, batch):
    for b in range(batch):
        tokens, probs = got[b]
        want_tokens, want_probs = expected["tokens"][b], expected["probs"][b]
        if tokens != want_tokens:
            t = next((i for i, (x, y) in enumerate(zip(tokens, want_tokens)) if x != y), min(len(tokens), len(want_tokens)))
            return f"sequence {b}, step {t}: {tokens[t:t + 3]} want {want_tokens[t:t + 3]} ({len(tokens)} vs {len(want_tokens)} tokens)"
        for t, (p, q) in enumerate(zip(probs, want_probs)):
            if not abs(p - q) <= PROB_TOLERANCE * abs(q):
                return f"sequence {b}, step {t}: probability {p}, want {q}"
    return None


def summary(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": values}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True, help="what generation_loop --out wrote")
    parser.add_argument("--runs", type=int, default=5, help="timed runs after one warm-up")
    args = parser.parse_args()
    device = torch.device("cuda")
    torch.set_grad_enabled(False)  # inference: no autograd graph (torch.compile needs none either)
    torch.backends.cuda.matmul.allow_tf32 = False  # exact either way (few significant bits); plain fp32 says so
    header, weights, expected = load(args.dir, device)
    max_len = expected["max_len"]
    ways = [
        ("torch_eager", "PyTorch eager, .item() per step"),
        ("torch_graph", "PyTorch CUDA graph per step, .item()"),
    ]
    rows, mismatches, agreements, errors = [], [], [], []
    for batch in expected["batches"]:
        twin = Twin(header, weights, expected["starts"][:batch], max_len, device)
        graph = twin.capture()
        steppers = {"torch_eager": twin.step, "torch_graph": graph.replay}
        us = {key: [] for key, _ in ways}
        tps = {key: [] for key, _ in ways}
        want_steps = expected["steps"][str(batch)]
        tokens = sum(len(t) for t in expected["tokens"][:batch])
        for run in range(args.runs + 1):
            for key, _ in ways:
                ms, steps = timed_run(twin, steppers[key])
                problem = difference(twin.generated(), expected, batch)
                if problem is None and steps != want_steps:
                    problem = f"{steps} steps, want {want_steps}"
                if problem is not None:
                    mismatches.append(f"{key}, batch {batch}, run {run}: {problem}")
                if run > 0:
                    us[key].append(ms * 1e3 / max(steps, 1))
                    tps[key].append(tokens / (ms * 1e-3))
        for key, label in ways:
            rows.append({
                "batch": batch, "way": key, "label": label, "steps": want_steps, "tokens": tokens,
                "us_per_step": summary(us[key]), "tokens_per_s": summary(tps[key]),
            })
        prac, steppers_by_model = practitioner_ways(
            header, weights, expected["starts"][:batch], want_steps, device, errors)
        prac_us = {key: [] for key, _, _, _ in prac}
        prac_tps = {key: [] for key, _, _, _ in prac}
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for run in range(args.runs + 1):
            for key, _, model, run_decode in prac:
                model.reset()
                start.record()
                run_decode()
                end.record()
                end.synchronize()
                if int(model.step_count.item()) != want_steps:
                    errors.append(f"{key}, batch {batch}, run {run}: {int(model.step_count.item())} steps, want {want_steps}")
                if run > 0:
                    ms = start.elapsed_time(end)
                    prac_us[key].append(ms * 1e3 / want_steps)
                    prac_tps[key].append(tokens / (ms * 1e-3))
        for key, label, model, _ in prac:
            rows.append({
                "batch": batch, "way": key, "label": label, "steps": want_steps, "tokens": tokens,
                "us_per_step": summary(prac_us[key]), "tokens_per_s": summary(prac_tps[key]),
            })
        for name, (model, step_fn) in steppers_by_model.items():
            found = agreement(model, step_fn, twin, expected, batch, want_steps)
            label = next(label for key, label, m, _ in prac if m is model).split(", CUDA graph")[0]
            agreements.append({"batch": batch, "way": f"torch_{name}", "label": label, **found})
    result = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(device),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "runs": args.runs,
        "tokens_match": not mismatches,
        "mismatches": mismatches[:20],
        "rows": rows,
        "agreement": agreements,
        "errors": errors,
    }
    text = json.dumps(result, indent=1)
    with open(os.path.join(args.dir, "torch.json"), "w") as f:
        f.write(text + "\n")
    print(text)
    for row in rows:
        print(f"# batch {row['batch']:>2} {row['label']:<62} {row['us_per_step']['median']:9.2f} us/step", file=sys.stderr)
    for a in agreements:
        print(f"# batch {a['batch']:>2} {a['label']}: first {a['steps_agreeing']} of {a['steps']} steps agree "
              f"(median sequence {a['median_prefix']}), "
              f"{a['tokens_equal']} of {a['tokens']} tokens equal, largest logit difference {a['max_logit_diff']:.4g}",
              file=sys.stderr)
    for error in errors:
        print(f"torch_twin: {error}", file=sys.stderr)
    if mismatches:
        print(f"torch_twin: {len(mismatches)} runs differ from the example's tokens; first: {mismatches[0]}", file=sys.stderr)
    if mismatches or errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
