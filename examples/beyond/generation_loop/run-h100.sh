#!/usr/bin/env bash
# Runs generation_loop and then its PyTorch twin on the GPU machine, from the bundle that
# `cargo xtask bundle -p generation_loop` packed into .gpu/ at the repository root (the GPU
# machine has python3 with PyTorch but no Rust). Everything lands in $OUT (default .gpu/out):
# weights.bin, model.json, expected.json (what the twin reads), generation.json (the example's
# report), torch.json (the twin's figures) and the example's log.
#
#   bash examples/beyond/generation_loop/run-h100.sh [example flags, e.g. --quick]     (RUNS=21 by default)
#
# Then, here: copy generation.json and torch.json into examples/beyond/generation_loop/results/ and
# run `cargo run -p generation_loop -- --redraw examples/beyond/generation_loop/results`.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${OUT:-$root/.gpu/out}
mkdir -p "$out" && out=$(cd "$out" && pwd)
runs=${RUNS:-21}
status=0
OUT=$out bash "$root/.gpu/run" generation_loop --out "$out" --runs "$runs" "$@" || status=1
if [ -f "$out/expected.json" ]; then
  PYTHONUNBUFFERED=1 python3 "$here/torch_twin.py" --dir "$out" --runs "$runs" > /dev/null || status=1
else
  echo "run-h100: the example wrote no expected.json; the PyTorch twin was not run"
  status=1
fi
exit $status
