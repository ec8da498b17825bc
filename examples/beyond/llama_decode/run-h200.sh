#!/usr/bin/env bash
# Runs llama_decode, then its PyTorch twin right after on the same GPU, and puts both outputs in
# examples/beyond/llama_decode/results/<gpu>-<date>/ (or $OUT): the report (llama_decode.json,
# .md, .csv), the dump the twin reads (dump.json), the twin's figures (torch.json), both logs and
# the chart (llama_decode.png, where the machine has a font).
#
#   bash examples/beyond/llama_decode/run-h200.sh [flags, e.g. --quick]      (RUNS=5, TOKENS=256)
#
# The binary comes from the bundle (`cargo xtask bundle` packed it into .gpu/; `bash .gpu/run
# llama_decode ...`) where there is one, else from `cargo run --release`.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr -cs 'A-Za-z0-9' '-' | sed 's/-$//' | tr 'A-Z' 'a-z')
out=${OUT:-$here/results/${gpu:-gpu}-$(date -u +%Y-%m-%d)}
mkdir -p "$out" && out=$(cd "$out" && pwd)
runs=${RUNS:-5}
tokens=${TOKENS:-256}
args=(--runs "$runs" --out "$out")
case " $* " in *" --quick "*) ;; *) args+=(--tokens "$tokens") ;; esac
status=0
if [ -x "$root/.gpu/run" ] || [ -f "$root/.gpu/run" ]; then
  OUT=$out bash "$root/.gpu/run" llama_decode "${args[@]}" "$@" 2>&1 | tee "$out/llama_decode.log" || status=1
else
  (cd "$root" && cargo run --release -p llama_decode -- "${args[@]}" "$@") 2>&1 | tee "$out/llama_decode.log" || status=1
fi
if [ -f "$out/dump.json" ]; then
  PYTHONUNBUFFERED=1 python3 "$here/torch_twin.py" --dump "$out/dump.json" --runs "$runs" --out "$out/torch.json" \
    > "$out/torch.log" 2> >(tee "$out/torch.err" >&2) || status=1
else
  echo "run-h200: llama_decode wrote no dump.json; the PyTorch twin was not run"
  status=1
fi
# The chart from both outputs (a font is needed; where there is none, draw it later with --chart DIR).
if [ -f "$out/torch.json" ]; then
  if [ -x "$root/.gpu/run" ] || [ -f "$root/.gpu/run" ]; then
    bash "$root/.gpu/run" llama_decode --chart "$out" || echo "run-h200: no chart drawn here; run llama_decode --chart $out where a font is"
  else
    (cd "$root" && cargo run --release -p llama_decode -- --chart "$out") || echo "run-h200: no chart drawn"
  fi
fi
echo "run-h200: outputs in $out"
exit $status
